"""The OData query options policy insights accepts.

They are ``$filter``, ``$apply``, ``$orderby`` and ``$select``.

Expressions are evaluated column-wise over a :class:`Table` (pandas Series per column, computed on
demand), so a query over a million records never builds a million dicts.

``$filter``: comparisons ``eq ne gt ge lt le`` between a column and a literal (or two columns),
``and``, ``or``, ``not``, parentheses, and ``'value' in Column`` for a column of collections (the
value is one of its items: ``'group1' IN PolicyDefinitionGroupNames``, as the service's summary
links write it). Literals: quoted strings (``''`` escapes a quote), ``true``,
``false``, ``null``, numbers, and date-times (``2019-10-05T18:00:00Z`` or
``datetime'2019-10-05T18:00:00Z'``). String comparisons ignore case, as resource ids and names do.
Column names are matched case-insensitively, so ``ComplianceState`` and ``complianceState`` are the
same column.

``$apply``: transformations chained with ``/``: ``filter(expr)``, ``groupby((A, B))``,
``groupby((A, B), aggregate(...))``, ``aggregate(...)``, where an aggregate is
``$count as Alias`` or ``Column with sum|min|max|average|countdistinct as Alias``.

``$orderby``: ``Col [asc|desc], ...`` (``desc`` is the default, as the service documents).
``$select``: ``Col, Col, ...``.

Every problem raises :class:`ODataError` with a message naming it (the service's ``QueryFailure``).
"""

from __future__ import annotations

import operator
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

__all__ = [
    "Aggregate",
    "Apply",
    "FrameTable",
    "ODataError",
    "Table",
    "apply_transformations",
    "evaluate_filter",
    "order_rows",
    "parse_apply",
    "parse_filter",
    "parse_orderby",
    "parse_select",
]


class ODataError(ValueError):
    """A query option that cannot be parsed or evaluated; the message names the problem."""

    def __init__(self, option: str, message: str) -> None:
        super().__init__(f"Invalid {option} expression: {message}")
        self.option = option
        self.message = f"Invalid {option} expression: {message}"


# ---------------------------------------------------------------------------------- tables
class Table:
    """Columns by name, computed on demand; names are resolved case-insensitively.

    Parameters
    ----------
    names : sequence of str
        The canonical column names.
    fetch : callable
        ``fetch(name, rows)`` gives the column ``name`` (a Series or array) for the row positions
        ``rows`` (an integer array into the underlying records).
    rows : ndarray of int
        The rows of the underlying records this table holds, in order.
    """

    def __init__(self, names: Sequence[str], fetch: Callable[[str, np.ndarray], Any],
                 rows: np.ndarray) -> None:
        self.names = list(names)
        self._by_lower = {n.lower(): n for n in self.names}
        self._fetch = fetch
        self.rows = rows
        self._cache: dict[str, pd.Series] = {}

    def __len__(self) -> int:
        """Count the rows."""
        return len(self.rows)

    def resolve(self, name: str, option: str = "$filter") -> str:
        """Resolve the canonical name of a column, else ODataError."""
        found = self._by_lower.get(name.lower())
        if found is None:
            raise ODataError(option, f"unknown column '{name}'; known columns: "
                                     f"{', '.join(self.names)}")
        return found

    def column(self, name: str) -> pd.Series:
        """Return the column as a Series with a default index."""
        if name not in self._cache:
            values = self._fetch(name, self.rows)
            self._cache[name] = values if isinstance(values, pd.Series) else \
                pd.Series(values)
            self._cache[name].index = pd.RangeIndex(len(self.rows))
        return self._cache[name]

    def take(self, positions: np.ndarray) -> Table:
        """Take the rows at these positions (of this table)."""
        return Table(self.names, self._fetch, self.rows[positions])

    def frame(self, names: Sequence[str] | None = None) -> pd.DataFrame:
        """Return the columns as a DataFrame."""
        names = self.names if names is None else names
        return pd.DataFrame({n: self.column(n) for n in names}, index=pd.RangeIndex(len(self)))


class FrameTable(Table):
    """A Table over a DataFrame (what aggregations produce)."""

    def __init__(self, df: pd.DataFrame) -> None:
        df = df.reset_index(drop=True)
        self.df = df
        super().__init__(list(df.columns), lambda name, rows: df[name].iloc[rows],
                         np.arange(len(df)))


# ---------------------------------------------------------------------------------- tokens
_TOKEN = re.compile(r"""
    (?P<ws>\s+)
  | (?P<datetime>datetime'[^']*'
                |\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:\d{2})?)
  | (?P<string>'(?:[^']|'')*')
  | (?P<number>-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?)
  | (?P<count>\$count)
  | (?P<name>[A-Za-z_@][\w.@]*)
  | (?P<punct>[(),/])
""", re.VERBOSE)

#: The comparison operators of ``$filter``.
_COMPARE: dict[str, Callable[[Any, Any], Any]] = {
    "eq": operator.eq, "ne": operator.ne, "gt": operator.gt, "ge": operator.ge,
    "lt": operator.lt, "le": operator.le}
_OPS = set(_COMPARE)


@dataclass
class _Tok:
    kind: str
    text: str
    pos: int


def _tokens(text: str, option: str) -> list[_Tok]:
    out = []
    pos = 0
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if m is None:
            raise ODataError(option, f"unexpected character {text[pos]!r} at position {pos}")
        kind = m.lastgroup or ""
        if kind != "ws":
            out.append(_Tok(kind, m.group(), pos))
        pos = m.end()
    return out


class _Parser:
    def __init__(self, text: str, option: str) -> None:
        self.text = text
        self.option = option
        self.toks = _tokens(text, option)
        self.i = 0

    def peek(self) -> _Tok | None:
        return self.toks[self.i] if self.i < len(self.toks) else None

    def word(self) -> str | None:
        t = self.peek()
        return t.text.lower() if t is not None and t.kind == "name" else None

    def next(self, what: str) -> _Tok:
        t = self.peek()
        if t is None:
            raise ODataError(self.option, f"the expression ends where {what} was expected")
        self.i += 1
        return t

    def expect(self, text: str) -> _Tok:
        t = self.next(f"'{text}'")
        if t.text.lower() != text:
            raise ODataError(self.option, f"expected '{text}' at position {t.pos}, found "
                                          f"'{t.text}'")
        return t

    def fail(self, what: str) -> ODataError:
        t = self.peek()
        if t is None:
            return ODataError(self.option, f"the expression ends where {what} was expected")
        return ODataError(self.option, f"expected {what} at position {t.pos}, found '{t.text}'")

    def done(self) -> None:
        t = self.peek()
        if t is not None:
            raise ODataError(self.option, f"unexpected '{t.text}' at position {t.pos}")

    # filter grammar
    def expr(self) -> Any:
        left = self.and_expr()
        while self.word() == "or":
            self.i += 1
            left = ("or", left, self.and_expr())
        return left

    def and_expr(self) -> Any:
        left = self.not_expr()
        while self.word() == "and":
            self.i += 1
            left = ("and", left, self.not_expr())
        return left

    def not_expr(self) -> Any:
        if self.word() == "not":
            self.i += 1
            return ("not", self.not_expr())
        return self.comparison()

    def comparison(self) -> Any:
        t = self.peek()
        if t is not None and t.text == "(":
            self.i += 1
            inner = self.expr()
            self.expect(")")
            return inner
        left = self.operand()
        op = self.word()
        if op == "in":
            # 'value' in Column: the value is one of the column's items (as the service's own
            # summary links ask for a policy group: 'group1' IN PolicyDefinitionGroupNames)
            at = self.peek()
            self.i += 1
            right = self.operand()
            if left[0] != "lit" or not isinstance(left[1], str) or right[0] != "col":
                raise ODataError(self.option, f"'in' at position {at.pos if at else 0} takes a "
                                              "quoted value on its left and a column on its "
                                              "right")
            return ("in", left, right)
        if op not in _OPS:
            t = self.peek()
            ends = t is None or t.text == ")" or op in ("and", "or")
            if left[0] == "col" and ends:
                # a bare boolean column: IsCompliant
                return ("cmp", "eq", left, ("lit", True))
            raise self.fail("a comparison operator (eq, ne, gt, ge, lt, le)")
        self.i += 1
        right = self.operand()
        return ("cmp", op, left, right)

    def operand(self) -> Any:
        t = self.next("a column name or a literal")
        if t.kind == "string":
            return ("lit", t.text[1:-1].replace("''", "'"))
        if t.kind == "number":
            return ("lit", float(t.text) if any(c in t.text for c in ".eE") else int(t.text))
        if t.kind == "datetime":
            raw = t.text[9:-1] if t.text.startswith("datetime'") else t.text
            try:
                return ("lit", pd.Timestamp(raw).tz_localize("UTC") if pd.Timestamp(raw).tz is None
                        else pd.Timestamp(raw).tz_convert("UTC"))
            except ValueError as err:
                raise ODataError(self.option, f"'{raw}' at position {t.pos} is not a valid "
                                              "date-time") from err
        if t.kind == "name":
            low = t.text.lower()
            if low in ("true", "false"):
                return ("lit", low == "true")
            if low == "null":
                return ("lit", None)
            if low in _OPS or low in ("and", "or", "not"):
                raise ODataError(self.option, f"expected a column name or a literal at position "
                                              f"{t.pos}, found the operator '{t.text}'")
            return ("col", t.text, t.pos)
        raise ODataError(self.option, f"expected a column name or a literal at position {t.pos}, "
                                      f"found '{t.text}'")


def parse_filter(text: str, option: str = "$filter") -> Any:
    """Parse a ``$filter`` expression into a tree; ODataError names what is wrong."""
    if not text or not text.strip():
        raise ODataError(option, "the expression is empty")
    p = _Parser(text, option)
    tree = p.expr()
    p.done()
    return tree


def _compare(op: str, series: pd.Series, value: Any, option: str, name: str) -> np.ndarray:
    n = len(series)
    if value is None:
        nulls = series.isna().to_numpy()
        if op == "eq":
            return nulls
        if op == "ne":
            return ~nulls
        raise ODataError(option, f"'{op}' cannot compare '{name}' with null")
    dtype = series.dtype
    if isinstance(dtype, pd.CategoricalDtype):
        cats = pd.Series(dtype.categories)
        if isinstance(value, str) and (cats.empty or pd.api.types.is_object_dtype(cats)
                                       or pd.api.types.is_string_dtype(cats)):
            cat_hits = _compare(op, cats.astype("string").str.lower(), value.lower(), option,
                                name)
        else:
            cat_hits = _compare(op, cats, value, option, name)
        codes = series.cat.codes.to_numpy()
        lookup = np.append(cat_hits, False)
        return lookup[np.where(codes < 0, len(cat_hits), codes)]
    if isinstance(dtype, pd.DatetimeTZDtype) or pd.api.types.is_datetime64_any_dtype(dtype):
        if isinstance(value, str):
            try:
                value = pd.Timestamp(value)
                value = value.tz_localize("UTC") if value.tz is None else value
            except ValueError as err:
                raise ODataError(option, f"'{value}' is not a date-time to compare with "
                                         f"'{name}'") from err
        if not isinstance(value, pd.Timestamp):
            raise ODataError(option, f"'{name}' is a date-time; compare it with a date-time, not "
                                     f"{value!r}")
        if series.dt.tz is None:
            series = series.dt.tz_localize("UTC")
    elif pd.api.types.is_bool_dtype(dtype):
        if not isinstance(value, bool):
            raise ODataError(option, f"'{name}' is a boolean; compare it with true or false, "
                                     f"not {value!r}")
    elif pd.api.types.is_numeric_dtype(dtype):
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise ODataError(option, f"'{name}' is a number; compare it with a number, not "
                                     f"{value!r}")
    else:
        if isinstance(value, pd.Timestamp):
            value = value.strftime("%Y-%m-%dT%H:%M:%SZ")
        if isinstance(value, bool | int | float):
            raise ODataError(option, f"'{name}' is a string; compare it with a quoted string, "
                                     f"not {value!r}")
        series = series.astype("string").str.lower()
        value = str(value).lower()
    result = _COMPARE[op](series, value)
    out: np.ndarray = result.to_numpy(dtype=bool, na_value=False) \
        if hasattr(result, "to_numpy") else np.asarray(result, dtype=bool)
    if op == "ne" and not isinstance(dtype, pd.CategoricalDtype):
        out = out & ~series.isna().to_numpy()
    return out if len(out) == n else np.zeros(n, dtype=bool)


def evaluate_filter(tree: Any, table: Table, option: str = "$filter") -> np.ndarray:
    """Compute the boolean mask of the rows of ``table`` the filter keeps."""
    kind = tree[0]
    if kind == "or":
        return evaluate_filter(tree[1], table, option) | evaluate_filter(tree[2], table, option)
    if kind == "and":
        return evaluate_filter(tree[1], table, option) & evaluate_filter(tree[2], table, option)
    if kind == "not":
        return ~evaluate_filter(tree[1], table, option)
    if kind == "cmp":
        _, op, left, right = tree
        if left[0] == "lit" and right[0] == "col":
            flip = {"gt": "lt", "lt": "gt", "ge": "le", "le": "ge"}
            op, left, right = flip.get(op, op), right, left
        if left[0] == "lit" and right[0] == "lit":
            raise ODataError(option, "a comparison needs at least one column")
        name = table.resolve(left[1], option)
        series = table.column(name)
        if right[0] == "col":
            other = table.column(table.resolve(right[1], option))
            a = series.astype("string").str.lower() if _is_text(series) else series
            b = other.astype("string").str.lower() if _is_text(other) else other
            try:
                return _COMPARE[op](a, b).to_numpy(dtype=bool, na_value=False)
            except TypeError as err:
                raise ODataError(option, f"'{left[1]}' and '{right[1]}' cannot be compared") \
                    from err
        return _compare(op, series, right[1], option, name)
    if kind == "in":
        _, (_, value), (_, column, _) = tree
        series = table.column(table.resolve(column, option))
        return _contains(series, value)
    if kind == "lit":
        if isinstance(tree[1], bool):
            return np.full(len(table), tree[1])
        raise ODataError(option, f"the literal {tree[1]!r} is not a condition")
    raise ODataError(option, "the expression is not a condition")  # pragma: no cover


def _items(value: Any) -> list[str]:
    """Read the items of a collection value, lower-cased: a list, or text joined with commas."""
    if isinstance(value, list | tuple):
        return [str(v).lower() for v in value]
    if value is None or (isinstance(value, float) and np.isnan(value)):
        return []
    return [part.strip().lower() for part in str(value).split(",")]


def _contains(series: pd.Series, value: str) -> np.ndarray:
    """Whether each row's collection holds ``value`` (case-insensitive)."""
    wanted = value.lower()
    if isinstance(series.dtype, pd.CategoricalDtype):
        hits = np.array([wanted in _items(c) for c in series.cat.categories] + [False])
        codes = series.cat.codes.to_numpy()
        return hits[np.where(codes < 0, len(hits) - 1, codes)]
    return np.array([wanted in _items(v) for v in series], dtype=bool)


def _is_text(s: pd.Series) -> bool:
    return isinstance(s.dtype, pd.CategoricalDtype) or pd.api.types.is_string_dtype(s.dtype) \
        or pd.api.types.is_object_dtype(s.dtype)


# ---------------------------------------------------------------------------------- $apply
_AGG_FUNCS = ("sum", "min", "max", "average", "countdistinct")


@dataclass(frozen=True)
class Aggregate:
    """``$count as alias`` (column None) or ``column with func as alias``."""

    alias: str
    column: str | None = None
    func: str = "count"


@dataclass(frozen=True)
class Apply:
    """One ``$apply`` transformation: ``filter``, ``groupby`` or ``aggregate``.

    A ``filter`` holds its tree, a ``groupby`` its columns and aggregates, an ``aggregate`` its
    aggregates.
    """

    kind: str
    tree: Any = None
    columns: tuple[str, ...] = ()
    aggregates: tuple[Aggregate, ...] = ()


def _aggregates(p: _Parser) -> tuple[Aggregate, ...]:
    p.expect("aggregate")
    p.expect("(")
    out = []
    while True:
        t = p.next("'$count' or a column name")
        if t.kind == "count":
            column, func = None, "count"
        elif t.kind == "name":
            column = t.text
            p.expect("with")
            f = p.next("an aggregation method")
            func = f.text.lower()
            if func not in _AGG_FUNCS:
                raise ODataError(p.option, f"unknown aggregation method '{f.text}' at position "
                                           f"{f.pos}; use one of {', '.join(_AGG_FUNCS)}")
        else:
            raise ODataError(p.option, f"expected '$count' or a column name at position {t.pos},"
                                       f" found '{t.text}'")
        p.expect("as")
        alias = p.next("an alias")
        if alias.kind != "name":
            raise ODataError(p.option, f"expected an alias name at position {alias.pos}")
        out.append(Aggregate(alias.text, column, func))
        t = p.next("',' or ')'")
        if t.text == ")":
            return tuple(out)
        if t.text != ",":
            raise ODataError(p.option, f"expected ',' or ')' at position {t.pos}, found "
                                       f"'{t.text}'")


def parse_apply(text: str) -> list[Apply]:
    """Parse an ``$apply`` expression into its transformations."""
    option = "$apply"
    if not text or not text.strip():
        raise ODataError(option, "the expression is empty")
    p = _Parser(text, option)
    steps: list[Apply] = []
    while True:
        word = p.word()
        if word == "filter":
            p.i += 1
            p.expect("(")
            p.option = "$apply filter"
            tree = p.expr()
            p.option = option
            p.expect(")")
            steps.append(Apply("filter", tree=tree))
        elif word == "groupby":
            p.i += 1
            p.expect("(")
            p.expect("(")
            cols = []
            while True:
                t = p.next("a column name")
                if t.kind != "name":
                    raise ODataError(option, f"expected a column name at position {t.pos}, found"
                                             f" '{t.text}'")
                cols.append(t.text)
                t = p.next("',' or ')'")
                if t.text == ")":
                    break
                if t.text != ",":
                    raise ODataError(option, f"expected ',' or ')' at position {t.pos}, found "
                                             f"'{t.text}'")
            aggs: tuple[Aggregate, ...] = ()
            t = p.next("',' or ')'")
            if t.text == ",":
                aggs = _aggregates(p)
                p.expect(")")
            elif t.text != ")":
                raise ODataError(option, f"expected ')' at position {t.pos}, found '{t.text}'")
            steps.append(Apply("groupby", columns=tuple(cols), aggregates=aggs))
        elif word == "aggregate":
            steps.append(Apply("aggregate", aggregates=_aggregates(p)))
        else:
            raise p.fail("filter(...), groupby((...)) or aggregate(...)")
        following = p.peek()
        if following is None:
            return steps
        if following.text != "/":
            raise ODataError(option, f"expected '/' between transformations at position "
                                     f"{following.pos}, found '{following.text}'")
        p.i += 1


def _aggregate(table: Table, aggs: Sequence[Aggregate], keys: list[str]) -> pd.DataFrame:
    data = {k: table.column(k) for k in keys}
    frame = pd.DataFrame(data, index=pd.RangeIndex(len(table)))
    out_cols: dict[str, Any] = {}
    if keys:
        grouped = frame.groupby(keys, dropna=False, observed=True, sort=True)
        result = grouped.size().rename("__n").reset_index()
    else:
        result = pd.DataFrame({"__n": [len(table)]})
    for agg in aggs:
        if agg.column is None:
            out_cols[agg.alias] = result["__n"].astype("int64")
            continue
        name = table.resolve(agg.column, "$apply")
        col = table.column(name)
        if agg.func != "countdistinct" and not pd.api.types.is_numeric_dtype(col.dtype) \
                and agg.func in ("sum", "average"):
            raise ODataError("$apply", f"'{agg.func}' needs a numeric column; '{name}' is not")
        func = {"average": "mean", "countdistinct": "nunique"}.get(agg.func, agg.func)
        if keys:
            values = frame.assign(__v=col).groupby(keys, dropna=False, observed=True,
                                                   sort=True)["__v"].agg(func)
            out_cols[agg.alias] = values.to_numpy()
        else:
            out_cols[agg.alias] = [getattr(col, func)()]
    result = result.drop(columns="__n")
    for alias, values in out_cols.items():
        result[alias] = values
    for k in keys:
        if isinstance(result[k].dtype, pd.CategoricalDtype):
            result[k] = result[k].astype(object).where(result[k].notna(), None)
    return result


def apply_transformations(steps: Sequence[Apply], table: Table) -> Table:
    """Run the transformations of ``$apply`` over a table."""
    current = table
    for step in steps:
        if step.kind == "filter":
            mask = evaluate_filter(step.tree, current, "$apply filter")
            current = current.take(np.flatnonzero(mask))
        elif step.kind == "groupby":
            keys = [current.resolve(c, "$apply") for c in step.columns]
            current = FrameTable(_aggregate(current, step.aggregates, keys))
        else:
            current = FrameTable(_aggregate(current, step.aggregates, []))
    return current


# ---------------------------------------------------------------------------------- order, select
def parse_orderby(text: str) -> list[tuple[str, bool]]:
    """``Col [asc|desc], ...`` to ``[(name, ascending)]`` (descending unless ``asc``)."""
    out = []
    for i, part in enumerate(text.split(",")):
        words = part.split()
        if not words or len(words) > 2 or not re.fullmatch(r"[A-Za-z_@][\w.@]*", words[0]):
            raise ODataError("$orderby", f"item {i + 1} ('{part.strip()}') is not 'Column', "
                                         "'Column asc' or 'Column desc'")
        direction = words[1].lower() if len(words) == 2 else "desc"
        if direction not in ("asc", "desc"):
            raise ODataError("$orderby", f"'{words[1]}' is not a direction; use asc or desc")
        out.append((words[0], direction == "asc"))
    return out


def order_rows(table: Table, keys: Sequence[tuple[str, bool]]) -> np.ndarray:
    """Positions of the table's rows in the order of ``keys`` (stable)."""
    order = np.arange(len(table))
    for name, ascending in reversed(list(keys)):
        canonical = table.resolve(name, "$orderby")
        col = table.column(canonical).iloc[order]
        if isinstance(col.dtype, pd.CategoricalDtype):
            cats = pd.Series(col.cat.categories).astype("string").str.lower()
            rank = cats.rank(method="dense").to_numpy()
            codes = col.cat.codes.to_numpy()
            key = np.where(codes < 0, np.nan, rank[np.maximum(codes, 0)] if len(rank) else 0)
            col = pd.Series(key)
        elif _is_text(col):
            col = col.astype("string").str.lower()
        sorter = col.reset_index(drop=True).sort_values(ascending=ascending, kind="stable",
                                                        na_position="last").index.to_numpy()
        order = order[sorter]
    return order


def parse_select(text: str) -> list[str]:
    """``Col, Col, ...`` to a list of names."""
    names = [p.strip() for p in text.split(",")]
    for i, name in enumerate(names):
        if not re.fullmatch(r"[A-Za-z_@][\w.@]*", name):
            raise ODataError("$select", f"item {i + 1} ('{name}') is not a column name")
    return names
