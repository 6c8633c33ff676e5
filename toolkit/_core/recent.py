"""A bounded, thread-safe set of request ids.

Which answers had a property (came from the response cache, came from a sandbox), remembered for the
frames built from them.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Iterable

__all__ = ["RecentIds"]


class RecentIds:
    """The last ``limit`` request ids noted (the oldest are forgotten first).

    Parameters
    ----------
    limit : int
        How many ids are kept at most.
    """

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self._ids: OrderedDict[str, None] = OrderedDict()
        self._lock = threading.Lock()

    def add(self, request_id: str | None) -> None:
        """Note ``request_id`` (nothing for an empty or missing id)."""
        if not request_id:
            return
        with self._lock:
            self._ids[request_id] = None
            self._ids.move_to_end(request_id)
            while len(self._ids) > self.limit:
                self._ids.popitem(last=False)

    def flags(self, request_ids: Iterable[str]) -> list[bool]:
        """For each id, whether it was noted."""
        with self._lock:
            return [rid in self._ids for rid in request_ids]

    def clear(self) -> None:
        """Forget every id."""
        with self._lock:
            self._ids.clear()
