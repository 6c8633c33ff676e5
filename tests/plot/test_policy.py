"""plot.compliance_by, noncompliance_heatmap and compliance_trend drawn from the frames
policy_states and compliance_trend return, without changing them."""

from __future__ import annotations

from datetime import timedelta

import pandas as pd
import pytest

import toolkit
from toolkit._core.errors import ValidationError


@pytest.fixture(scope="module")
def latest_frame(sandbox):
    """The last day of the web resource group of the production subscription, and that window."""
    world = sandbox.world
    sub = next(s for s in world.subscriptions if s.name == "retail-prod")
    end = pd.Timestamp(world.epoch)
    start = end - timedelta(days=1)
    conn = toolkit.connect(sandbox=sandbox, progress=False)
    yield toolkit.policy_states(sub.id, "rg-web-weu", start=start, end=end, connection=conn), \
        (start, end)
    conn.close()


def test_plots_draw_from_the_frames(conn, sandbox, latest_frame) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    full, _ = latest_frame
    before = full.copy()
    ax = toolkit.plot.compliance_by(full, by="resourceType")
    groups = full["resourceType"].nunique()
    assert len(ax.get_yticklabels()) == groups
    assert {t.get_text() for t in ax.get_legend().get_texts()} <= {
        "Compliant", "NonCompliant", "Conflict", "Exempt", "Unknown"}
    ax = toolkit.plot.noncompliance_heatmap(full)
    nc = full[full.complianceState == "NonCompliant"]
    assert len(ax.get_yticklabels()) == nc["resourceType"].nunique()
    trend = toolkit.compliance_trend(full)
    ax = toolkit.plot.compliance_trend(trend, events=[(full["timestamp"].min(), "start")])
    bottom, top = ax.get_ylim()
    assert bottom == 0 and 100 <= top <= 105
    pd.testing.assert_frame_equal(full, before)  # inputs untouched
    plt.close("all")
    with pytest.raises(ValidationError, match="complianceState"):
        toolkit.plot.compliance_by(full[["resourceId", "resourceType"]], by="resourceType")
    with pytest.raises(ValidationError, match="must differ"):
        toolkit.plot.noncompliance_heatmap(full, rows="resourceType", columns="resourceType")


def test_trend_draws_partial_periods_apart_and_series_off_the_state_colours(latest_frame) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.colors import to_hex

    from toolkit.plot.policy import COMPLIANCE_COLORS

    full, _ = latest_frame
    trend = toolkit.compliance_trend(full, by="policyAssignmentName")
    assert (~trend["complete"]).any()  # a window from one morning to the next: two partial days
    ax = toolkit.plot.compliance_trend(trend, by="policyAssignmentName")
    partial_days = set(pd.to_datetime(trend.loc[~trend["complete"], "day"]).dt.tz_convert(None))
    import matplotlib.dates as mdates

    for line in ax.get_lines():
        days = {pd.Timestamp(mdates.num2date(x)).tz_convert(None) for x in
                mdates.date2num(line.get_xdata())}
        assert not days & partial_days  # no line joins a partial period
        assert to_hex(line.get_color()) not in {to_hex(c) for c in COMPLIANCE_COLORS.values()}
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert any("partial period" in t for t in legend)
    styles = {(to_hex(line.get_color()), line.get_marker(), line.get_linestyle())
              for line in ax.get_lines()}
    assert len(styles) == len(ax.get_lines())  # every series tells itself apart
    plt.close("all")


def test_compliance_by_draws_the_services_own_summary(conn, sandbox, latest_frame) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    world = sandbox.world
    sub = next(s for s in world.subscriptions if s.name == "retail-prod")
    _, (start, end) = latest_frame
    summary = toolkit.policy_summary(sub.id, start=start, end=end, connection=conn)
    before = summary.copy()
    ax = toolkit.plot.compliance_by(summary, by="policyAssignmentName")
    rows = summary[summary["level"] == "assignment"]
    states = [c for c in rows.columns if c.startswith("resources_")]
    expected = dict(zip(rows["policyAssignmentName"].astype(str),
                        rows[states].fillna(0).sum(axis=1), strict=True))
    drawn: dict[str, float] = {}
    labels = [t.get_text() for t in ax.get_yticklabels()]
    for patch in ax.patches:
        name = labels[round(patch.get_y() + patch.get_height() / 2)]
        drawn[name] = drawn.get(name, 0) + patch.get_width()
    assert drawn == {k: v for k, v in expected.items() if v}
    pd.testing.assert_frame_equal(summary, before)
    with pytest.raises(ValidationError, match="by"):
        toolkit.plot.compliance_by(summary, by="resourceType")
    plt.close("all")


def test_a_series_drawn_under_another_with_the_same_values_stays_visible() -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    days = pd.date_range("2026-11-01", periods=4, freq="D", tz="UTC")
    trend = pd.DataFrame({"day": list(days) * 3, "a": ["one"] * 4 + ["two"] * 4 + ["three"] * 4,
                          "compliance_pct": [100.0] * 8 + [50.0, 60, 70, 80],
                          "non_compliant": [0] * 8 + [2, 2, 1, 1], "complete": True})
    ax = toolkit.plot.compliance_trend(trend, by="a")
    one, three, two = ax.get_lines()  # drawn in sorted order: "two" over "one"
    assert one.get_zorder() < two.get_zorder()
    assert one.get_markersize() > two.get_markersize()  # "one" lies under "two": drawn larger
    assert one.get_linewidth() > two.get_linewidth()
    assert three.get_markersize() == two.get_markersize()  # nothing covers "three"
    plt.close("all")
