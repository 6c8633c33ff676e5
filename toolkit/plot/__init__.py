"""Plotting helpers (matplotlib, the ``plot`` extra): a frame in, an Axes out.

Each helper takes the frame the matching public function returns, checks the columns it needs,
never changes its input and never calls ``show()``.
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {
    "backend_health": "toolkit.plot.arm",
    "compliance_by": "toolkit.plot.policy",
    "compliance_trend": "toolkit.plot.policy",
    "noncompliance_heatmap": "toolkit.plot.policy",
    "encryption_posture": "toolkit.plot.arm",
    "authentication_strength_usage": "toolkit.plot.graph",
    "routes": "toolkit.plot.maps",
    "snapped_trace": "toolkit.plot.maps",
    "incidents": "toolkit.plot.maps",
    "air_quality_forecast": "toolkit.plot.weather",
    "pollutants": "toolkit.plot.weather",
    "air_quality_map": "toolkit.plot.weather",
    "alert_timeline": "toolkit.plot.weather",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'toolkit.plot' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)
