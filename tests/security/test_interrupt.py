"""Ctrl-C in a fan-out cancels what is queued and returns at once; nothing is sent after the
interrupt reaches the caller (running requests are not retried, queued ones never start)."""

from __future__ import annotations

import signal
import threading
import time
from typing import Any

import pytest

import toolkit
from tests.security.conftest import connect_to
from tests.security.hostile import Answer, Hostile, Seen, json_answer
from toolkit._core.cancel import current

# Ctrl-C delivered while requests run, bounded in real time: see tests/conftest.py
pytestmark = pytest.mark.xdist_group("real-time")

SUB = "00000000-0000-0000-0000-000000000001"


def _press_ctrl_c(main: int, caught: threading.Event, presses: int = 4) -> None:
    """Send Ctrl-C to the caller, and again while it has not arrived (at most ``presses``).

    CPython drops a KeyboardInterrupt that surfaces inside a garbage-collection callback or a
    ``__del__`` ("Exception ignored in ..."); a user then presses Ctrl-C again, and so does this.
    """
    for _ in range(presses):
        signal.pthread_kill(main, signal.SIGINT)
        if caught.wait(5):
            return


def test_ctrl_c_cancels_a_fan_out() -> None:
    release = threading.Event()
    interrupted = threading.Event()
    caught = threading.Event()
    main = threading.main_thread().ident
    assert main is not None

    def script(seen: Seen, server: Hostile) -> Answer:
        # Ctrl-C once every worker holds a request: all that runs is known, the rest is queued
        if server.count() == 4 and not interrupted.is_set():
            interrupted.set()
            threading.Thread(target=_press_ctrl_c, args=(main, caught), daemon=True).start()
        release.wait(10)
        return json_answer({"error": {"code": "ServerBusy"}}, 503)  # would be retried

    names = [f"sql-name-{i}" for i in range(200)]
    # Ctrl-C raises KeyboardInterrupt whatever handler an earlier test in this process left
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        _interrupt_a_fan_out(script, names, release, caught)
    finally:
        caught.set()
        signal.signal(signal.SIGINT, previous)


def _interrupt_a_fan_out(script: Any, names: list[str], release: threading.Event,
                         caught: threading.Event) -> None:
    with Hostile(script) as service:
        conn = connect_to(service, max_concurrency=4)
        started = time.monotonic()
        try:
            toolkit.check_server_names(SUB, names, connection=conn)
        except KeyboardInterrupt:
            caught.set()
        assert caught.is_set(), "Ctrl-C did not stop the fan-out"
        took = time.monotonic() - started
        at_interrupt = service.count()
        release.set()
        for thread in threading.enumerate():
            if thread.name.startswith("toolkit_"):  # the fan-out's workers (not the watcher
                thread.join(10)                      # of deadlines, which lives on)
        after = service.count()
    assert took < 25, took
    assert at_interrupt == 4  # what was running when Ctrl-C came
    assert after == 4  # no retry of those, nothing queued started


class _HeldCredential:
    """Hands out short-lived tokens (so every request asks for one). The ``interrupt_at``-th
    ask sends Ctrl-C to the caller; from then on each ask waits until the test says the
    interrupt has reached the caller, and its token is marked late: a request carrying a late
    token was sent after the interrupt surfaced."""

    def __init__(self, interrupt_at: int) -> None:
        self.interrupt_at = interrupt_at
        self.asks = 0
        self.lock = threading.Lock()
        self.interrupted = threading.Event()
        self.surfaced = threading.Event()
        self.main = threading.main_thread().ident

    def get_token(self, *scopes: str, **kw: Any) -> Any:
        from azure.core.credentials import AccessToken

        with self.lock:
            self.asks += 1
            first_late = self.asks == self.interrupt_at
        if first_late:
            self.interrupted.set()
            assert self.main is not None
            signal.pthread_kill(self.main, signal.SIGINT)
        if self.interrupted.is_set():
            # held until the caller has the interrupt, or until the work this ask is part of
            # is cancelled (a pager stopping its fetches while the interrupt unwinds)
            work = current()
            for _ in range(100):
                if self.surfaced.wait(0.1) or (work is not None and work.is_set()):
                    break
            return AccessToken(f"late-{self.asks}", int(time.time()) + 60)
        return AccessToken(f"early-{self.asks}", int(time.time()) + 60)


def _sent_when_interrupted(credential: _HeldCredential, script: Any, read: Any,
                          workers: str) -> list[str]:
    """``read(connection)`` against a server answering ``script``, until Ctrl-C reaches the
    caller; then the held workers go on, and once the threads named ``workers...`` have ended,
    the ``Authorization`` headers the server received."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        with Hostile(script) as service:
            conn = toolkit.connect(base_url=service.url, credential=credential,
                                   progress=False, max_concurrency=4, max_partitions=1)
            with pytest.raises(KeyboardInterrupt):
                read(conn)
            credential.surfaced.set()  # the workers held before their send go on now
            for thread in threading.enumerate():
                if thread.name.startswith(workers):
                    thread.join(10)
            return [s.headers.get("Authorization", "") for s in service.seen]
    finally:
        credential.surfaced.set()
        signal.signal(signal.SIGINT, previous)


def test_a_paged_read_sends_nothing_once_interrupted() -> None:
    # the pages are fetched ahead in threads of their own; a fetch held up (here, getting its
    # token) when Ctrl-C comes is never sent, neither while the read stops nor after
    credential = _HeldCredential(interrupt_at=4)

    def script(seen: Seen, server: Hostile) -> Answer:
        page = server.count()
        return json_answer({"value": [],
                            "@odata.nextLink": f"{server.url}/next?page={page + 1}"})

    sent = _sent_when_interrupted(
        credential, script, lambda conn: toolkit.policy_states(SUB, "rg", connection=conn),
        "toolkit-pages")
    assert credential.interrupted.is_set()
    assert [token for token in sent if "late-" in token] == []
    assert 1 <= len(sent) < 4


def test_no_request_leaves_after_the_interrupt_reaches_the_caller() -> None:
    credential = _HeldCredential(interrupt_at=9)

    def script(seen: Seen, server: Hostile) -> Answer:
        return json_answer({"error": {"code": "InvalidName", "message": "no"}}, 400)

    names = [f"sql-name-{i}" for i in range(200)]
    sent = _sent_when_interrupted(
        credential, script,
        lambda conn: toolkit.check_server_names(SUB, names, connection=conn),
        "toolkit_")  # the fan-out's workers
    assert credential.interrupted.is_set() and credential.asks >= 9
    late = [token for token in sent if "late-" in token]
    assert late == []  # nothing held before its send went out once the caller had the interrupt
    assert 1 <= len(sent) < 9
