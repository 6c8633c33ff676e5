"""A frame builder for large paged results: each page goes straight into typed columns.

:class:`InterningBuilder` is a drop-in for :class:`~toolkit._core.frames.FrameBuilder` (same
``add``/``build``/``rows``, same dtypes) made for results of a million records: values that repeat
(categories, lists, booleans) are interned page by page, so each row costs one ``int32`` code per
column and each distinct value is kept once; date-times are parsed page by page; fields that
repeat together (those of one resource, those of one assignment and definition) can be interned
as one tuple, one lookup instead of one per column. A page's dicts can be freed as soon as
:meth:`InterningBuilder.add` returns, so the records never exist all at once.

Records may be dicts (any parser) or the typed structs of :func:`page_decoder`, which decodes a
page straight from its bytes into one small object per record (msgspec): about half the time of
parsing into dicts, and less memory. Category fields of few values are decoded against the
values seen on the pages before, so that each value is one shared string (neither allocated
nor hashed again for each record). A page whose fields have unexpected types is parsed the
general way instead, so the frame never depends on which path a page took.

The categories of the finished columns follow :func:`~toolkit._core.frames.category_dtype`, the
same rule as every other frame.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from operator import attrgetter, itemgetter
from typing import Any, Literal

import msgspec
import numpy as np
import pandas as pd

from toolkit._core.frames import as_text, category_dtype, columns_frame, convert_column
from toolkit._core.schemas import Col

logger = logging.getLogger(__name__)

__all__ = ["InterningBuilder", "page_decoder"]

_INTERNED = ("category", "list", "boolean")


class _Interner(dict[Any, int]):
    """value -> code, assigning the next code to a value not seen yet (``None`` is -1)."""

    __slots__ = ()

    def __init__(self) -> None:
        super().__init__({None: -1})

    def __missing__(self, key: Any) -> int:
        code = self[key] = len(self) - 1
        return code

    def values_in_order(self) -> list[Any]:
        """Return the values, code 0 first (``None`` left out)."""
        return list(self)[1:]


def _has(name: str) -> Any:
    """``record -> name in record`` (for a struct: the field is not null)."""

    def has(record: Any) -> bool:
        if isinstance(record, dict):
            return name in record
        return getattr(record, name, None) is not None

    return has


def _get(record: Any, name: str) -> Any:
    if isinstance(record, dict):
        return record.get(name)
    return getattr(record, name, None)


#: The type a field is decoded as, by column kind (anything else is taken as it comes); lists
#: of text come as tuples, which can be interned as they are.
_FIELD_TYPES: dict[str, Any] = {"category": str | None, "string": str | None,
                                "datetime": str | None, "boolean": bool | None,
                                "list": tuple[str, ...] | None}

#: A category field is decoded against the values seen so far while it holds at most this many
#: distinct values: msgspec then hands back the same string object for a value each time, so
#: nothing is allocated and each value's hash is computed once.
LITERAL_MAX = 256
#: ... and while at most this many pages have brought values not seen before (each such page is
#: decoded a second time, as plain text, to learn them).
LITERAL_MISSES = 8

_LITERAL: Any = Literal  # subscripted with values known only at run time


class _PageDecoder:
    """Decode a page's bytes into its next link and typed records, learning category values.

    ``content -> ({next_key: link}, records)``, or ``None`` for a page that does not fit the
    declared types; see :func:`page_decoder`. Safe to call from several threads at once.
    """

    def __init__(self, columns: Sequence[Col], items_key: str, next_key: str) -> None:
        self._columns = list(columns)
        self._items_key = items_key
        self._next_key = next_key
        self._plain = self._decoder({})
        self._typed: msgspec.json.Decoder[Any] | None = None
        #: category field -> the values seen (``None`` until the first page is learnt)
        self._known: dict[str, set[str]] | None = None
        self._misses: dict[str, int] = {}
        self._lock = threading.Lock()

    def _decoder(self, literals: Mapping[str, set[str]]) -> msgspec.json.Decoder[Any]:
        fields = []
        for c in self._columns:
            values = literals.get(c.name)
            kind = (_LITERAL[tuple(sorted(values))] | None if values
                    else _FIELD_TYPES.get(c.kind, Any))
            fields.append((c.name, kind, None))
        record = msgspec.defstruct("Record", fields, kw_only=True, gc=False)
        envelope = msgspec.defstruct(
            "Envelope", [("items", list[record] | None,  # type: ignore[valid-type]
                          msgspec.field(default=None, name=self._items_key)),
                         ("link", Any, msgspec.field(default=None, name=self._next_key))],
            kw_only=True)
        return msgspec.json.Decoder(envelope)

    def __call__(self, content: bytes) -> tuple[dict[str, Any], list[Any]] | None:
        typed = self._typed
        if typed is not None:
            try:
                return self._split(typed.decode(content))
            except msgspec.ValidationError:
                pass  # a value not seen before, or a type that does not fit: see below
            except msgspec.DecodeError:
                return None
        try:
            page = self._plain.decode(content)
        except (msgspec.DecodeError, msgspec.ValidationError):
            return None
        if page.items:
            self._learn(page.items, typed)
        return self._split(page)

    def _split(self, page: Any) -> tuple[dict[str, Any], list[Any]]:
        items = page.items
        return {self._next_key: page.link}, items if items is not None else []

    def _learn(self, items: list[Any], failed: msgspec.json.Decoder[Any] | None) -> None:
        """Learn the category values of a page decoded as plain text.

        The next pages are decoded against the values known; a field holding too many values,
        or bringing new ones on too many pages, is decoded as plain text for good.
        """
        with self._lock:
            known = self._known
            if known is None:
                known = self._known = {c.name: set() for c in self._columns
                                       if c.kind == "category"}
                self._misses = dict.fromkeys(known, 0)
            changed = False
            for name in list(known):
                values = set(map(attrgetter(name), items))
                values.discard(None)
                if values <= known[name]:
                    continue
                changed = True
                known[name] |= values
                if self._typed is not None:
                    self._misses[name] += 1
                if len(known[name]) > LITERAL_MAX or self._misses[name] > LITERAL_MISSES:
                    del known[name]
            if failed is not None and failed is self._typed and not changed:
                # the typed decoder failed on a page that brought nothing new: never again
                self._known = {}
                self._typed = None
                return
            if changed or (self._typed is None and known):
                self._typed = self._decoder(known) if known else None


def page_decoder(columns: Sequence[Col], items_key: str, next_key: str
                 ) -> Callable[[bytes], tuple[dict[str, Any], list[Any]] | None]:
    """Make a decoder of a page's bytes into its next link and typed records.

    Category fields that hold few distinct values are decoded against the values seen on the
    pages before (as ``Literal`` types), so that each value is one shared string object,
    neither allocated nor hashed again for each record; a page that brings a value not seen
    before is decoded a second time as plain text, and its values are learnt. The records'
    values are the same either way.

    Parameters
    ----------
    columns : sequence of Col
        The record fields to keep (others are skipped while decoding).
    items_key, next_key : str
        Where the envelope holds the records and the next link.

    Returns
    -------
    callable
        ``content -> ({next_key: link}, records)``, or ``None`` when the page does not fit the
        declared types (then parse it the general way). It may be called from several threads
        at once.
    """
    return _PageDecoder(columns, items_key, next_key)


def _list_key(value: Any) -> Any:
    return tuple(value) if value.__class__ is list else value


def _frozen(value: Any) -> Any:
    """Make a value a dict key can be: lists become tuples (all the way down), objects text."""
    if isinstance(value, list):
        return tuple(_frozen(v) for v in value)
    return as_text(value) if isinstance(value, dict) else value


def _hashable(values: Sequence[Any]) -> list[Any]:
    return [_frozen(v) for v in values]


class _Group:
    """Fields that repeat together, interned as one tuple per row."""

    def __init__(self, names: tuple[str, ...]) -> None:
        self.names = names
        self.parts: list[np.ndarray] = []
        self._full = itemgetter(*names)
        self._attrs = attrgetter(*names)
        self._interner = _Interner()

    @property
    def tuples(self) -> list[tuple[Any, ...]]:
        """The distinct tuples, in code order."""
        return self._interner.values_in_order()

    def add(self, records: list[Any]) -> None:
        """Append the codes of one page."""
        lookup = self._interner.__getitem__
        n = len(records)
        full = self._full if isinstance(records[0], dict) else self._attrs
        try:
            codes = np.fromiter(map(lookup, map(full, records)), np.int32, n)
        except (KeyError, TypeError, AttributeError):
            rows = [tuple(_hashable([_get(r, c) for c in self.names])) for r in records]
            codes = np.fromiter(map(lookup, rows), np.int32, n)
        self.parts.append(codes)


def _remap(into: _Interner, codes_of: _Interner) -> np.ndarray:
    """Translate ``codes_of``'s codes into ``into``'s (values not in ``into`` yet are added).

    The result is indexed by a code, -1 (null) included.
    """
    return np.array([into[k] for k in codes_of.values_in_order()] + [-1], dtype=np.int32)


def _categorical(values: list[Any], codes: np.ndarray, col: Col) -> pd.Categorical:
    """Rows whose code is ``i`` hold ``values[i]`` (-1: null), as the column's categorical."""
    texts = [as_text(list(v) if isinstance(v, tuple) else v) for v in values]
    dtype = category_dtype(col, texts)
    pos = {c: i for i, c in enumerate(dtype.categories)}
    remap = np.array([pos[t] if t is not None else -1 for t in texts] + [-1], dtype=np.int32)
    return pd.Categorical.from_codes(remap[codes], dtype=dtype)


_LAST = itemgetter(-1)
_BUT_LAST = itemgetter(slice(None, -1))


def _fast_datetimes(values: list[Any], col: Col) -> np.ndarray:
    """Convert ISO 8601 UTC strings (``...Z``) to datetime64[ns] with numpy's C parser.

    Anything else goes through the general converter.
    """
    try:
        if values and set(map(type, values)) == {str} \
                and list(map(_LAST, values)).count("Z") == len(values):
            return np.array(list(map(_BUT_LAST, values)), dtype="datetime64[ns]")
    except (ValueError, IndexError):  # (an empty string has no last character)
        pass
    converted = pd.DatetimeIndex(convert_column(values, col))
    return np.asarray(converted.tz_convert("UTC").tz_localize(None), dtype="datetime64[ns]")


class InterningBuilder:
    """Pages of records in, one typed frame out; a drop-in for FrameBuilder.

    Parameters
    ----------
    columns : sequence of Col
        The columns of the frame, in order (records are keyed by the column names).
    groups : sequence of sequence of str, optional
        Category columns whose values repeat together; each group is interned as one tuple.
    """

    def __init__(self, columns: Sequence[Col], groups: Sequence[Sequence[str]] = ()) -> None:
        self.columns = list(columns)
        self.rows = 0
        kinds = {c.name: c.kind for c in self.columns}
        self._groups: list[_Group] = []
        grouped: set[str] = set()
        for names in groups:
            kept = tuple(n for n in names if kinds.get(n) == "category")
            if len(kept) > 1:
                self._groups.append(_Group(kept))
                grouped.update(kept)
        self._grouped = grouped
        self._interned = {c.name: _Interner() for c in self.columns
                          if c.kind in _INTERNED and c.name not in grouped}
        self._parts: dict[str, list[Any]] = {c.name: [] for c in self.columns}
        self._getters = {c.name: itemgetter(c.name) for c in self.columns}
        self._attrs = {c.name: attrgetter(c.name) for c in self.columns}

    def _values(self, records: list[Any], name: str) -> Iterator[Any]:
        """Return the column's values (fast when every record has the field)."""
        get = self._getters[name] if isinstance(records[0], dict) else self._attrs[name]
        return map(get, records)

    @staticmethod
    def _safe_values(records: list[Any], name: str) -> list[Any]:
        return [_get(r, name) for r in records]

    def add(self, records: Sequence[Any]) -> None:
        """Append one page of records (dicts in the service's shape)."""
        records = records if isinstance(records, list) else list(records)
        n = len(records)
        if not n:
            return
        for group in self._groups:
            group.add(records)
        for col in self.columns:
            name = col.name
            if name in self._grouped:
                continue
            interner = self._interned.get(name)
            if interner is not None:
                self._parts[name].append(self._codes(records, col, interner))
                continue
            if col.kind in ("object", "list") and not self._sent(records, name):
                self._parts[name].append(np.full(n, None, dtype=object))  # not sent
                continue
            try:
                values = list(self._values(records, name))
            except (KeyError, TypeError, AttributeError):
                values = self._safe_values(records, name)
            if col.kind == "datetime":
                self._parts[name].append(_fast_datetimes(values, col))
            else:
                self._parts[name].append(convert_column(values, col))
        self.rows += n

    def _sent(self, records: list[Any], name: str) -> bool:
        """Whether any record holds the field (for structs: not null)."""
        if isinstance(records[0], dict):
            return any(map(_has(name), records))
        try:
            return list(map(self._attrs[name], records)).count(None) != len(records)
        except AttributeError:
            return any(map(_has(name), records))

    def _codes(self, records: list[Any], col: Col, interner: _Interner) -> np.ndarray:
        lookup = interner.__getitem__
        n = len(records)
        try:
            values_it = self._values(records, col.name)
            if col.kind == "list" and isinstance(records[0], dict):  # (typed: tuples)
                values_it = map(_list_key, values_it)
            return np.fromiter(map(lookup, values_it), np.int32, n)
        except (KeyError, TypeError, AttributeError):
            values = self._safe_values(records, col.name)
            try:
                return np.fromiter(map(lookup, values), np.int32, n)
            except TypeError:  # lists or objects: intern a hashable form
                return np.fromiter(map(lookup, _hashable(values)), np.int32, n)

    def absorb(self, other: InterningBuilder) -> None:
        """Append every row of ``other`` (a builder of the same columns) after this one's rows.

        It is as if its pages had been added here; ``other`` is left empty.

        Only codes are translated (one lookup per distinct value of ``other``), so joining the
        builders of several chains costs far less than building a frame of each and joining
        the frames.
        """
        if [c.name for c in other.columns] != [c.name for c in self.columns] \
                or [g.names for g in other._groups] != [g.names for g in self._groups]:
            raise ValueError("absorb: the builders hold different columns")
        for mine, theirs in zip(self._groups, other._groups, strict=True):
            remap = _remap(mine._interner, theirs._interner)
            mine.parts.extend(remap[codes] for codes in theirs.parts)
            theirs.parts = []
        for col in self.columns:
            name = col.name
            interner = self._interned.get(name)
            if interner is not None:
                remap = _remap(interner, other._interned[name])
                self._parts[name].extend(remap[codes] for codes in other._parts[name])
            else:
                self._parts[name].extend(other._parts[name])
            other._parts[name] = []
        self.rows += other.rows
        other.rows = 0

    def _finish(self, col: Col) -> Any:
        parts = self._parts[col.name]
        interner = self._interned.get(col.name)
        if interner is not None:
            codes = np.concatenate(parts) if parts else np.empty(0, np.int32)
            keys = interner.values_in_order()
            if col.kind == "list":
                shared = np.empty(len(keys) + 1, dtype=object)
                shared[:-1] = [list(k) if isinstance(k, tuple) else
                               ([k] if k is not None else None) for k in keys]
                shared[-1] = None
                return shared[codes]
            if col.kind == "boolean":
                truth = np.array([k is True for k in keys] + [False])
                known = np.array([isinstance(k, bool) for k in keys] + [False])
                return pd.arrays.BooleanArray(truth[codes], ~known[codes])
            return _categorical(keys, codes, col)
        for group in self._groups:
            if col.name in group.names:
                j = group.names.index(col.name)
                codes = np.concatenate(group.parts) if group.parts else np.empty(0, np.int32)
                return _categorical([t[j] for t in group.tuples], codes, col)
        if not parts:
            return convert_column([], col)
        if isinstance(parts[0], np.ndarray) and parts[0].dtype == object:
            return np.concatenate(parts)
        if col.kind == "datetime":
            return pd.DatetimeIndex(np.concatenate(parts)).tz_localize("UTC").array
        if len(parts) == 1:
            return parts[0]
        return pd.concat([pd.Series(p, copy=False) for p in parts], ignore_index=True).array

    def build(self, attrs: Mapping[str, Any] | None = None) -> pd.DataFrame:
        """Build the typed frame of every page added."""
        data = {}
        for col in self.columns:
            data[col.name] = self._finish(col)
            self._parts[col.name] = []
        df = columns_frame(data, self.rows)
        if attrs:
            df.attrs.update(attrs)
        return df
