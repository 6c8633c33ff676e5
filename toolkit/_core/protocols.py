"""What the core asks of the objects handed to it, written as Protocols.

The core never imports :mod:`toolkit.connection`: a fan-out, a paged read or a progress bar is
given the connection and uses a few of its members only. These Protocols name those members, so
that any object having them (the Connection, a test's stand-in) type-checks, and nothing else
does. :class:`Reporting`, :class:`Running` and :class:`Counts` can be checked with ``isinstance``
too.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

__all__ = ["Counts", "FanOutSettings", "ProgressSettings", "Reporting", "Running"]


class ProgressSettings(Protocol):
    """The settings a progress bar reads."""

    @property
    def progress(self) -> bool:
        """Whether progress bars are shown at all."""
        ...

    @property
    def progress_min(self) -> int:
        """The fewest steps of work that get a bar."""
        ...


class FanOutSettings(ProgressSettings, Protocol):
    """The settings a fan-out reads."""

    @property
    def max_concurrency(self) -> int:
        """Requests run at once."""
        ...


@runtime_checkable
class Reporting(Protocol):
    """A connection as a progress bar uses it: its settings."""

    @property
    def settings(self) -> ProgressSettings:
        """The connection's settings."""
        ...


@runtime_checkable
class Running(Protocol):
    """A connection as a fan-out uses it: its settings, its clock and its wait."""

    @property
    def settings(self) -> FanOutSettings:
        """The connection's settings."""
        ...

    def clock(self) -> float:
        """Return monotonic seconds, counting the waits a recording sleeper skipped."""
        ...

    def sleep_for(self, seconds: float) -> None:
        """Wait ``seconds`` (or record the wait, in tests)."""
        ...


@runtime_checkable
class Counts(Protocol):
    """A connection's request counters, as the pipeline adds to them."""

    def add(self, **kw: int) -> None:
        """Add to the counts named."""
        ...
