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
    assert ax.get_ylim() == (0, 100)
    pd.testing.assert_frame_equal(full, before)  # inputs untouched
    plt.close("all")
    with pytest.raises(ValidationError, match="complianceState"):
        toolkit.plot.compliance_by(full[["resourceId", "resourceType"]], by="resourceType")
    with pytest.raises(ValidationError, match="must differ"):
        toolkit.plot.noncompliance_heatmap(full, rows="resourceType", columns="resourceType")
