"""Provenance recorded in ``df.attrs``: operation, api-version, endpoint, request ids (and which
of them were answered from the response cache), time."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from toolkit._core.accessor import register as register_accessor
from toolkit._core.cache import served_from_cache

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["provenance", "provenance_of"]


def provenance(operation: str, api_version: str | None, url: str | None,
               request_ids: Sequence[str] = ()) -> dict[str, Any]:
    """The ``attrs`` every frame carries."""
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
    }


def provenance_of(df: pd.DataFrame) -> dict[str, Any]:
    """A copy of a frame's ``attrs``, to carry into a frame derived from it."""
    return {str(key): value for key, value in df.attrs.items()}
