"""RecentIds: the bounded set of request ids the cache and the sandbox flag remember."""

from __future__ import annotations

import threading

from toolkit._core.recent import RecentIds


def test_ids_noted_are_flagged_in_the_order_asked() -> None:
    ids = RecentIds(10)
    ids.add("a")
    ids.add("")
    ids.add(None)
    assert ids.flags(["b", "a", ""]) == [False, True, False]


def test_the_oldest_are_forgotten_first_and_a_repeat_counts_as_new() -> None:
    ids = RecentIds(3)
    for rid in ("a", "b", "c"):
        ids.add(rid)
    ids.add("a")  # "a" is the newest again
    ids.add("d")  # "b" goes
    assert ids.flags(["a", "b", "c", "d"]) == [True, False, True, True]
    ids.clear()
    assert ids.flags(["a", "c", "d"]) == [False, False, False]


def test_many_threads_never_exceed_the_limit() -> None:
    ids = RecentIds(50)

    def note(k: int) -> None:
        for i in range(500):
            ids.add(f"{k}-{i}")

    threads = [threading.Thread(target=note, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sum(ids.flags(f"{k}-{i}" for k in range(4) for i in range(500))) == 50
