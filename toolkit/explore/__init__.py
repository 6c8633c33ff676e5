"""Interactive maps (Leaflet through folium, the ``maps`` extra): a frame in, a map out.

Each helper takes the frame the matching public function returns, never changes it, and returns a
``folium.Map`` that Jupyter shows as an interactive map: layers that can be switched on and off,
tooltips carrying the frame's own columns, and the shipped Andorra roads as background where no
web tiles can be reached. ``import toolkit`` imports none of this.
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {
    "routes": "toolkit.explore.maps",
    "snapped_trace": "toolkit.explore.maps",
    "incidents": "toolkit.explore.maps",
    "suggestions": "toolkit.explore.maps",
    "air_quality": "toolkit.explore.weather",
    "alerts": "toolkit.explore.weather",
    "map_summary": "toolkit.explore._inspect",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'toolkit.explore' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)
