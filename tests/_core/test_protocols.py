"""What the core asks of a connection: the Connection has it, a stand-in lacking it has not."""

from __future__ import annotations

from types import SimpleNamespace

import toolkit
from toolkit._core.config import Settings
from toolkit._core.policies import Stats
from toolkit._core.progress import progress_bar
from toolkit._core.protocols import Counts, Reporting, Running


def test_a_connection_is_what_the_core_runs_with(sandbox) -> None:
    conn = toolkit.connect(sandbox=sandbox, progress=False)
    try:
        assert isinstance(conn, Running) and isinstance(conn, Reporting)
        assert isinstance(conn.stats, Counts) and isinstance(Stats(), Counts)
    finally:
        conn.close()


def test_a_stand_in_needs_only_the_members_named() -> None:
    reporting = SimpleNamespace(settings=Settings(progress=False))
    assert isinstance(reporting, Reporting) and not isinstance(reporting, Running)
    assert not isinstance(SimpleNamespace(), Reporting)
    # a progress bar of a stand-in whose settings turn bars off is the no-op one
    bar = progress_bar(reporting, desc="x", total=100)
    bar.update(1)
    bar.close()
    assert type(bar).__name__ == "_NoBar"
