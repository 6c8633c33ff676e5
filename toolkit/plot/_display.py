"""A described figure shown in a notebook carries its description as the picture's alt text.

IPython shows a matplotlib figure (at the end of a cell through matplotlib-inline's
``flush_figures``, or when a cell's value is a figure) with ``display(figure)``: its display
formatter asks its *mime-bundle* formatter first, then one formatter per type (``image/png``...,
which :func:`IPython.core.pylabtools.select_figure_formats` registers for ``Figure`` whenever the
inline backend starts or the user picks other formats), and publishes their data with their
metadata. The least that can carry a description into that output is one printer of IPython's
own kind, registered once per shell (:func:`enable_alt_text`) when a plot helper or
:func:`~toolkit.plot.description.set_description` is first used in an IPython kernel:

- a mime-bundle printer for ``Figure`` that returns no data, only the metadata
  ``{"image/png": {"alt": description}}`` (for each picture type a printer is registered for),
  which IPython keeps beside the data the per-type printers make. A figure without a
  description (one drawn without the helpers) is displayed exactly as before. A mime-bundle
  printer for ``Figure`` of someone else's is left in place (and no alt text is added);
- a per-type printer that returns metadata of its own (IPython's ``retina`` format gives the
  width and height) would replace that metadata, so the mime-bundle printer, which runs first at
  every display, wraps the per-type printers of figures: the wrapper returns what the printer
  returns, with the alt text added to metadata of its own; a format picked later (a new printer)
  is wrapped at the next display.

Nothing else is changed: no rcParams, no backend, no other type's printers; outside IPython
(a script, the Agg backend in tests) nothing is registered.
"""

from __future__ import annotations

import logging
import sys
import threading
from collections.abc import Callable
from typing import Any

logger = logging.getLogger(__name__)

__all__ = ["IMAGE_TYPES", "alt_bundle", "enable_alt_text"]

_lock = threading.Lock()

#: The picture types a notebook output can carry a figure in (and its alternative text with).
IMAGE_TYPES = ("image/png", "image/jpeg", "image/svg+xml")
#: How a figure's description is read (:func:`toolkit.plot.description.describe`).
Describe = Callable[[Any], str]


def _shell() -> Any:
    """Return the running IPython shell, without importing IPython when nothing did yet."""
    if "IPython" not in sys.modules:
        return None
    try:
        from IPython import get_ipython
    except ImportError:  # pragma: no cover - a broken install
        return None
    return get_ipython()


def enable_alt_text(describe: Describe, shell: Any = None) -> bool:
    """Register the alt-text printer for figures with an IPython shell (once per shell).

    Parameters
    ----------
    describe : callable
        Gives a figure's description (empty: none).
    shell : IPython InteractiveShell, optional
        Default: the running one, if any (none: nothing is registered).

    Returns
    -------
    bool
        Whether the printer is registered with the shell (now or before).
    """
    shell = shell if shell is not None else _shell()
    display = getattr(shell, "display_formatter", None)
    formatter = getattr(display, "mimebundle_formatter", None)
    if formatter is None:
        return False
    from matplotlib.figure import Figure

    with _lock:
        try:
            current = formatter.lookup_by_type(Figure)
        except KeyError:
            current = None
        if current is not None:
            if getattr(current, "_toolkit_alt", False):
                return True
            logger.info("a mime-bundle printer for figures is registered already: "
                        "figures carry no alt text")
            return False
        formatter.for_type(Figure, alt_bundle(display, describe))
    logger.debug("figures displayed in this shell carry their description as alt text")
    return True


def alt_bundle(display: Any, describe: Describe
               ) -> Callable[[Any], tuple[dict[str, Any], dict[str, Any]] | None]:
    """Make the mime-bundle printer of figures for a shell's display formatter.

    Parameters
    ----------
    display : IPython DisplayFormatter
        The shell's.
    describe : callable
        Gives a figure's description.

    Returns
    -------
    callable
        ``figure -> ({}, {mime: {"alt": text}})`` for each picture type the shell makes of a
        figure (IPython keeps that metadata beside the data its per-type printers make);
        ``None`` (nothing added) for a figure without a description.
    """
    from matplotlib.figure import Figure

    def bundle(figure: Any) -> tuple[dict[str, Any], dict[str, Any]] | None:
        text = describe(figure)
        if not text:
            return None
        metadata: dict[str, Any] = {}
        for mime in IMAGE_TYPES:
            formatter = display.formatters.get(mime)
            if formatter is None:
                continue
            try:
                printer = formatter.lookup_by_type(Figure)
            except KeyError:
                continue
            if not getattr(printer, "_toolkit_keeps_alt", False):
                formatter.for_type(Figure, _keeping_alt(printer, describe))
            metadata[mime] = {"alt": text}
        return ({}, metadata) if metadata else None

    bundle._toolkit_alt = True  # type: ignore[attr-defined]
    return bundle


def _keeping_alt(printer: Callable[[Any], Any], describe: Describe) -> Callable[[Any], Any]:
    """Wrap a per-type printer so that metadata of its own keeps the figure's alt text."""

    def printed(figure: Any) -> Any:
        out = printer(figure)
        if isinstance(out, tuple) and len(out) == 2 and isinstance(out[1], dict):
            text = describe(figure)
            if text:
                return out[0], {**out[1], "alt": text}
        return out

    printed._toolkit_keeps_alt = True  # type: ignore[attr-defined]
    printed.__wrapped__ = printer  # type: ignore[attr-defined]
    return printed
