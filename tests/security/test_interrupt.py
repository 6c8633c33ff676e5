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

SUB = "00000000-0000-0000-0000-000000000001"


def test_ctrl_c_cancels_a_fan_out() -> None:
    release = threading.Event()
    interrupted = threading.Event()
    main = threading.main_thread().ident
    assert main is not None

    def script(seen: Seen, server: Hostile) -> Answer:
        # Ctrl-C once every worker holds a request: all that runs is known, the rest is queued
        if server.count() == 4 and not interrupted.is_set():
            interrupted.set()
            signal.pthread_kill(main, signal.SIGINT)  # Ctrl-C, delivered to the caller
        release.wait(10)
        return json_answer({"error": {"code": "ServerBusy"}}, 503)  # would be retried

    names = [f"sql-name-{i}" for i in range(200)]
    # Ctrl-C raises KeyboardInterrupt whatever handler an earlier test in this process left
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        _interrupt_a_fan_out(script, names, release)
    finally:
        signal.signal(signal.SIGINT, previous)


def _interrupt_a_fan_out(script: Any, names: list[str], release: threading.Event) -> None:
    with Hostile(script) as service:
        conn = connect_to(service, max_concurrency=4)
        started = time.monotonic()
        with pytest.raises(KeyboardInterrupt):
            toolkit.check_server_names(SUB, names, connection=conn)
        took = time.monotonic() - started
        at_interrupt = service.count()
        release.set()
        for thread in threading.enumerate():
            if thread.name.startswith("toolkit"):
                thread.join(10)
        after = service.count()
    assert took < 10, took
    assert at_interrupt == 4  # what was running when Ctrl-C came
    assert after == 4  # no retry of those, nothing queued started
