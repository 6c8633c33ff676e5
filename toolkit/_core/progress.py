"""Progress bars (tqdm, notebook-aware) for work that takes many requests."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from tqdm.std import tqdm

__all__ = ["ProgressBar", "progress_bar"]


class ProgressBar(Protocol):
    """What callers of :func:`progress_bar` use."""

    def update(self, n: int = 1) -> None: ...

    def close(self) -> None: ...


class _Bar:
    """A tqdm bar that appears only once the work reaches ``minimum`` steps."""

    def __init__(self, desc: str, total: int | None, unit: str, minimum: int) -> None:
        self._desc = desc
        self._total = total
        self._unit = unit
        self._minimum = minimum
        self._count = 0
        self._bar: tqdm[Any] | None = None

    def update(self, n: int = 1) -> None:
        self._count += n
        if self._bar is None and self._count >= self._minimum:
            from tqdm.auto import tqdm

            self._bar = tqdm(initial=self._count - n, desc=self._desc, total=self._total,
                             unit=self._unit, leave=False, dynamic_ncols=True)
        if self._bar is not None:
            self._bar.update(n)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()


class _NoBar:
    def update(self, n: int = 1) -> None:
        pass

    def close(self) -> None:
        pass


def progress_bar(connection: object, *, desc: str, total: int | None = None,
                 unit: str = "request") -> ProgressBar:
    """A progress bar when the connection's ``progress`` setting allows it, else a no-op.

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
