"""The frame of a policy states ``$apply`` query: the grouped columns and the aggregates.

An ``$apply`` result has the columns its expression names (``groupby((A, B), aggregate($count as
n))`` gives ``A``, ``B``, ``n``), which are known only from the expression or the records: known
policy fields keep their declared dtypes, aggregate aliases become ``Int64`` (counts) or floats.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

import pandas as pd

from toolkit._core.frames import build_frame, empty_frame
from toolkit._core.odata import split_top_level
from toolkit._core.schemas import Col, Schema
from toolkit.arm._schemas import POLICY_STATES

__all__ = ["aggregate_frame", "apply_columns"]

OPERATION = "policy_states"
_BY_LOWER = {c.name.lower(): c for c in POLICY_STATES.columns}


def apply_columns(apply: str) -> list[str] | None:
    """Name the columns an ``$apply`` result has, from the expression (None: whole records)."""
    for step in reversed(split_top_level(apply, "/")):
        low = step.lower()
        if low.startswith("filter"):
            continue
        aliases = re.findall(r"\bas\s+([A-Za-z_][\w]*)", step, flags=re.IGNORECASE)
        if low.startswith("groupby"):
            m = re.match(r"groupby\s*\(\s*\(([^)]*)\)", step, flags=re.IGNORECASE)
            cols = [c.strip() for c in m.group(1).split(",")] if m else []
            return [_canonical(c) for c in cols if c] + aliases
        return aliases
    return None


def _canonical(name: str) -> str:
    col = _BY_LOWER.get(name.lower())
    return col.name if col is not None else name


def aggregate_frame(records: list[dict[str, Any]], apply: str,
                    attrs: Mapping[str, Any]) -> pd.DataFrame:
    """Build the typed frame of an ``$apply`` result's records.

    Returns
    -------
    pandas.DataFrame
        The columns of the records in the order they first appear (or those the expression
        names, for no records): policy fields with their declared dtypes, other names as
        ``Int64`` when every value is an integer, ``float`` when a number, else ``string``.
        ``@odata.`` annotations are left out.
    """
    names: dict[str, None] = {}
    rows = []
    for r in records:
        row = {_canonical(k): v for k, v in r.items() if not str(k).startswith("@odata.")} \
            if isinstance(r, dict) else {}
        names.update(dict.fromkeys(row))
        rows.append(row)
    expected = apply_columns(apply)
    if not rows and expected is None:
        return empty_frame(POLICY_STATES, attrs)
    order = list(names) if rows else list(expected or [])
    cols = []
    for name in order:
        known = _BY_LOWER.get(name.lower())
        if known is not None and known.name == name:
            cols.append(known)
            continue
        values = [r.get(name) for r in rows]
        if all(v is None or (isinstance(v, int) and not isinstance(v, bool)) for v in values):
            cols.append(Col(name, "Int64"))
        elif all(v is None or (isinstance(v, int | float) and not isinstance(v, bool))
                 for v in values):
            cols.append(Col(name, "float"))
        else:
            cols.append(Col(name, "string"))
    return build_frame(rows, Schema(OPERATION, tuple(cols)), attrs, flat=True)
