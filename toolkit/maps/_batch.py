"""Synchronous batch requests of the maps services (route directions, reverse geocoding).

A batch endpoint takes up to 100 items in ``batchItems`` and answers one item per item asked, in
the same order, each a result or an ``error``. Its synchronous form answers 408 when the batch
takes longer than 60 seconds: :class:`Batches` then splits the batch in two and sends each half
again (down to one item, whose 408 becomes that item's error), so a slow batch costs time, never
results.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

from toolkit._core.errors import ApiError
from toolkit._core.messages import Request

logger = logging.getLogger(__name__)

__all__ = ["Batches", "chunks"]


def chunks(indices: Sequence[int], size: int) -> list[list[int]]:
    """Cut ``indices`` into consecutive chunks of at most ``size``, in order."""
    return [list(indices[i:i + size]) for i in range(0, len(indices), size)]


class Batches:
    """Send the items a chunk indexes as one batch, halving one the service timed out (408).

    Parameters
    ----------
    pipe : Pipeline
        The maps pipeline of the connection.
    path : str
        The batch endpoint (``/route/directions:batch``, ``/reverseGeocode:batch``).
    operation : str
        The operation the requests are sent for (its record, logs, progress).
    items : list of dict
        Every batch item of the call; a chunk names some of them by index.
    api_version : str
        The service version.
    headers : dict, optional
        Headers of every request (``Accept-Language``).
    """

    def __init__(self, pipe: Any, path: str, operation: str, items: list[dict[str, Any]],
                 api_version: str, headers: dict[str, str] | None) -> None:
        self.pipe, self.path, self.operation = pipe, path, operation
        self.items, self.api_version, self.headers = items, api_version, headers
        self.request_ids: list[str] = []

    def send(self, chunk: list[int]) -> list[Any]:
        """Send the items ``chunk`` indexes; return the service's answer per item, in order."""
        try:
            response = self.pipe.send(Request(
                "POST", self.path, params={"api-version": self.api_version},
                json={"batchItems": [self.items[i] for i in chunk]}, headers=self.headers,
                operation=self.operation, no_retry=frozenset({408})))
        except ApiError as err:
            if err.status != 408:
                raise
            if len(chunk) > 1:
                half = len(chunk) // 2
                logger.info("%s: batch of %d timed out (408); sending it as two of %d and %d",
                            self.operation, len(chunk), half, len(chunk) - half)
                return self.send(chunk[:half]) + self.send(chunk[half:])
            return [{"error": {"code": err.code or "Timeout",
                               "message": err.message or str(err)}}]
        if response.request_id:
            self.request_ids.append(response.request_id)
        body = response.json() or {}
        answers = body.get("batchItems") if isinstance(body, dict) else None
        if not isinstance(answers, list) or len(answers) != len(chunk):
            raise response.refuse(f"{self.operation}: the service answered "
                                  f"{len(answers) if isinstance(answers, list) else 'no'} batch "
                                  f"items for {len(chunk)} queries")
        return answers
