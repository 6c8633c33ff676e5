"""Widgets (ipywidgets, the ``widgets`` extra) built on the public functions and plot helpers.

Every widget can be driven programmatically (set its value, read the frame it produced), which is
how notebooks under nbval and the tests use them; its logic lives in plain functions.
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS: dict[str, str] = {
    "autocomplete_box": "toolkit.widgets.maps",
    "compliance_explorer": "toolkit.widgets.policy",
    "ComplianceExplorer": "toolkit.widgets.policy",
    "route_planner": "toolkit.widgets.maps",
    "AutocompleteBox": "toolkit.widgets.maps",
    "RoutePlanner": "toolkit.widgets.maps",
    "air_quality_explorer": "toolkit.widgets.weather",
    "AirQualityExplorer": "toolkit.widgets.weather",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'toolkit.widgets' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)
