"""``df.toolkit``: frames draw themselves with the helper of the operation that made them."""

from __future__ import annotations

import subprocess
import sys

import matplotlib
import pandas as pd
import pytest

import toolkit
from tests.frames_of_every_function import ANDORRA, TOWNS
from toolkit._core import accessor
from toolkit._core.registry import records

matplotlib.use("Agg")


@pytest.fixture(scope="module")
def incidents(sandbox):
    conn = toolkit.connect(sandbox=sandbox, progress=False)
    try:
        return toolkit.traffic_incidents(ANDORRA, connection=conn)
    finally:
        conn.close()


def test_plot_and_explore_dispatch_on_the_operation(incidents) -> None:
    import folium
    import matplotlib.pyplot as plt

    ax = incidents.toolkit.plot()
    assert "type / severity" in ax.get_legend().get_title().get_text()
    plt.close(ax.figure)
    m = incidents.toolkit.explore(tiles="roads")
    assert isinstance(m, folium.Map)
    layers = toolkit.explore.map_summary(m)
    assert layers["features"].sum() >= len(incidents)
    # a frame derived from it keeps its provenance, so it still draws itself
    serious = incidents[incidents["severity"] == "Serious"]
    assert serious.toolkit.operation == "traffic_incidents"


def test_snapped_trace_takes_the_recorded_points_first(sandbox) -> None:
    conn = toolkit.connect(sandbox=sandbox, progress=False)
    raw = [TOWNS["Andorra la Vella"], (1.5300, 42.5100)]
    try:
        snapped = toolkit.snap_to_roads(raw, connection=conn)
    finally:
        conn.close()
    summary = toolkit.explore.map_summary(snapped.toolkit.explore(raw))
    assert summary.set_index("layer").loc["recorded", "features"] == 2
    with pytest.raises(toolkit.ValidationError, match="raw"):
        snapped.toolkit.explore()


def test_a_frame_without_a_picture_says_which_have_one() -> None:
    accessor.register()
    df = pd.DataFrame({"a": [1]})
    with pytest.raises(toolkit.ValidationError, match="route_directions"):
        df.toolkit.explore()
    df.attrs["operation"] = "sql_operations"
    with pytest.raises(toolkit.ValidationError, match="sql_operations"):
        df.toolkit.plot()


def test_every_helper_a_record_names_exists() -> None:
    named = [(kind, getattr(r, kind)) for r in records().values() for kind in ("plot", "explore")
             if getattr(r, kind)]
    assert ("plot", "compliance_by") in named and ("explore", "routes") in named
    for kind, name in named:
        assert name in getattr(toolkit, kind).__all__, (kind, name)
        assert callable(getattr(getattr(toolkit, kind), name)), (kind, name)


def test_registered_by_the_first_frame_not_by_import() -> None:
    code = ("import pandas as pd, toolkit\n"
            "assert not hasattr(pd.DataFrame, 'toolkit')\n"
            "from toolkit._core.provenance import provenance\n"
            "provenance('sql_operations', None, None)\n"
            "assert hasattr(pd.DataFrame({'a': [1]}), 'toolkit')\n")
    subprocess.run([sys.executable, "-c", code], check=True)


def test_a_frame_read_back_in_a_new_kernel_finds_its_helper() -> None:
    # the frame's operation module is not imported yet (the frame came from a file): the
    # accessor finds the operation's record all the same
    code = ("import sys, pandas as pd, toolkit\n"
            "from toolkit._core import accessor, registry\n"
            "registry._helpers = lambda kind, name: (lambda df: (kind, name, len(df)))\n"
            "accessor.register()\n"
            "df = pd.DataFrame({'a': [1, 2]})\n"
            "df.attrs['operation'] = 'traffic_incidents'\n"
            "assert 'toolkit.maps.traffic' not in sys.modules\n"
            "assert df.toolkit.plot() == ('plot', 'incidents', 2), df.toolkit.plot()\n"
            "assert df.toolkit.explore() == ('explore', 'incidents', 2)\n")
    subprocess.run([sys.executable, "-c", code], check=True)
