"""Widgets (ipywidgets, the ``widgets`` extra) built on the public functions and plot helpers.

Every widget can be driven programmatically (set its value, read the frame it produced), which is
how notebooks under nbval and the tests use them; its logic lives in plain functions.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from toolkit._core.lazy import attach

# The names, listed once (toolkit._core.lazy loads a module when one of them is first used).
if TYPE_CHECKING:  # pragma: no cover
    from toolkit.widgets.maps import (
        AutocompleteBox as AutocompleteBox,
        RoutePlanner as RoutePlanner,
        autocomplete_box as autocomplete_box,
        route_planner as route_planner,
    )
    from toolkit.widgets.policy import (
        ComplianceExplorer as ComplianceExplorer,
        compliance_explorer as compliance_explorer,
    )
    from toolkit.widgets.weather import (
        AirQualityExplorer as AirQualityExplorer,
        air_quality_explorer as air_quality_explorer,
    )

__getattr__, __dir__ = attach(__name__, __file__)
