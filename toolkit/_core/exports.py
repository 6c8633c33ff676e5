"""Parquet exports that keep a frame's dtypes, its provenance and its secrets masked.

:func:`to_parquet` writes any frame the toolkit returns; a GeoDataFrame becomes GeoParquet, every
geometry column included (incidents have two). :func:`read_parquet` reads it back with the same
dtypes: categories (with their order and every category), UTC date-times, ``Int64``,
``boolean``, strings, durations, and object columns holding lists, nested objects or values of
mixed types (stored as JSON text, read back as the same lists, dicts and scalars).
``df.attrs`` travels in the file's metadata.

Columns holding :class:`~toolkit._core.secrets.Secret` values are written as the mask unless the
caller passes ``reveal=True``, the explicit step; a revealed column is read back as a ``secret``
column again, so it is still masked on screen (a masked one is read back as the mask, as text).
A plain ``df.to_parquet()`` writes the mask too (:mod:`toolkit._core.secretarray`).

Needs pyarrow (``pip install "cloudops-frames[parquet]"``).
"""

from __future__ import annotations

import io
import logging
import os
from collections.abc import Mapping
from datetime import date, datetime, timedelta
from typing import Any

import numpy as np
import orjson
import pandas as pd

from toolkit._core.errors import RevealedSecretsWarning, ValidationError, warn_user
from toolkit._core.secretarray import SecretDtype, secret_array
from toolkit._core.secrets import MASK, Secret, open_private

logger = logging.getLogger(__name__)

__all__ = ["read_parquet", "to_parquet"]

_META_KEY = b"toolkit"
_FORMAT = 1


def _pyarrow() -> Any:
    try:
        import pyarrow as pa
        import pyarrow.parquet
    except ImportError as err:  # pragma: no cover - depends on the environment
        raise ImportError(
            'Parquet exports need pyarrow: pip install "cloudops-frames[parquet]"') from err
    return pa


def _json_default(value: Any) -> Any:
    if isinstance(value, pd.Timestamp | datetime | date):
        return value.isoformat()
    if isinstance(value, pd.Timedelta | timedelta):
        return pd.Timedelta(value).isoformat()
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, Secret):
        return MASK
    if value is pd.NA or value is pd.NaT:
        return None
    raise TypeError(f"cannot write a {type(value).__name__} to Parquet")


def _kind(series: pd.Series) -> str | None:
    """``secret``, ``json`` or ``None`` (written as it is) for a column."""
    if isinstance(series.dtype, SecretDtype):
        return "secret"
    if series.dtype != object:
        return None
    values = [v for v in series if v is not None and not (isinstance(v, float) and v != v)]
    if any(isinstance(v, Secret) for v in values):
        return "secret"
    if any(not isinstance(v, str) for v in values):
        return "json"  # lists, nested objects, or values of mixed types (as the service sent)
    return None


def _plain(series: pd.Series, reveal: bool) -> pd.Series:
    def one(v: Any) -> Any:
        if isinstance(v, Secret):
            value = v.reveal() if reveal else MASK
            return value.decode("utf-8") if isinstance(value, bytes) else value
        return v
    return series.map(one).astype(object)


def _json(series: pd.Series) -> pd.Series:
    def one(v: Any) -> Any:
        if v is None or (isinstance(v, float) and v != v):
            return None
        return orjson.dumps(v, default=_json_default,
                            option=orjson.OPT_SERIALIZE_NUMPY).decode("utf-8")
    return series.map(one).astype(object)


def to_parquet(df: pd.DataFrame, path: str | os.PathLike[str], *, reveal: bool = False) -> None:
    """Write a toolkit frame to a Parquet file (GeoParquet for a GeoDataFrame).

    Parameters
    ----------
    df : pandas.DataFrame or geopandas.GeoDataFrame
        Any frame the toolkit returns (or one derived from it).
    path : str or path-like
        The file to write (replaced if it exists).
    reveal : bool
        ``False`` (the default) writes secret columns as the mask ``••••••••``; ``True`` writes
        the revealed values: the file then holds credentials, is made readable by its owner
        only (mode 0600) and a :class:`~toolkit.RevealedSecretsWarning` says so.

    Raises
    ------
    ValidationError
        ``df`` is not a DataFrame, or ``reveal`` is not a bool.
    ImportError
        pyarrow is not installed.
    """
    if not isinstance(df, pd.DataFrame):
        raise ValidationError("df", type(df).__name__, "must be a pandas DataFrame")
    if not isinstance(reveal, bool):
        raise ValidationError("reveal", reveal, "must be True or False")
    pa = _pyarrow()
    import pyarrow.parquet as pq

    out = df.copy()
    kinds: dict[str, str] = {}
    for name in out.columns:
        kind = _kind(out[name])
        if kind == "secret":
            out[name] = _plain(out[name], reveal)
        elif kind == "json":
            out[name] = _json(out[name])
        if kind:
            kinds[str(name)] = kind
    categories = {str(name): {"categories": out[name].cat.categories.tolist(),
                              "ordered": bool(out[name].cat.ordered)}
                  for name in out.columns if isinstance(out[name].dtype, pd.CategoricalDtype)}
    meta = {"format": _FORMAT, "columns": kinds, "categories": categories,
            "revealed": reveal and "secret" in kinds.values(), "attrs": df.attrs}
    out.attrs = {}
    target = os.fspath(path)
    if _is_geo(out):
        # geopandas makes the GeoParquet metadata (every geometry column); ours is added after
        buffer = io.BytesIO()
        out.to_parquet(buffer, index=None)
        table = pq.read_table(pa.BufferReader(buffer.getvalue()))
    else:
        table = pa.Table.from_pandas(out, preserve_index=None)
    metadata = dict(table.schema.metadata or {})
    metadata[_META_KEY] = orjson.dumps(meta, default=_json_default,
                                       option=orjson.OPT_SERIALIZE_NUMPY)
    table = table.replace_schema_metadata(metadata)
    if meta["revealed"]:  # credentials in clear: readable by the owner only, as a kubeconfig
        with open_private(target) as handle:
            pq.write_table(table, handle)
    else:
        pq.write_table(table, target)
    if meta["revealed"]:
        columns = ", ".join(k for k, v in kinds.items() if v == "secret")
        logger.info("to_parquet: %s holds revealed secret values (%s)", target, columns)
        warn_user(f"to_parquet: {target} holds secret values in clear ({columns}); it was "
                  "written readable by its owner only: keep it as you keep those credentials",
                  RevealedSecretsWarning)


def _is_geo(df: pd.DataFrame) -> bool:
    try:
        import geopandas as gpd
    except ImportError:  # pragma: no cover
        return False
    return isinstance(df, gpd.GeoDataFrame)


def read_parquet(path: str | os.PathLike[str]) -> pd.DataFrame:
    """Read a file written by :func:`to_parquet` back into the frame it was.

    Returns
    -------
    pandas.DataFrame or geopandas.GeoDataFrame
        The columns and dtypes written, ``attrs`` restored; list and nested-object columns as
        lists and dicts; secret columns as ``Secret`` values when they were revealed, else as the
        mask text.
    """
    _pyarrow()
    import pyarrow.parquet as pq

    source = os.fspath(path)
    metadata = pq.read_schema(source).metadata or {}
    meta: Mapping[str, Any] = orjson.loads(metadata[_META_KEY]) if _META_KEY in metadata else {}
    if b"geo" in metadata:
        import geopandas as gpd

        df = gpd.read_parquet(source)
    else:
        df = pq.read_table(source).to_pandas()
    for name, kind in (meta.get("columns") or {}).items():
        if name not in df.columns:
            continue
        if kind == "json":
            df[name] = pd.Series([orjson.loads(v) if isinstance(v, str) else None
                                  for v in df[name]], index=df.index, dtype=object)
        elif kind == "secret" and meta.get("revealed"):
            df[name] = pd.Series(secret_array([v if isinstance(v, str) else None
                                               for v in df[name]], name), index=df.index)
        elif kind == "secret":  # the mask, as text: nothing to reveal
            df[name] = pd.Series([v if isinstance(v, str) else None for v in df[name]],
                                 index=df.index, dtype=object)
    for name, spec in (meta.get("categories") or {}).items():
        # every category and the order, also for categories no row uses (and empty frames)
        if name in df.columns:
            dtype = pd.CategoricalDtype(spec["categories"], ordered=spec["ordered"])
            if df[name].dtype != dtype:
                df[name] = df[name].astype(object).astype(dtype)
    df.attrs = dict(meta.get("attrs") or {})
    return df
