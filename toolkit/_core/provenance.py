"""Provenance recorded in ``df.attrs``.

Operation, api-version, endpoint, request ids (and which of them were answered from the response
cache), time, and whether the data is the sandbox's.

``df.attrs["sandbox"]`` is ``True`` on every frame built from an answer of a sandbox (invented
data) and ``False`` on every other frame; frames the toolkit derives from one
(:func:`provenance_of`) keep it. The pipeline reports each answer that came from a sandbox
(:func:`note_sandbox_answer`): one the connection knows is a sandbox (it started it or was given
it), or one carrying the sandbox's header (:data:`~toolkit._spec.common.SANDBOX_HEADER`, sent by
a sandbox started apart with ``python -m toolkit.sandbox``). The mark follows the answer
whatever request id it carries: a sandbox's answer with no id the family reads (none at all, or
one under another header prefix) is given one by the toolkit (``sandbox-<uuid>``, in
``attrs["request_ids"]``). That header can only mark a frame as the sandbox's; nothing an answer
says can mark sandbox data as real.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from datetime import UTC, datetime
from functools import wraps
from typing import TYPE_CHECKING, Any, ParamSpec
from urllib.parse import urlsplit

from toolkit._core.accessor import register as register_accessor
from toolkit._core.cache import served_from_cache
from toolkit._core.recent import RecentIds

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["SANDBOX_MARK", "answered_by_sandbox", "from_sandbox", "keeps_sandbox_flag",
           "note_sandbox_answer", "provenance", "provenance_of"]

#: What plots and maps of the sandbox's frames say on their face.
SANDBOX_MARK = "sandbox data (invented)"

_P = ParamSpec("_P")

#: The answers that came from a sandbox, by request id (the oldest 200,000 on are forgotten).
_sandbox_ids = RecentIds(200_000)


def note_sandbox_answer(request_id: str | None) -> None:
    """Remember that the answer with this request id came from a sandbox."""
    _sandbox_ids.add(request_id)


def answered_by_sandbox(request_ids: Iterable[str]) -> bool:
    """Whether any of these answers came from a sandbox."""
    return any(_sandbox_ids.flags(request_ids))


def provenance(operation: str, api_version: str | None, url: str | None,
               request_ids: Sequence[str] = ()) -> dict[str, Any]:
    """Build the ``attrs`` every frame carries."""
    endpoint = None
    if url:
        parts = urlsplit(url)
        endpoint = f"{parts.scheme}://{parts.netloc}{parts.path}"
    ids = list(request_ids)
    register_accessor()  # df.toolkit, once, when the plot extra is installed
    return {
        "operation": operation,
        "api_version": api_version,
        "endpoint": endpoint,
        "request_ids": ids,
        # one flag per request id: whether that answer came from the response cache
        "from_cache": served_from_cache(ids),
        "retrieved_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "sandbox": answered_by_sandbox(ids),
    }


def provenance_of(df: pd.DataFrame) -> dict[str, Any]:
    """Copy a frame's ``attrs``, to carry into a frame derived from it."""
    return {str(key): value for key, value in df.attrs.items()}


def keeps_sandbox_flag(derive: Callable[_P, pd.DataFrame]) -> Callable[_P, pd.DataFrame]:
    """Decorate a helper that derives a frame from the frame it is given first.

    The result says whether its source was the sandbox's (``attrs["sandbox"]``), like its source.
    """

    @wraps(derive)
    def derived(*args: _P.args, **kwargs: _P.kwargs) -> pd.DataFrame:
        out = derive(*args, **kwargs)
        source = args[0] if args else next(iter(kwargs.values()), None)
        out.attrs["sandbox"] = bool(getattr(source, "attrs", {}).get("sandbox", False))
        return out

    return derived


#: Whether the process's default connection answers from a sandbox (set where it is made).
_default_is_sandbox = False


def note_default_connection(sandbox: bool) -> None:
    """Record whether the default connection answers from a sandbox.

    Frames whose provenance pandas dropped (``pd.concat`` of frames with different ``attrs``,
    ``merge``...) are taken as its answers by :func:`from_sandbox`.
    """
    global _default_is_sandbox
    _default_is_sandbox = sandbox


def from_sandbox(*values: Any) -> bool:
    """Tell whether any of the values is a frame the sandbox answered (``attrs["sandbox"]``).

    Or a frame that no longer says where it came from while the default connection is a sandbox: a
    picture of invented data is never left unmarked because pandas lost the flag.
    """
    frames = [v for v in values if isinstance(getattr(v, "attrs", None), dict)]
    if any(v.attrs.get("sandbox") is True for v in frames):
        return True
    return _default_is_sandbox and any("sandbox" not in v.attrs for v in frames)
