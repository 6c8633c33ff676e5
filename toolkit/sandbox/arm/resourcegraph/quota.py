"""Resource Graph's user quota, as the sandbox keeps it: queries per caller per fixed window.

Each caller (the token's object id) may send :data:`~toolkit._spec.arm.RESOURCE_GRAPH_QUOTA`
queries in each window of :data:`~toolkit._spec.arm.RESOURCE_GRAPH_QUOTA_WINDOW_SECONDS`
seconds, the window starting with the first query after the last one ended. Every answer says
what is left and when the window starts again (``hh:mm:ss``, rounded up to the second, so that a
client that waits as long is never early); past the quota the answer is 429 with
``Retry-After``. The quota is enforced when the sandbox throttles the resource manager
(``Sandbox(arm_limits=True)``); otherwise each answer reports a window never drawn down.
"""

from __future__ import annotations

import math
import threading
import time
from dataclasses import dataclass, field

from toolkit._spec.arm import (
    RESOURCE_GRAPH_QUOTA,
    RESOURCE_GRAPH_QUOTA_HEADERS,
    RESOURCE_GRAPH_QUOTA_WINDOW_SECONDS,
)
from toolkit.sandbox.http import Request, SandboxHTTPError, SandboxView

__all__ = ["UserQuota", "quota_of", "spend"]


def _span(seconds: float) -> str:
    whole = max(0, math.ceil(seconds))
    return f"{whole // 3600:02d}:{whole % 3600 // 60:02d}:{whole % 60:02d}"


@dataclass
class UserQuota:
    """Windows of ``limit`` queries in ``window`` seconds, one per caller."""

    limit: int = RESOURCE_GRAPH_QUOTA
    window: float = RESOURCE_GRAPH_QUOTA_WINDOW_SECONDS
    _windows: dict[str, tuple[float, int]] = field(default_factory=dict, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def spend(self, caller: str) -> tuple[int, float, bool]:
        """Count one query of ``caller``.

        Returns
        -------
        tuple of (int, float, bool)
            What is left in the window, the seconds until it starts again, and whether the
            query is within the quota (counted only then).
        """
        now = time.monotonic()
        with self._lock:
            start, used = self._windows.get(caller, (now, 0))
            if now >= start + self.window:
                start, used = now, 0
            if used >= self.limit:
                return 0, start + self.window - now, False
            used += 1
            self._windows[caller] = (start, used)
            return self.limit - used, start + self.window - now, True

    def configure(self, *, limit: int | None = None, window: float | None = None) -> None:
        """Change the quota (every window starts again)."""
        with self._lock:
            self.limit = self.limit if limit is None else limit
            self.window = self.window if window is None else window
            self._windows.clear()


def quota_of(sandbox: SandboxView) -> UserQuota:
    """Give the sandbox's Resource Graph quota (``configure`` it in tests)."""
    with sandbox.state_lock:
        found: UserQuota | None = sandbox.state.get("resourcegraph_quota")
        if found is None:
            found = sandbox.state["resourcegraph_quota"] = UserQuota()
        return found


def spend(request: Request) -> dict[str, str]:
    """Count a query against its caller's quota, and give the headers that say what is left.

    Raises
    ------
    SandboxHTTPError
        429 ``RateLimiting`` with ``Retry-After`` and the quota's headers, past the quota.
    """
    sandbox = request.sandbox
    quota = quota_of(sandbox)
    remaining_header, resets_header = (sandbox.header_prefix + h
                                       for h in RESOURCE_GRAPH_QUOTA_HEADERS)
    if not sandbox.arm_limits:
        return {remaining_header: str(quota.limit - 1), resets_header: _span(quota.window)}
    caller = str(request.claims.get("oid") or request.claims.get("appid") or "anonymous")
    left, resets, ok = quota.spend(caller)
    headers = {remaining_header: str(left), resets_header: _span(resets)}
    if not ok:
        raise SandboxHTTPError(
            429, "RateLimiting",
            f"Please try again in {_span(resets)}: the quota of {quota.limit} queries in "
            f"{quota.window:g} seconds is used up.",
            headers={**headers, "Retry-After": str(max(1, math.ceil(resets)))})
    return headers
