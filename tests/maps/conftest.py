"""Maps fixtures: the sandbox's road network and GPS traces driven along real routes."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from toolkit.sandbox.maps.roads.matching import sample_trace
from toolkit.sandbox.maps.roads.network import network
from toolkit.sandbox.maps.roads.routing import route

#: Town centres (lon, lat) from the map data.
TOWNS = {
    "Andorra la Vella": (1.5218, 42.5075),
    "Canillo": (1.5975, 42.5676),
    "Sant Julià de Lòria": (1.4906, 42.4636),
    "Ordino": (1.5331, 42.5560),
    "La Massana": (1.5148, 42.5450),
    "Encamp": (1.5804, 42.5345),
    "Soldeu": (1.6675, 42.5766),
}


@pytest.fixture(scope="session")
def net() -> Any:
    return network()


def drive(stops: list[tuple[float, float]], *, spacing_m: float = 10.0, noise_m: float = 4.0,
          seed: int = 1) -> np.ndarray:
    """A GPS trace along the fastest road route through ``stops`` (sandbox router)."""
    net = network()
    usable = net.usable("driving")
    snapped = [net.nearest(p, usable)[:2] for p in stops]
    found = route(net, stops, snapped=snapped)
    assert found is not None
    line = [c for leg in found.coordinates for c in leg]
    return sample_trace(line, spacing_m=spacing_m, noise_m=noise_m, seed=seed)


#: Spec 2 §2.5, written out independently of the code under test.
SPEC_BANDS = [(20, "Excellent"), (50, "Fair"), (100, "Poor"), (150, "Unhealthy"),
              (250, "Very unhealthy")]


def spec_category(value: float) -> str:
    for limit, name in SPEC_BANDS:
        if value <= limit:
            return name
    return "Dangerous"
