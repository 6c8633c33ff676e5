"""The map rules plot and explore share: what a map frames, and the colours of air-quality
readings and alert statuses, with one fallback colour each."""

from __future__ import annotations

import math

import pandas as pd
import pytest
import shapely

from toolkit._core.maprules import (
    NO_READING,
    STATUS_COLORS,
    UNKNOWN_STATUS,
    band_colour,
    band_name,
    bounds_of,
    reading_colour,
    status_colour,
)
from toolkit._spec.maps import AIR_QUALITY_BANDS, AIR_QUALITY_CATEGORIES, AIR_QUALITY_COLORS


def test_the_bounds_are_those_of_the_geometries_that_are_there() -> None:
    points = [shapely.Point(1.5, 42.5), None, shapely.Point(), shapely.Point(1.6, 42.4)]
    lines = [shapely.LineString([(1.4, 42.45), (1.55, 42.7)])]
    assert bounds_of(points) == (1.5, 42.4, 1.6, 42.5)
    assert bounds_of(points, lines) == (1.4, 42.4, 1.6, 42.7)
    assert bounds_of([None, shapely.Point()], []) is None


def test_each_index_falls_in_one_band_limits_included() -> None:
    for limit, name in zip(AIR_QUALITY_BANDS, AIR_QUALITY_CATEGORIES, strict=False):
        assert band_name(limit) == name and band_colour(limit) == AIR_QUALITY_COLORS[name]
    assert band_name(AIR_QUALITY_BANDS[0] + 0.5) == AIR_QUALITY_CATEGORIES[1]
    assert band_name(10_000) == AIR_QUALITY_CATEGORIES[-1]


@pytest.mark.parametrize(("colour", "category", "index", "expected"), [
    ("#123456", "Poor", 75.0, "#123456"),                     # the service's own colour
    (None, "Poor", 5.0, AIR_QUALITY_COLORS["Poor"]),           # else its category's
    ("", "Unknown words", 5.0, AIR_QUALITY_COLORS[AIR_QUALITY_CATEGORIES[0]]),  # else the band's
    ("red", pd.NA, 130.0, band_colour(130.0)),
    ("#123456", "Poor", math.nan, NO_READING),                 # no index: no reading
    (None, None, pd.NA, NO_READING),
    (None, None, None, NO_READING),
])
def test_a_reading_takes_the_services_colour_then_its_categorys_then_its_bands(
        colour: object, category: object, index: object, expected: str) -> None:
    assert reading_colour(colour, category, index) == expected


def test_a_status_without_a_colour_has_the_one_fallback() -> None:
    assert status_colour("New") == STATUS_COLORS["New"]
    assert status_colour("Revoked") == status_colour(None) == UNKNOWN_STATUS
    assert UNKNOWN_STATUS not in STATUS_COLORS.values()
    assert NO_READING not in AIR_QUALITY_COLORS.values()
