"""JSON records to typed frames, from a declared :class:`~toolkit._core.schemas.Schema`.

The builder is columnar: records (or whole pages of records) are appended column by column, so a
large result never exists as a list of per-row dicts next to the frame, and every column gets the
dtype its schema declares (UTC date-times, categories that keep undocumented values, ``Int64``,
``boolean``, ``string``, masked secrets).
"""

from __future__ import annotations

import datetime as dt
import logging
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from toolkit._core.provenance import provenance_of
from toolkit._core.schemas import Col, Schema
from toolkit._core.secretarray import secret_array

if TYPE_CHECKING:
    import geopandas as gpd

logger = logging.getLogger(__name__)

__all__ = ["FrameBuilder", "as_dict", "as_list", "as_text", "build_frame", "category_dtype",
           "columns_frame", "convert_column", "empty_frame", "getter", "to_geoframe"]

_INTEGER = re.compile(r"-?[0-9]+")


def as_list(value: Any) -> list[Any]:
    """``value`` when it is a JSON array, else an empty list (a hostile or missing field)."""
    return value if isinstance(value, list) else []


def as_dict(value: Any) -> dict[str, Any]:
    """``value`` when it is a JSON object, else an empty dict (a hostile or missing field)."""
    return value if isinstance(value, dict) else {}


def getter(path: tuple[str, ...]) -> Callable[[Any], Any]:
    """Make a fast accessor for a nested field; missing or non-dict steps give ``None``."""
    if len(path) == 1:
        (key,) = path

        def get1(record: Any) -> Any:
            return record.get(key) if isinstance(record, dict) else None

        return get1

    def get(record: Any) -> Any:
        for key in path:
            if not isinstance(record, dict):
                return None
            record = record.get(key)
        return record

    return get


def as_text(value: Any) -> Any:
    """Write a JSON value as text.

    Strings as they are, objects and arrays as compact JSON, numbers and booleans through ``str``,
    ``None`` and NaN as ``None``.
    """
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, float) and np.isnan(value):
        return None
    if isinstance(value, dict | list):
        import orjson

        try:
            return orjson.dumps(value).decode()
        except TypeError:  # integers beyond 64 bits, keys that are not strings...
            import json

            return json.dumps(value, default=str)
    return str(value)


def _to_datetime(values: Sequence[Any]) -> pd.Series:
    clean = [v if isinstance(v, str | dt.datetime | pd.Timestamp) else None for v in values]
    out = pd.to_datetime(pd.Series(clean, dtype=object), utc=True, errors="coerce",
                         format="ISO8601")
    if out.dtype != "datetime64[ns, UTC]":
        # dates outside the nanosecond range (years before 1677 or after 2262) are missing
        low, high = pd.Timestamp.min.tz_localize("UTC"), pd.Timestamp.max.tz_localize("UTC")
        out = out.where(out.isna() | ((out >= low) & (out <= high)))
    return out.astype("datetime64[ns, UTC]")


def _to_numeric(values: Sequence[Any]) -> pd.Series:
    clean = [v if isinstance(v, int | float | str) and not isinstance(v, bool)
             and not (isinstance(v, int) and abs(v) >= 2**1023) else None for v in values]
    return pd.to_numeric(pd.Series(clean, dtype=object), errors="coerce")


def category_dtype(col: Col, texts: Iterable[Any]) -> pd.CategoricalDtype:
    """Build the categorical dtype of a column holding ``texts``.

    The documented categories first (in their documented order, which is the rank when the column is
    ordered), then every other value seen, sorted, so that undocumented values are kept rather than
    lost.
    """
    documented = list(col.categories)
    known = set(documented)
    extra = sorted({t for t in texts if t is not None and t not in known})
    if extra and documented:
        logger.debug("column %s: values outside the documented set kept: %s", col.name, extra)
    return pd.CategoricalDtype(documented + extra, ordered=col.ordered)


def convert_column(values: Sequence[Any], col: Col) -> pd.api.extensions.ExtensionArray | Any:
    """Turn raw JSON values into the array the column's kind declares."""
    kind = col.kind
    if kind == "string":
        return pd.array([as_text(v) for v in values], dtype="string")
    if kind == "category":
        text = [as_text(v) for v in values]
        return pd.Categorical(text, dtype=category_dtype(col, text))
    if kind == "datetime":
        return _to_datetime(values).array
    if kind == "Int64":
        nums = _to_numeric(values).astype("float64").to_numpy(copy=True)
        nums[(nums != np.floor(nums)) | (nums >= 2.0**63) | (nums < -(2.0**63))] = np.nan
        return pd.array(nums, dtype="Float64").astype("Int64")
    if kind == "exactint":
        out: list[int | None] = []
        for v in values:
            if isinstance(v, bool) or v is None:
                out.append(None)
            elif isinstance(v, int):
                out.append(v)
            elif isinstance(v, str) and _INTEGER.fullmatch(v):
                out.append(int(v))
            else:
                out.append(None)
        # beyond 64 bits (either way) an id cannot be held exactly: missing
        out = [v if v is None or -(2**63) <= v < 2**64 else None for v in out]
        big = any(v is not None and v >= 2**63 for v in out)
        if big and any(v is not None and v < 0 for v in out):
            out = [v if v is None or v >= 0 else None for v in out]
        return pd.array(out, dtype="UInt64" if big else "Int64")
    if kind == "float":
        return _to_numeric(values).astype("float64").to_numpy()
    if kind == "boolean":
        return pd.array([v if isinstance(v, bool) else None for v in values], dtype="boolean")
    if kind == "timedelta":
        seconds = _to_numeric(values).astype("float64")
        seconds = seconds.where(seconds.abs() < 9.2e9)  # beyond ~290 years: missing
        return pd.to_timedelta(seconds, unit="s").astype("timedelta64[ns]").array
    if kind == "secret":
        return secret_array([v if isinstance(v, str | bytes) else None for v in values],
                            col.secret_label)
    if kind in ("object", "list"):
        arr = np.empty(len(values), dtype=object)
        if kind == "list":
            arr[:] = [v if isinstance(v, list) else ([v] if v is not None else None)
                      for v in values]
        else:
            arr[:] = list(values)
        return arr
    if kind == "geometry":
        arr = np.empty(len(values), dtype=object)
        arr[:] = list(values)
        return arr
    raise ValueError(f"unknown column kind {kind!r}")


def columns_frame(data: Mapping[str, Any], rows: int) -> pd.DataFrame:
    """Make a frame of converted columns, keeping an ``object`` column ``object``.

    pandas would infer ``str`` for one that holds only strings (a nested field a service sent as
    text in every record).
    """
    index = pd.RangeIndex(rows)
    return pd.DataFrame({name: pd.Series(values, index=index, dtype=object, copy=False)
                         if isinstance(values, np.ndarray) and values.dtype == object else values
                         for name, values in data.items()}, index=index, copy=False)


class FrameBuilder:
    """Accumulate records column by column and build the typed frame once.

    Parameters
    ----------
    schema : Schema
        The declared columns.
    columns : sequence of str, optional
        Keep only these schema columns (``$select``); unknown names get a ``string`` column.
    flat : bool
        Records are already keyed by column name (no nested lookup).
    """

    def __init__(self, schema: Schema, columns: Sequence[str] | None = None, *,
                 flat: bool = False) -> None:
        self.schema = schema
        if columns is None:
            cols = list(schema.columns)
        else:
            by_name = {c.name.lower(): c for c in schema.columns}
            cols = [by_name.get(name.lower(), Col(name, "string")) for name in columns]
        self.columns = cols
        self._getters = [getter((c.name,)) if flat else getter(c.source) for c in cols]
        self._data: list[list[Any]] = [[] for _ in cols]
        self.rows = 0

    def add(self, records: Iterable[Mapping[str, Any]]) -> None:
        """Append records (dicts in the service's shape)."""
        records = records if isinstance(records, list) else list(records)
        for store, get in zip(self._data, self._getters, strict=True):
            store.extend(map(get, records))
        self.rows += len(records)

    def add_columns(self, columns: Mapping[str, Sequence[Any]]) -> None:
        """Append already columnar data (name -> values); absent columns get nulls."""
        n = len(next(iter(columns.values()))) if columns else 0
        for col, store in zip(self.columns, self._data, strict=True):
            values = columns.get(col.name)
            store.extend(values if values is not None else [None] * n)
        self.rows += n

    def build(self, attrs: Mapping[str, Any] | None = None) -> pd.DataFrame:
        """Build the typed frame of everything added."""
        data = {c.name: convert_column(v, c) for c, v in zip(self.columns, self._data,
                                                             strict=True)}
        df = columns_frame(data, self.rows)
        if attrs:
            df.attrs.update(attrs)
        return df


def build_frame(records: Iterable[Mapping[str, Any]], schema: Schema,
                attrs: Mapping[str, Any] | None = None,
                columns: Sequence[str] | None = None, *, flat: bool = False) -> pd.DataFrame:
    """Turn records into the schema's typed frame.

    Records are in the service's shape (or keyed by column name, with ``flat``).
    """
    builder = FrameBuilder(schema, columns, flat=flat)
    builder.add(records)
    return builder.build(attrs)


def empty_frame(schema: Schema, attrs: Mapping[str, Any] | None = None) -> pd.DataFrame:
    """Build the schema's frame with no rows (every column, every dtype)."""
    return build_frame([], schema, attrs)


def to_geoframe(df: pd.DataFrame, geometry: str = "geometry") -> gpd.GeoDataFrame:
    """Wrap a frame whose ``geometry`` column holds shapely objects as an EPSG:4326 GeoDataFrame."""
    import geopandas as gpd

    attrs = provenance_of(df)
    gdf = gpd.GeoDataFrame(df, geometry=geometry, crs="EPSG:4326")
    gdf.attrs.update(attrs)
    return gdf
