"""Progress bars (tqdm, notebook-aware) for work that takes many requests.

Where the bar goes decides its kind: in a notebook, tqdm's widget bar when ipywidgets is
installed, else its text bar (never tqdm's warning that ``IProgress`` is missing); on a terminal,
the text bar; anywhere else (a log file, CI), one plain line when the work starts and one when
it ends, without escape sequences or carriage returns.
"""

from __future__ import annotations

import sys
import time
from typing import TYPE_CHECKING, Any, Protocol

from toolkit._core.protocols import Reporting

if TYPE_CHECKING:
    from tqdm.std import tqdm

__all__ = ["ProgressBar", "bar_kind", "progress_bar"]


class ProgressBar(Protocol):
    """What callers of :func:`progress_bar` use."""

    def update(self, n: int = 1) -> None: ...

    def close(self) -> None: ...

    def note(self, text: str) -> None:
        """Show ``text`` beside the count (a quota left, say)."""


def _in_notebook() -> bool:
    """Whether this runs in a Jupyter kernel (without importing IPython)."""
    ipython = sys.modules.get("IPython")
    shell = ipython.get_ipython() if ipython is not None else None
    return shell is not None and type(shell).__name__ == "ZMQInteractiveShell"


def _is_terminal(stream: Any) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):  # no isatty, or a closed stream
        return False


def bar_kind() -> str:
    """``notebook``, ``terminal`` or ``plain`` (stderr is a file or a pipe)."""
    if _in_notebook():
        return "notebook"
    return "terminal" if _is_terminal(sys.stderr) else "plain"


def _tqdm_class(kind: str) -> Any:
    if kind == "notebook":
        try:
            import ipywidgets  # noqa: F401  # tqdm's widget bar needs it
        except ImportError:
            pass
        else:
            from tqdm.notebook import tqdm as notebook_tqdm

            return notebook_tqdm
    from tqdm.std import tqdm as text_tqdm

    return text_tqdm


class _Lines:
    """Progress as two plain lines on stderr: when the work starts and when it ends."""

    def __init__(self, desc: str, total: int | None, unit: str, initial: int) -> None:
        self.desc, self.total, self.unit, self.n = desc, total, unit, initial
        self._started = time.monotonic()
        of = f" ({total} {unit}s)" if total is not None else ""
        sys.stderr.write(f"{desc}: started{of}\n")

    def update(self, n: int = 1) -> None:
        self.n += n

    def note(self, text: str) -> None:
        pass  # two lines only: a start and an end

    def close(self) -> None:
        sys.stderr.write(f"{self.desc}: {self.n} {self.unit}s done in "
                         f"{time.monotonic() - self._started:.1f} s\n")
        sys.stderr.flush()


class _Bar:
    """A tqdm bar that appears only once the work reaches ``minimum`` steps."""

    def __init__(self, desc: str, total: int | None, unit: str, minimum: int) -> None:
        self._desc = desc
        self._total = total
        self._unit = unit
        self._minimum = minimum
        self._count = 0
        self._bar: tqdm[Any] | _Lines | None = None
        self._note = ""

    def update(self, n: int = 1) -> None:
        self._count += n
        if self._bar is None and self._count >= self._minimum:
            kind = bar_kind()
            if kind == "plain":
                self._bar = _Lines(self._desc, self._total, self._unit, self._count - n)
            else:
                bar = _tqdm_class(kind)(
                    initial=self._count - n, desc=self._desc, total=self._total,
                    unit=self._unit, leave=False, dynamic_ncols=True)
                if self._note:
                    bar.set_postfix_str(self._note, refresh=False)
                self._bar = bar
        if self._bar is not None:
            self._bar.update(n)

    def note(self, text: str) -> None:
        self._note = text
        if self._bar is not None and not isinstance(self._bar, _Lines):
            self._bar.set_postfix_str(text)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()


class _NoBar:
    def update(self, n: int = 1) -> None:
        pass

    def note(self, text: str) -> None:
        pass

    def close(self) -> None:
        pass


def progress_bar(connection: Reporting | None, *, desc: str, total: int | None = None,
                 unit: str = "request") -> ProgressBar:
    """Make a progress bar when the connection's ``progress`` setting allows it, else a no-op.

    The bar appears only for work of at least ``progress_min`` steps (counted as they happen when
    the total is unknown, as for pages) and is removed when done (``leave=False``), so finished
    notebooks keep their results, not bars.
    """
    settings = getattr(connection, "settings", None)
    if settings is None or not settings.progress:
        return _NoBar()
    if total is not None and total < settings.progress_min:
        return _NoBar()
    return _Bar(desc, total, unit, 1 if total is not None else settings.progress_min)
