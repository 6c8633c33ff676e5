"""Fault injection: throttling, server errors, latency, broken bodies, slow operations.

Faults are rules held per sandbox (:meth:`Sandbox.inject`), drawn from a seeded random generator
so a run is repeatable, or asked for by one request with the ``x-vendor-sandbox-fault`` header
(which the toolkit never sends on its own), e.g. ``503``, ``429; retry-after=2``,
``latency=150``, ``drop``, ``malformed``, ``lro_fail``.
"""

from __future__ import annotations

import random
import re
import threading
from dataclasses import dataclass, field

from toolkit.sandbox.http import SandboxHTTPError

__all__ = ["FAULT_KINDS", "FaultPlan", "FaultRule", "fault_error"]

#: ``status`` kinds answer at once; ``latency`` delays; the body kinds spoil a good answer;
#: ``lro_fail`` lets the request start its long-running operation, which then ends Failed.
FAULT_KINDS = ("429", "500", "503", "latency", "drop", "malformed", "truncate", "lro_fail")


@dataclass
class FaultRule:
    """One fault to inject.

    Parameters
    ----------
    kind : str
        ``"429"``, ``"500"``, ``"503"``, ``"latency"``, ``"drop"`` (connection closed mid-body),
        ``"malformed"`` (invalid JSON), ``"truncate"`` (body cut short, right length header),
        ``"lro_fail"`` (the long-running operation the request starts ends Failed).
    rate : float
        Probability that a matching request gets the fault.
    path : str, optional
        Regex searched in the request path (and query); ``None`` matches every path.
    method : str, optional
        Only this HTTP method.
    skip : int
        Let this many matching requests through first (e.g. fail the third page).
    count : int, optional
        Inject at most this many times, then the rule is spent.
    retry_after : float, optional
        ``Retry-After`` seconds for 429/503 (omitted when ``None``).
    latency_ms, jitter_ms : float
        Added delay for ``latency``.
    """

    kind: str
    rate: float = 1.0
    path: str | None = None
    method: str | None = None
    skip: int = 0
    count: int | None = None
    retry_after: float | None = None
    latency_ms: float = 0.0
    jitter_ms: float = 0.0
    seen: int = field(default=0, init=False)
    fired: int = field(default=0, init=False)

    def __post_init__(self) -> None:
        """Check the kind and compile the path pattern."""
        if self.kind not in FAULT_KINDS:
            raise ValueError(f"fault kind must be one of {FAULT_KINDS}, not {self.kind!r}")
        self._rx = re.compile(self.path) if self.path else None

    def matches(self, method: str, target: str) -> bool:
        """Tell whether the rule applies to a request's method and target.

        Returns
        -------
        bool
            ``True`` when the method (if set) is the request's and the path pattern (if set)
            is found in its target.
        """
        if self.method and self.method.upper() != method.upper():
            return False
        return self._rx is None or bool(self._rx.search(target))

    @property
    def spent(self) -> bool:
        """Tell whether the rule has fired its ``count`` times."""
        return self.count is not None and self.fired >= self.count


class FaultPlan:
    """The rules of one sandbox, applied in order; thread-safe and seeded."""

    def __init__(self, seed: int = 0) -> None:
        self.rules: list[FaultRule] = []
        self._rng = random.Random(seed)
        self._lock = threading.Lock()
        self.injected: dict[str, int] = {}

    def add(self, rule: FaultRule) -> FaultRule:
        """Add a rule after the others.

        Returns
        -------
        FaultRule
            The rule (its ``seen`` and ``fired`` count as it applies).
        """
        with self._lock:
            self.rules.append(rule)
        return rule

    def clear(self) -> None:
        """Remove every rule."""
        with self._lock:
            self.rules.clear()

    def draw(self, method: str, target: str) -> list[FaultRule]:
        """Choose the rules that fire for a request.

        At most one status or body fault fires, plus any latency.

        Returns
        -------
        list of FaultRule
            The rules fired, in order.
        """
        fired: list[FaultRule] = []
        with self._lock:
            for rule in self.rules:
                if rule.spent or not rule.matches(method, target):
                    continue
                rule.seen += 1
                if rule.seen <= rule.skip:
                    continue
                if rule.rate < 1.0 and self._rng.random() >= rule.rate:
                    continue
                if rule.kind in ("429", "500", "503", "drop", "malformed", "truncate") and any(
                        r.kind != "latency" for r in fired):
                    continue
                rule.fired += 1
                self.injected[rule.kind] = self.injected.get(rule.kind, 0) + 1
                fired.append(rule)
        return fired

    def jitter(self, rule: FaultRule) -> float:
        """Draw a latency rule's delay, in milliseconds.

        Returns
        -------
        float
            ``latency_ms`` plus or minus up to ``jitter_ms``, never below zero.
        """
        with self._lock:
            return max(0.0, rule.latency_ms + self._rng.uniform(-rule.jitter_ms, rule.jitter_ms))


def parse_fault_header(value: str) -> FaultRule | None:
    """Read the one-request rule of an ``x-vendor-sandbox-fault`` header.

    For example ``503``, ``429; retry-after=2``, ``latency=150``, ``drop``.

    Returns
    -------
    FaultRule or None
        The rule, or ``None`` for a header it cannot read.
    """
    parts = [p.strip() for p in value.split(";") if p.strip()]
    if not parts:
        return None
    head = parts[0].lower()
    opts = {}
    for p in parts[1:]:
        if "=" in p:
            k, v = p.split("=", 1)
            opts[k.strip().lower()] = v.strip()
    try:
        if head.startswith("latency"):
            ms = float(head.split("=", 1)[1]) if "=" in head else float(opts.get("ms", 100))
            return FaultRule("latency", latency_ms=ms)
        if head in FAULT_KINDS:
            ra = opts.get("retry-after")
            return FaultRule(head, retry_after=float(ra) if ra is not None else None)
    except ValueError:
        return None
    return None


def fault_error(rule: FaultRule) -> SandboxHTTPError:
    """Make the error a status fault answers with (``429``, ``503``, else ``500``).

    Parameters
    ----------
    rule : FaultRule
        A rule of kind ``429``, ``500`` or ``503`` (its ``retry_after`` becomes the header).

    Returns
    -------
    SandboxHTTPError
        The error, raised in place of the handler's answer.
    """
    headers = {}
    if rule.retry_after is not None:
        headers["Retry-After"] = f"{rule.retry_after:g}"
    if rule.kind == "429":
        return SandboxHTTPError(429, "TooManyRequests", "The request was throttled; retry "
                                "after the interval in Retry-After.", headers=headers)
    if rule.kind == "503":
        return SandboxHTTPError(503, "ServiceUnavailable", "The service is temporarily "
                                "unavailable.", headers=headers)
    return SandboxHTTPError(500, "InternalServerError", "The server encountered an internal "
                            "error.", headers=headers)
