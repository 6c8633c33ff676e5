"""compliance_summary and compliance_trend over the frames policy_states returns from the
sandbox tenant: worst state per resource, the story the tenant's history tells, validation."""

from __future__ import annotations

from datetime import timedelta

import pandas as pd
import pytest

import toolkit
from toolkit._core.errors import ValidationError


def test_compliance_summary_counts_resources_by_worst_state(conn, scope, latest_frame) -> None:
    full, _ = latest_frame
    summary = toolkit.compliance_summary(full, by="policyAssignmentName")
    assert {"resources", "compliant", "non_compliant", "other", "compliance_pct"} <= \
        set(summary.columns)
    assert summary["compliance_pct"].is_monotonic_increasing
    for row in summary.itertuples():
        part = full[full.policyAssignmentName == row.policyAssignmentName]
        resources = part["resourceId"].nunique()
        nc = part[part.complianceState == "NonCompliant"]["resourceId"].nunique()
        assert row.resources == resources and row.non_compliant == nc
        assert row.compliant + row.non_compliant + row.other == resources
    overall = toolkit.compliance_summary(full, by=None)
    assert len(overall) == 1 and overall["resources"].iloc[0] == full["resourceId"].nunique()
    with pytest.raises(ValidationError, match="by"):
        toolkit.compliance_summary(full, by="nosuch")
    with pytest.raises(ValidationError, match="complianceState"):
        toolkit.compliance_summary(full[["resourceId"]])


def test_the_story_remediation_new_assignment_exemptions_conflicts(conn, sandbox) -> None:
    world = sandbox.world
    sub = next(s for s in world.subscriptions if s.name == "retail-prod")
    start = pd.Timestamp(world.epoch) - timedelta(days=59)
    hist = toolkit.policy_states(sub.id, "rg-data-weu", resource="default", start=start,
                                 filter="policyAssignmentName eq 'monitoring-baseline'",
                                 connection=conn)
    trend = toolkit.compliance_trend(hist)
    before = trend[trend.day < pd.Timestamp(world.epoch) - timedelta(days=42)]
    after = trend[trend.day > pd.Timestamp(world.epoch) - timedelta(days=20)]
    assert after["compliance_pct"].mean() > before["compliance_pct"].mean() + 25
    assert str(trend["compliant"].dtype) == "Int64"
    # the allowed-locations assignment is 9 days old and lands non-compliant somewhere
    locs = toolkit.policy_states(sub.id, "rg-api-weu", resource="default", start=start,
                                 filter="policyAssignmentName eq 'allowed-locations-eu'",
                                 connection=conn)
    assert locs["timestamp"].min() >= pd.Timestamp(world.epoch) - timedelta(days=10)
    bad = locs[locs.complianceState == "NonCompliant"]
    assert len(bad) > 0 and not bad["resourceLocation"].isin(
        ["westeurope", "northeurope", "francecentral", "swedencentral", "uksouth"]).any()
    web = toolkit.policy_states(sub.id, "rg-web-weu", connection=conn)
    assert (web["complianceState"] == "Conflict").any()
    dev = next(s for s in world.subscriptions if s.name == "retail-dev")
    sandbox_rg = toolkit.policy_states(dev.id, "rg-sandbox-dev", connection=conn)
    assert (sandbox_rg["complianceState"] == "Exempt").any()
    assert (sandbox_rg["complianceState"] == "Unknown").any() or \
        not (sandbox_rg["resourceType"] == "/Vendor.KeyVault/vaults").any()


def _records(times: list[str], attrs_window: object = None) -> pd.DataFrame:
    df = pd.DataFrame({
        "timestamp": pd.to_datetime(times, utc=True),
        "resourceId": [f"/r/{i % 3}" for i in range(len(times))],
        "policyAssignmentId": "/a/1", "policyDefinitionId": "/d/1",
        "complianceState": ["Compliant", "NonCompliant"] * (len(times) // 2) +
                           ["Compliant"] * (len(times) % 2)})
    if attrs_window is not None:
        df.attrs["window"] = attrs_window
    return df


def test_trend_marks_periods_the_window_only_partly_covers() -> None:
    times = ["2026-11-17T10:00Z", "2026-11-17T20:00Z", "2026-11-18T03:00Z", "2026-11-18T15:00Z",
             "2026-11-19T12:00Z", "2026-11-20T08:00Z"]
    # the window policy_states records: 09:00 to 09:00, so the 17th and the 20th are partial
    trend = toolkit.compliance_trend(_records(times, ["2026-11-17T09:00:00Z",
                                                       "2026-11-20T09:00:00Z"]))
    assert str(trend["complete"].dtype) == "boolean"
    assert dict(zip(trend["day"].dt.day, trend["complete"], strict=True)) == {
        17: False, 18: True, 19: True, 20: False}
    # a window on day boundaries covers every day whole
    whole = toolkit.compliance_trend(_records(times), window=("2026-11-17", "2026-11-21"))
    assert whole["complete"].all()
    # weeks: one window of four days covers no week whole
    weeks = toolkit.compliance_trend(_records(times), freq="W", window=("2026-11-17",
                                                                        "2026-11-21"))
    assert not weeks["complete"].any()
    # no window known: the first and last periods may be cut, the rest are whole
    unknown = toolkit.compliance_trend(_records(times))
    assert unknown["complete"].tolist() == [False, True, True, False]
    assert toolkit.compliance_trend(_records(times).iloc[:0])["complete"].dtype == "boolean"
    with pytest.raises(ValidationError, match="window"):
        toolkit.compliance_trend(_records(times), window="2026-11-17")


def test_policy_states_records_the_window_asked(conn, sandbox) -> None:
    world = sandbox.world
    sub = next(s for s in world.subscriptions if s.name == "retail-prod")
    end = pd.Timestamp(world.epoch)
    hist = toolkit.policy_states(sub.id, "rg-data-weu", resource="default",
                                 start=end - timedelta(days=3), end=end,
                                 filter="policyAssignmentName eq 'monitoring-baseline'",
                                 connection=conn)
    assert hist.attrs["window"] == [(end - timedelta(days=3)).strftime("%Y-%m-%dT%H:%M:%SZ"),
                                    end.strftime("%Y-%m-%dT%H:%M:%SZ")]
    trend = toolkit.compliance_trend(hist)
    partial = trend[~trend["complete"]]
    # the sandbox's epoch is not midnight: the window's first and last days are partial
    assert end != end.normalize()
    assert list(partial["day"]) == [(end - timedelta(days=3)).normalize(), end.normalize()]
