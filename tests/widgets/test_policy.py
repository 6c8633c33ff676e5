"""The compliance explorer: driven from code, offering the scopes it is given, with the window
ending at the service's newest evaluation; no look inside the sandbox."""

from __future__ import annotations

from datetime import timedelta

import matplotlib
import pandas as pd
import pytest

import toolkit
from toolkit._core.errors import ValidationError

matplotlib.use("Agg")


@pytest.fixture
def scope(sandbox) -> tuple[str, str]:
    """The web resource group of the production subscription."""
    sub = next(s for s in sandbox.world.subscriptions if s.name == "retail-prod")
    return sub.id, "rg-web-weu"


def test_explorer_is_driven_programmatically(conn, sandbox, scope) -> None:
    from toolkit.widgets.policy import compliance_view

    sub, rg = scope
    end = pd.Timestamp(sandbox.world.epoch)
    explorer = toolkit.widgets.compliance_explorer(sub, rg, end=end, connection=conn)
    view = explorer.select(window_days=7, state="NonCompliant", by="location")
    records = toolkit.policy_states(sub, rg, start=end - timedelta(days=7), end=end,
                                    filter="complianceState eq 'NonCompliant'",
                                    connection=conn)
    want = toolkit.compliance_summary(records, by="resourceLocation")
    pd.testing.assert_frame_equal(view.summary, want)
    assert explorer.frame is view.summary and "<table" in explorer._table.value
    assert explorer.chart_png[:4] == b"\x89PNG"
    assert '<img src="data:image/png;base64,' in explorer._chart.value
    again = explorer.select(state=None, by="assignment")
    assert again.state is None and again.by == "policyAssignmentName"
    assert again.summary["resources"].sum() >= view.summary["resources"].sum()
    with pytest.raises(ValidationError, match="window_days"):
        compliance_view(sub, rg, window_days=0, connection=conn)
    with pytest.raises(ValidationError, match="state"):
        compliance_view(sub, rg, state="Bad", connection=conn)
    with pytest.raises(ValidationError, match="by"):
        compliance_view(sub, rg, by="colour", connection=conn)


def test_explorer_offers_the_scopes_it_is_given_and_ends_at_the_newest_evaluation(
        conn, sandbox, scope) -> None:
    from toolkit.widgets.policy import newest_evaluation, scope_table

    sub, rg = scope
    newest = newest_evaluation(sub, rg, connection=conn)
    assert sandbox.now() - pd.Timedelta(days=1) <= newest <= sandbox.now()
    explorer = toolkit.widgets.compliance_explorer(
        scopes=[(sub, rg), (sub, "rg-other")], connection=conn)
    assert [o[1] for o in explorer._scope.options] == [(sub, rg), (sub, "rg-other")]
    assert explorer.view is not None
    assert explorer.view.records["timestamp"].max() <= newest
    table = scope_table(pd.DataFrame({"subscription_id": [sub, sub], "resource_group": [rg, rg],
                                      "label": ["shop", "shop again"]}))
    assert table["label"].tolist() == ["shop"]
    with pytest.raises(ValidationError, match="scopes"):
        toolkit.widgets.compliance_explorer(connection=conn)
    with pytest.raises(ValidationError, match="scopes"):
        scope_table([(sub, 3)])


def test_every_dropdown_shows_its_label_and_the_view_stays_in_a_report(conn, sandbox,
                                                                       scope) -> None:
    sub, rg = scope
    explorer = toolkit.widgets.compliance_explorer(sub, rg, end=pd.Timestamp(
        sandbox.world.epoch), connection=conn)
    labels = explorer.labels()
    assert labels["state"] == "all states" and all(labels.values())
    assert explorer.view.state is None
    explorer.select(state="NonCompliant")
    assert explorer.labels()["state"] == "NonCompliant"
    again = explorer.select(state=None)
    assert again.state is None and explorer.labels()["state"] == "all states"
    assert set(again.records["complianceState"].astype(str)) > {"NonCompliant"}
    data = explorer._repr_mimebundle_()
    assert "application/vnd.jupyter.widget-view+json" in data
    assert "state: all states" in data["text/html"] and "<table" in data["text/html"]
    assert "data:image/png;base64," in data["text/html"]


def test_the_explorers_controls_are_named_and_its_picture_described(conn, sandbox,
                                                                    scope) -> None:
    import html

    sub, rg = scope
    explorer = toolkit.widgets.compliance_explorer(sub, rg, end=pd.Timestamp(
        sandbox.world.epoch), connection=conn)
    # every control is labelled (ipywidgets writes the description as the control's label)
    assert [c.description for c in (explorer._scope, explorer._window, explorer._state,
                                    explorer._by)] == ["scope", "window", "state", "group by"]
    # the picture's text alternative: the chart's description, numbers of the summary shown
    summary = explorer.frame
    alt = explorer.chart_description
    assert alt.startswith("Compliance by policy assignment: ")
    worst = summary.iloc[0]
    assert f"{worst['policyAssignmentName']}: {worst['compliance_pct']:.0f}% compliant" in alt
    assert f'alt="{html.escape(alt)}"' in explorer._chart.value
    assert f'alt="{html.escape(alt)}"' in explorer.static_html()
    explorer.select(state="Exempt")  # nothing exempt here: no picture, and no empty image
    if not len(explorer.frame):
        assert explorer._chart.value == "" and explorer.chart_png == b""
