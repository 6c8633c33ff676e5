"""Plotting helpers (matplotlib, the ``plot`` extra): a frame in, an Axes out.

Each helper takes the frame the matching public function returns, checks the columns it needs,
never changes its input and never calls ``show()``. Each describes the chart it draws in words
made from its data (:func:`describe` reads it; in a notebook it is the picture's alt text).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from toolkit._core.lazy import attach

# The names, listed once (toolkit._core.lazy loads a module when one of them is first used).
if TYPE_CHECKING:  # pragma: no cover
    from toolkit.plot.arm import (
        backend_health as backend_health,
        encryption_posture as encryption_posture,
    )
    from toolkit.plot.description import (
        describe as describe,
        output_alt as output_alt,
        set_description as set_description,
    )
    from toolkit.plot.graph import authentication_strength_usage as authentication_strength_usage
    from toolkit.plot.maps import (
        addresses as addresses,
        incidents as incidents,
        reachable_ranges as reachable_ranges,
        routes as routes,
        snapped_trace as snapped_trace,
    )
    from toolkit.plot.matrix import travel_times as travel_times
    from toolkit.plot.policy import (
        compliance_by as compliance_by,
        compliance_trend as compliance_trend,
        noncompliance_heatmap as noncompliance_heatmap,
    )
    from toolkit.plot.provenance import mark_sandbox as mark_sandbox
    from toolkit.plot.weather import (
        air_quality_forecast as air_quality_forecast,
        air_quality_hours as air_quality_hours,
        air_quality_map as air_quality_map,
        alert_timeline as alert_timeline,
        forecast_along as forecast_along,
        pollutants as pollutants,
    )

__getattr__, __dir__ = attach(__name__, __file__)
