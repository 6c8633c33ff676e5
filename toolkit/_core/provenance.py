"""Provenance recorded in ``df.attrs``: operation, api-version, endpoint, request ids, time."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

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
    return {
        "operation": operation,
        "api_version": api_version,
        "endpoint": endpoint,
        "request_ids": list(request_ids),
        "retrieved_at": datetime.now(UTC).isoformat(timespec="seconds"),
    }


def provenance_of(df: pd.DataFrame) -> dict[str, Any]:
    """A copy of a frame's ``attrs``, to carry into a frame derived from it."""
    return {str(key): value for key, value in df.attrs.items()}
