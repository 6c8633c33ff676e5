"""The frames the interactive maps are drawn from: routes, incidents, a snapped trace, air quality,
forecasts, alerts and suggestions, read once from the sandbox."""

from __future__ import annotations

import geopandas as gpd
import pytest

import toolkit
from tests.frames_of_every_function import ANDORRA, TOWNS

PLACES = list(TOWNS.values())


def tooltip_columns(df) -> list[str]:
    """The columns of a frame: all but the geometries (a popup's full record)."""
    return [c for c in df.columns
            if not isinstance(df[c].dtype, gpd.array.GeometryDtype) and c != "geometry"]


def tooltip_labels(operation: str) -> list[str]:
    """The labels of the tooltip fields the table declares for an operation."""
    from toolkit.explore._fields import TOOLTIPS

    return [f.label for f in TOOLTIPS[operation]]


@pytest.fixture(scope="session")  # read once for the modules of a worker (none changes them)
def frames(sandbox):
    conn = toolkit.connect(sandbox=sandbox, progress=False)
    queries = [{"origin": TOWNS["Andorra la Vella"], "destination": TOWNS["Canillo"]},
               {"origin": TOWNS["Encamp"], "destination": TOWNS["Ordino"]},
               {"origin": (-30.0, 10.0), "destination": TOWNS["Ordino"]}]  # fails: a row
    raw = [TOWNS["Andorra la Vella"], (1.5260, 42.5090), (1.5300, 42.5100), (1.5400, 42.5150)]
    out = {
        "routes": toolkit.route_directions(queries, max_route_count=2, connection=conn),
        "incidents": toolkit.traffic_incidents(ANDORRA, connection=conn),
        "raw": raw,
        "snapped": toolkit.snap_to_roads(raw, include_speed_limit=True, connection=conn),
        "air": toolkit.air_quality(PLACES, connection=conn),
        "forecast": toolkit.air_quality_forecast(PLACES[:2], duration=3, connection=conn),
        "alerts": toolkit.severe_weather_alerts(PLACES, connection=conn),
        "suggestions": toolkit.autocomplete("Can", coordinates=TOWNS["Canillo"],
                                            connection=conn),
        "addresses": toolkit.reverse_geocode([TOWNS["Ordino"], TOWNS["Canillo"], (-30.0, 30.0)],
                                             connection=conn),
        "ranges": toolkit.route_range([TOWNS["Encamp"], (-30.0, 10.0), "Ordino"],
                                      time_budget=[300, 600], connection=conn),
    }
    conn.close()
    return out
