"""Token buckets the sandbox throttles with: one bucket per key (a tenant, a caller)."""

from __future__ import annotations

import math
import threading
import time
from dataclasses import dataclass, field

__all__ = ["Buckets"]


@dataclass
class _Bucket:
    tokens: float
    stamp: float


@dataclass
class Buckets:
    """Per-key token buckets: ``rate`` requests a second sustained, bursts up to ``burst``.

    :meth:`take` spends one token and answers ``None``, or the whole seconds until a token is
    back when the bucket is empty (what a ``Retry-After`` would say).
    """

    rate: float
    burst: int
    _buckets: dict[str, _Bucket] = field(default_factory=dict, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def take(self, key: str) -> int | None:
        """Spend a token of the key's bucket: ``None``, or the whole seconds until one is back."""
        now = time.monotonic()
        with self._lock:
            bucket = self._buckets.get(key)
            if bucket is None:
                bucket = self._buckets[key] = _Bucket(float(self.burst), now)
            bucket.tokens = min(float(self.burst), bucket.tokens + (now - bucket.stamp) * self.rate)
            bucket.stamp = now
            if bucket.tokens >= 1:
                bucket.tokens -= 1
                return None
            return max(1, math.ceil((1 - bucket.tokens) / self.rate)) if self.rate > 0 else 3600

    def left(self, key: str) -> int:
        """Count the whole tokens the key's bucket holds now (a full bucket for a key not seen)."""
        now = time.monotonic()
        with self._lock:
            bucket = self._buckets.get(key)
            if bucket is None:
                return self.burst
            return int(min(float(self.burst),
                           bucket.tokens + (now - bucket.stamp) * self.rate))

    def configure(self, *, rate: float | None = None, burst: int | None = None) -> None:
        """Change the limits (buckets refill to the new burst)."""
        with self._lock:
            if rate is not None:
                self.rate = rate
            if burst is not None:
                self.burst = burst
            self._buckets.clear()

    def refill(self) -> None:
        """Fill every bucket (a fresh start)."""
        with self._lock:
            self._buckets.clear()
