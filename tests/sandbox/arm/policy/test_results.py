"""The evaluation of a policy-states query and the caches of its results: the same query gives
the kept result, the caches keep the values used last, and the scope's rows are newest first."""

from __future__ import annotations

import threading
from types import SimpleNamespace

import numpy as np

from toolkit.sandbox.arm.policy.results import kept, scope_rows
from toolkit.sandbox.arm.policy.scopes import Scope


def _view() -> SimpleNamespace:
    return SimpleNamespace(state={}, state_lock=threading.RLock())


def test_kept_makes_a_value_once_and_drops_the_oldest_when_full() -> None:
    view = _view()
    made = []

    def make(key):
        return lambda: made.append(key) or f"value of {key}"

    def full(cache) -> bool:
        return len(cache) > 2

    assert kept(view, "c", "a", make("a"), full) == "value of a"
    assert kept(view, "c", "a", make("a"), full) == "value of a" and made == ["a"]
    kept(view, "c", "b", make("b"), full)
    kept(view, "c", "a", make("a"), full)  # used last: "b" is now the oldest
    kept(view, "c", "d", make("d"), full)
    assert list(view.state["c"]) == ["a", "d"] and made == ["a", "b", "d"]
    kept(view, "c", "e", make("e"), lambda cache: True)  # one always stays
    assert list(view.state["c"]) == ["e"]


def test_scope_rows_are_in_the_window_newest_first_and_latest_once_per_pair(world) -> None:
    pw = world.section("policy")
    sub_id, group = next(iter(pw.by_group))
    scope = Scope("/x", [(sub_id, group)])
    rec, every = scope_rows(pw, scope, "default", 0.0, float("inf"))
    assert len(every) == len(rec.ts) and np.all(np.diff(rec.ts[every]) <= 0)
    lo, hi = float(rec.ts.min()) + 3600, float(rec.ts.max()) - 3600
    _, inside = scope_rows(pw, scope, "default", lo, hi)
    assert len(inside) < len(every) and np.all((rec.ts[inside] >= lo) & (rec.ts[inside] <= hi))
    _, latest = scope_rows(pw, scope, "latest", 0.0, float("inf"))
    assert len(latest) == len(np.unique(rec.pair)) < len(every)
