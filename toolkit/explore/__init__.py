"""Interactive maps (Leaflet through folium, the ``maps`` extra): a frame in, a map out.

Each helper takes the frame the matching public function returns, never changes it, and returns a
``folium.Map`` that Jupyter shows as an interactive map: layers that can be switched on and off,
tooltips carrying the frame's own columns, and the shipped Andorra roads as background where no
web tiles can be reached. ``import toolkit`` imports none of this.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from toolkit._core.lazy import attach

# The names, listed once (toolkit._core.lazy loads a module when one of them is first used).
if TYPE_CHECKING:  # pragma: no cover
    from toolkit.explore._inspect import map_summary as map_summary
    from toolkit.explore.maps import (
        addresses as addresses,
        incidents as incidents,
        reachable_ranges as reachable_ranges,
        routes as routes,
        snapped_trace as snapped_trace,
        suggestions as suggestions,
    )
    from toolkit.explore.weather import air_quality as air_quality, alerts as alerts

__getattr__, __dir__ = attach(__name__, __file__)
