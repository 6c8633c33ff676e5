"""A network between the client and the sandbox, modelled on loopback.

Round-trip latency, bandwidth per connection, and a service time per request.

On loopback a round trip costs nothing and bytes are free; against a real service they are not,
and what makes a read fast there (fewer round trips, fewer bytes, several connections at once)
does not show. A :class:`NetworkModel` given to a sandbox makes every answer wait as a real link
would: a new connection costs one round trip (the TCP handshake), every answer one round trip
plus the service time before its first byte, and its bytes go out no faster than the bandwidth
of that connection (each connection has its own, as flows through an uncongested path do) and,
with ``link_mbit_per_s``, no faster than the client's link, which all connections share.

Every value is bounded, so a model cannot stall a test or a benchmark for long.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

__all__ = ["NetworkModel"]

#: Bounds of the model: at most 2 s of round trip and 5 s of service time; at least 1 Mbit/s.
MAX_RTT_MS = 2000.0
MAX_SERVICE_MS = 5000.0
MIN_MBIT = 1.0
#: Bytes written at a time when pacing a body.
CHUNK = 64 * 1024


@dataclass(frozen=True)
class NetworkModel:
    """The link a sandbox's clients sit behind.

    Parameters
    ----------
    rtt_ms : float
        Round-trip time in milliseconds (0 to 2000).
    mbit_per_s : float, optional
        Bandwidth of each connection from the sandbox to the client, in Mbit/s (at least 1);
        ``None``: as fast as loopback goes.
    service_ms : float
        Time the service takes to start answering a request, in milliseconds (0 to 5000).
    link_mbit_per_s : float, optional
        Bandwidth of the client's link, shared by all its connections (at least 1 Mbit/s);
        ``None``: each connection has its own bandwidth only.

    Examples
    --------
    >>> NetworkModel(rtt_ms=50, mbit_per_s=200)   # a far region over a good line
    NetworkModel(rtt_ms=50, mbit_per_s=200, service_ms=0.0, link_mbit_per_s=None)
    """

    rtt_ms: float = 0.0
    mbit_per_s: float | None = None
    service_ms: float = 0.0
    link_mbit_per_s: float | None = None
    _link: list[float] = field(default_factory=lambda: [0.0], repr=False, compare=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    def __post_init__(self) -> None:
        """Check every setting is within its limits; raise ValueError otherwise."""
        if not 0 <= self.rtt_ms <= MAX_RTT_MS:
            raise ValueError(f"rtt_ms must be between 0 and {MAX_RTT_MS:g}, not {self.rtt_ms!r}")
        if self.mbit_per_s is not None and not self.mbit_per_s >= MIN_MBIT:
            raise ValueError(f"mbit_per_s must be at least {MIN_MBIT:g} (or None), not "
                             f"{self.mbit_per_s!r}")
        if self.link_mbit_per_s is not None and not self.link_mbit_per_s >= MIN_MBIT:
            raise ValueError(f"link_mbit_per_s must be at least {MIN_MBIT:g} (or None), not "
                             f"{self.link_mbit_per_s!r}")
        if not 0 <= self.service_ms <= MAX_SERVICE_MS:
            raise ValueError(f"service_ms must be between 0 and {MAX_SERVICE_MS:g}, not "
                             f"{self.service_ms!r}")

    def connected(self, sleep: Callable[[float], None] = time.sleep) -> None:
        """Wait what opening a connection costs (one round trip)."""
        if self.rtt_ms:
            sleep(self.rtt_ms / 1000.0)

    def before_answer(self, sleep: Callable[[float], None] = time.sleep) -> None:
        """Wait from a request's arrival to its answer's first byte.

        The wait is the round trip and the service time.
        """
        wait = (self.rtt_ms + self.service_ms) / 1000.0
        if wait:
            sleep(wait)

    def send(self, write: Callable[[Any], object], payload: bytes,
             sleep: Callable[[float], None] = time.sleep,
             clock: Callable[[], float] = time.monotonic) -> None:
        """Write ``payload`` no faster than the connection's bandwidth and the link's."""
        if self.mbit_per_s is None and self.link_mbit_per_s is None:
            write(payload)
            return
        rate = self.mbit_per_s * 1e6 / 8 if self.mbit_per_s else None  # bytes a second
        link = self.link_mbit_per_s * 1e6 / 8 if self.link_mbit_per_s else None
        start = clock()
        sent = 0
        view = memoryview(payload)
        while sent < len(payload):
            chunk = view[sent:sent + CHUNK]
            done = start + (sent + len(chunk)) / rate if rate else 0.0
            if link:
                with self._lock:  # the chunk's turn on the shared link
                    begin = max(clock(), self._link[0])
                    self._link[0] = begin + len(chunk) / link
                    done = max(done, self._link[0])
            write(chunk)
            sent += len(chunk)
            ahead = done - clock()
            if ahead > 0:
                sleep(ahead)
