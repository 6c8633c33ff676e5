"""What type checkers see of the public functions.

mypy checks this file with the package (``make test``); it is never run. Each ``assert_type``
fails the check when a signature stops saying what the function returns, and each
``type: ignore[arg-type]`` fails it (as an unused ignore) when a wrong input starts to pass.
"""

from __future__ import annotations

from typing import assert_type

import dask.dataframe as dd
import folium
import geopandas as gpd
import numpy as np
import pandas as pd
import shapely
from matplotlib.axes import Axes

import toolkit.plot
from toolkit import (
    BBoxLike,
    ItemOperation,
    Operation,
    PointsLike,
    air_quality,
    air_quality_forecast,
    autocomplete,
    backend_health,
    create_eventstream,
    geocode,
    policy_states,
    read_policy_history,
    resume_operation,
    severe_weather_alerts,
    snap_to_roads,
    traffic_incidents,
    update_encryption_protector,
)
from toolkit._core.accessor import ToolkitAccessor

SUB = "00000000-0000-0000-0000-000000000000"


def wait_decides_the_return_type(token: str) -> None:
    assert_type(update_encryption_protector(SUB, "rg", "srv", server_key_type="ServiceManaged"),
                pd.DataFrame)
    assert_type(update_encryption_protector(SUB, "rg", "srv", server_key_type="ServiceManaged",
                                            wait=False), Operation[pd.DataFrame])
    assert_type(update_encryption_protector(SUB, "rg", "srv", server_key_type="ServiceManaged",
                                            wait=True), pd.DataFrame)
    assert_type(backend_health(SUB, "rg", "gw"), pd.DataFrame)
    assert_type(backend_health(SUB, "rg", "gw", wait=False), Operation[pd.DataFrame])
    assert_type(create_eventstream(SUB, "stream"), pd.DataFrame)
    assert_type(create_eventstream(SUB, "stream", wait=False), ItemOperation[pd.DataFrame])
    assert_type(update_encryption_protector(SUB, "rg", "srv", server_key_type="ServiceManaged",
                                            wait=False).result(), pd.DataFrame)
    assert_type(create_eventstream(SUB, "stream", wait=False).result(timeout=5), pd.DataFrame)
    assert_type(resume_operation(token), pd.DataFrame)
    assert_type(resume_operation(token, wait=False), Operation[pd.DataFrame])
    assert_type(backend_health(SUB, "rg", "gw", wait=False).continuation_token, str | None)
    assert_type(create_eventstream(SUB, "stream", wait=False).percent_complete,
                int | float | None)


def wait_given_as_a_bool_reads_as_either(flag: bool) -> None:
    # ``wait=True``/``wait=False`` read literally; a ``bool`` variable gives either result.
    assert_type(backend_health(SUB, "rg", "gw", wait=flag), pd.DataFrame | Operation[pd.DataFrame])
    assert_type(create_eventstream(SUB, "stream", wait=flag),
                pd.DataFrame | ItemOperation[pd.DataFrame])
    assert_type(resume_operation("token", wait=flag), pd.DataFrame | Operation[pd.DataFrame])
    assert_type(backend_health(SUB, "rg", "gw", wait=True if flag else False),  # noqa: SIM210
                pd.DataFrame | Operation[pd.DataFrame])


def geo_inputs(places: gpd.GeoDataFrame, table: pd.DataFrame) -> None:
    point = shapely.Point(1.52, 42.51)
    assert_type(air_quality((1.52, 42.51)), gpd.GeoDataFrame)
    air_quality([(1.52, 42.51), (1.6, 42.56)])
    air_quality(np.array([[1.52, 42.51]]))
    air_quality("Andorra la Vella")
    mixed: list[str | tuple[float, float] | shapely.Point] = ["Ordino", (1.52, 42.51), point]
    air_quality(mixed)
    assert_type(geocode(["Ordino", "Canillo"], top=1), gpd.GeoDataFrame)
    snap_to_roads("Ordino")  # type: ignore[arg-type]
    air_quality(point)
    air_quality([point, shapely.Point(1.6, 42.56)])
    air_quality(places)
    air_quality(places.geometry)
    air_quality(table)
    air_quality_forecast(places, duration=3)
    severe_weather_alerts(shapely.MultiPoint([(1.52, 42.51), (1.6, 42.56)]))
    snap_to_roads(shapely.LineString([(1.52, 42.51), (1.6, 42.56)]))
    snap_to_roads(places)
    traffic_incidents((1.4, 42.4, 1.8, 42.7))
    traffic_incidents(shapely.box(1.4, 42.4, 1.8, 42.7))
    traffic_incidents(places)
    autocomplete("Can", coordinates=(1.52, 42.51))
    autocomplete("Can", coordinates=point, bbox=places)
    traffic_incidents("1.4,42.4,1.8,42.7")  # type: ignore[arg-type]
    autocomplete("Can", coordinates={"lat": 42.51})  # type: ignore[arg-type]


def aliases_name_the_accepted_shapes(points: PointsLike, box: BBoxLike) -> None:
    air_quality(points)
    snap_to_roads(points)
    traffic_incidents(box)
    autocomplete("Can", bbox=box)


def the_engine_names_the_frame(engine: str) -> None:
    assert_type(policy_states(SUB), pd.DataFrame)
    assert_type(policy_states(SUB, engine="pandas"), pd.DataFrame)
    assert_type(policy_states(SUB, engine="dask"), dd.DataFrame)
    assert_type(policy_states(SUB, engine=engine), pd.DataFrame | dd.DataFrame)
    assert_type(read_policy_history("store"), pd.DataFrame)
    assert_type(read_policy_history("store", engine="dask"), dd.DataFrame)


def plot_helpers_return_the_axes_they_drew_on(df: pd.DataFrame, gdf: gpd.GeoDataFrame,
                                              ax: Axes) -> None:
    assert_type(toolkit.plot.air_quality_forecast(df), Axes)
    assert_type(toolkit.plot.air_quality_map(gdf, ax=ax), Axes)
    assert_type(toolkit.plot.alert_timeline(df, now="2026-11-20T09:00Z"), Axes)
    assert_type(toolkit.plot.authentication_strength_usage(df), Axes)
    assert_type(toolkit.plot.backend_health(df, ax=ax), Axes)
    assert_type(toolkit.plot.compliance_by(df, "resourceGroup"), Axes)
    assert_type(toolkit.plot.compliance_trend(df, by="policyAssignmentName"), Axes)
    assert_type(toolkit.plot.encryption_posture(df), Axes)
    assert_type(toolkit.plot.forecast_along(df, "km"), Axes)
    assert_type(toolkit.plot.incidents(gdf), Axes)
    assert_type(toolkit.plot.mark_sandbox(ax, df, gdf), Axes)
    assert_type(toolkit.plot.noncompliance_heatmap(df), Axes)
    assert_type(toolkit.plot.pollutants(df, location=0), Axes)
    assert_type(toolkit.plot.routes(gdf, incidents=gdf), Axes)
    assert_type(toolkit.plot.snapped_trace(gdf, gdf), Axes)
    toolkit.plot.routes(gdf, ax=ax.figure)  # type: ignore[arg-type]


def the_accessor_returns_what_its_helpers_do(df: pd.DataFrame) -> None:
    assert_type(ToolkitAccessor(df).plot(), Axes)
    assert_type(ToolkitAccessor(df).explore(tiles="roads"), folium.Map)


def explore_maps_return_the_folium_map(gdf: gpd.GeoDataFrame, df: pd.DataFrame) -> None:
    import ipywidgets

    import toolkit.explore
    from toolkit.widgets import autocomplete_box, route_planner

    assert_type(toolkit.explore.routes(gdf), folium.Map)
    assert_type(toolkit.explore.snapped_trace(gdf, gdf), folium.Map)
    assert_type(toolkit.explore.incidents(gdf), folium.Map)
    assert_type(toolkit.explore.suggestions(df), folium.Map)
    assert_type(toolkit.explore.air_quality(gdf), folium.Map)
    assert_type(toolkit.explore.alerts(gdf), folium.Map)
    assert_type(autocomplete_box().widget, ipywidgets.VBox)
    assert_type(route_planner().widget, ipywidgets.VBox)
