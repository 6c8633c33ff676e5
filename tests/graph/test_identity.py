"""authentication_strength_usage, the strength policy list and the audit, over HTTP."""

from __future__ import annotations

import logging

import pandas as pd
import pytest

import toolkit
from tests.conftest import example
from tests.replay import Answer, replay_server
from toolkit._core.errors import ValidationError
from toolkit._core.frames import build_frame
from toolkit.graph.identity import STRENGTH_AUDIT, STRENGTH_POLICIES, STRENGTH_USAGE, usage_rows
from toolkit.sandbox.graph import identity as sandbox_identity

MFA = "00000000-0000-0000-0000-000000000002"
PHISHING_RESISTANT = "00000000-0000-0000-0000-000000000004"
EX = "16-graph-authentication-strength-usage"


@pytest.fixture(autouse=True)
def _fresh_tenant_quota(sandbox):
    sandbox_identity.limits(sandbox).refill()
    yield


@pytest.fixture(scope="module")
def tenant(sandbox):
    return sandbox.world.section("identity")


def _expected(tenant, strength_id):
    """(id, requirement) pairs from the world: mfa unless another control can stand in."""
    return sorted((p.id, "none" if p.operator == "OR" and p.controls else "mfa")
                  for p in tenant.policies if p.strength_id == strength_id)


def _check_schema(df, schema):
    assert list(df.columns) == schema.names
    for col in schema.columns:
        assert df[col.name].dtype == col.dtype() or (
            col.kind == "category" and isinstance(df[col.name].dtype, pd.CategoricalDtype)), \
            col.name


# ---------------------------------------------------------------------------- real example

def test_shared_example_parses_into_the_usage_frame() -> None:
    ex = example(EX, "authenticationstrengthpolicy-usage.json")
    body = ex["responses"]["200"]["body"]
    df = build_frame(usage_rows(body, "00000000-0000-0000-0000-000000000003"), STRENGTH_USAGE)
    _check_schema(df, STRENGTH_USAGE)
    expected = [(req, p["displayName"], p["id"], p["grantControls"]["authenticationStrength"]["id"],
                 p["grantControls"]["controls"]) for req in ("mfa", "none") for p in body[req]]
    got = list(zip(df["requirement"].astype(str), df["displayName"], df["id"],
                   df["grantControls.authenticationStrength.id"], df["grantControls.controls"],
                   strict=True))
    assert got == expected
    assert list(df["requirement"].cat.categories) == ["mfa", "none"]
    assert df["policy_id"].eq("00000000-0000-0000-0000-000000000003").all()
    assert df["state"].isna().all() and df["error"].isna().all()


def test_shared_example_replayed_over_http(waits) -> None:
    ex = example(EX, "authenticationstrengthpolicy-usage.json")
    body = ex["responses"]["200"]["body"]
    with replay_server() as rp:
        conn = toolkit.connect(base_url=rp.url, token="example-token-0123456789", progress=False)
        conn.sleep = waits
        rp.add("GET", "/beta/policies/authenticationStrengthPolicies/[^/]+/usage$",
               Answer(200, body))
        df = toolkit.authentication_strength_usage(MFA, connection=conn)
        assert rp.seen == [("GET", f"/beta/policies/authenticationStrengthPolicies/{MFA}/usage")]
        conn.close()
    assert df["displayName"].tolist() == ["Conditional Access Policy 1",
                                          "Conditional Access Policy 2"]
    assert df["requirement"].astype(str).tolist() == ["mfa", "none"]
    assert df["grantControls.controls"].tolist() == [["MfaAndChangePassword"],
                                                     ["RequireCompliantDevice"]]


def test_items_given_as_bare_strings_are_kept() -> None:
    second = {"id": "5d7d5a7f-dd35-412b-a18d-5411d8eafe8f",
              "grantControls": {"controls": "RequireCompliantDevice"}}
    body = {"@odata.context": "x", "mfa": ["a26dbede-a6c0-4156-92e1-6c86dd7bc561", second],
            "none": ["Legacy policy without an id"]}
    df = build_frame(usage_rows(body, MFA), STRENGTH_USAGE)
    assert len(df) == 3
    assert df["id"].tolist()[:2] == ["a26dbede-a6c0-4156-92e1-6c86dd7bc561",
                                     "5d7d5a7f-dd35-412b-a18d-5411d8eafe8f"]
    assert pd.isna(df["id"].iloc[2]) and df["displayName"].iloc[2] == "Legacy policy without an id"
    assert df["requirement"].astype(str).tolist() == ["mfa", "mfa", "none"]
    assert df["grantControls.controls"].iloc[1] == ["RequireCompliantDevice"]


# ---------------------------------------------------------------------------- sandbox, over HTTP

def test_usage_splits_policies_by_multi_factor_requirement(conn, sandbox, tenant) -> None:
    with sandbox.recording() as log:
        df = toolkit.authentication_strength_usage(PHISHING_RESISTANT, connection=conn)
    assert [(r.method, r.path, r.status) for r in log] == [
        ("GET", f"/beta/policies/authenticationStrengthPolicies/{PHISHING_RESISTANT}/usage", 200)]
    _check_schema(df, STRENGTH_USAGE)
    assert sorted(zip(df["id"], df["requirement"].astype(str), strict=True)) == \
        _expected(tenant, PHISHING_RESISTANT)
    assert {"mfa", "none"} <= set(df["requirement"].astype(str))
    assert df["grantControls.authenticationStrength.id"].eq(PHISHING_RESISTANT).all()
    assert df["policy_id"].eq(PHISHING_RESISTANT).all()
    none = df[df["requirement"] == "none"]
    assert none["grantControls.operator"].eq("OR").all()
    assert none["grantControls.builtInControls"].map(len).gt(0).all()
    assert set(df["state"].astype(str)) <= {"enabled", "disabled",
                                            "enabledForReportingButNotEnforced"}
    assert df.attrs["operation"] == "authentication_strength_usage"
    assert df.attrs["api_version"] == "beta" and len(df.attrs["request_ids"]) == 1


def test_many_policy_ids_give_one_frame_paced_to_the_tenant_rate(conn, sandbox, tenant,
                                                                 waits) -> None:
    ids = [s.id for s in tenant.strengths[:3]]
    with sandbox.recording() as log:
        df = toolkit.authentication_strength_usage(ids, connection=conn)
    assert len(log) == 3 and all(r.status == 200 for r in log)
    assert list(dict.fromkeys(df["policy_id"])) == ids
    for sid in ids:
        part = df[df["policy_id"] == sid]
        assert sorted(zip(part["id"], part["requirement"].astype(str), strict=True)) == \
            _expected(tenant, sid)
    assert len(waits) == 2 and all(0 < w <= 1.0 for w in waits)  # one request a second


def test_a_failing_policy_among_many_is_a_row_and_the_others_are_kept(conn, tenant) -> None:
    ids = [MFA, "11111111-2222-3333-4444-555555555555"]
    df = toolkit.authentication_strength_usage(ids, connection=conn)
    bad = df[df["policy_id"] == ids[1]]
    assert len(bad) == 1 and "HTTP 404 NotFound" in bad["error"].iloc[0]
    good = df[df["policy_id"] == MFA]
    assert good["error"].isna().all()
    assert sorted(zip(good["id"], good["requirement"].astype(str), strict=True)) == \
        _expected(tenant, MFA)


def test_a_strength_nobody_uses_gives_an_empty_frame_with_every_column(conn, tenant) -> None:
    unused = [s.id for s in tenant.strengths if not tenant.users_of(s.id)]
    assert unused
    df = toolkit.authentication_strength_usage(unused[0], connection=conn)
    assert len(df) == 0
    _check_schema(df, STRENGTH_USAGE)


def test_unknown_policy_is_a_404_in_the_identity_error_body(conn) -> None:
    with pytest.raises(toolkit.NotFoundError) as info:
        toolkit.authentication_strength_usage("11111111-2222-3333-4444-555555555555",
                                              connection=conn)
    err = info.value
    assert err.status == 404 and err.code == "NotFound"
    assert "11111111-2222-3333-4444-555555555555" in err.message
    inner = err.extra["innerError"]
    assert err.request_id == inner["request-id"] and inner["date"].startswith("20")


def test_token_without_the_permission_is_a_403(sandbox, waits) -> None:
    conn = toolkit.connect(sandbox=sandbox, credential=sandbox.credential(roles=["Reader"]),
                           progress=False)
    conn.sleep = waits
    try:
        with sandbox.recording() as log, pytest.raises(toolkit.AuthenticationError) as info:
            toolkit.authentication_strength_usage(MFA, connection=conn)
    finally:
        conn.close()
    err = info.value
    assert err.status == 403 and err.code == "AccessDenied"
    assert "Policy.Read.AuthenticationMethod" in err.message
    assert err.request_id == err.extra["innerError"]["request-id"]
    assert [r.status for r in log] == [403]  # a 403 is not retried




def test_429_without_retry_after_backs_off_on_its_own_and_logs(conn, sandbox, tenant, waits,
                                                               caplog) -> None:
    sandbox.inject("429", path="/usage", count=2)
    with caplog.at_level(logging.INFO, logger="toolkit._core.policies"), \
            sandbox.recording() as log:
        df = toolkit.authentication_strength_usage(MFA, connection=conn)
    assert [r.status for r in log] == [429, 429, 200]
    assert len(waits) == 2 and 0 < waits[0] < waits[1] <= conn.settings.max_retry_wait
    assert sum("without Retry-After" in r.getMessage() for r in caplog.records) == 2
    assert sorted(zip(df["id"], df["requirement"].astype(str), strict=True)) == \
        _expected(tenant, MFA)


def test_429_with_retry_after_is_honoured(conn, sandbox, tenant, waits) -> None:
    sandbox.inject("429", path="/usage", count=1, retry_after=3)
    df = toolkit.authentication_strength_usage(MFA, connection=conn)
    assert waits == [3.0]
    assert len(df) == len(_expected(tenant, MFA))


def test_tenant_throttle_answers_429_without_retry_after(conn, sandbox, waits) -> None:
    quota = sandbox_identity.limits(sandbox)
    quota.configure(rate=0.0001, burst=1)
    try:
        toolkit.authentication_strength_usage(MFA, connection=conn)
        with sandbox.recording() as log, pytest.raises(toolkit.RateLimitError) as info:
            toolkit.authentication_strength_usage(MFA, connection=conn)
    finally:
        quota.configure(rate=sandbox_identity.RATE, burst=sandbox_identity.BURST)
    err = info.value
    assert err.status == 429 and err.retry_after is None and err.code == "TooManyRequests"
    assert [r.status for r in log] == [429] * (conn.settings.max_retries + 1)
    assert len(waits) == conn.settings.max_retries
    assert waits == sorted(waits) and waits[-1] <= conn.settings.max_retry_wait


@pytest.mark.parametrize("value, parameter", [
    ("", "policy_id"),
    ("a/b", "policy_id"),
    ("x" * 129, "policy_id"),
    ("id with space", "policy_id"),
    (5, "policy_id"),
    ([], "policy_id"),
    ([MFA, "../usage"], "policy_id[1]"),
])
def test_bad_policy_ids_fail_before_any_request(conn, sandbox, value, parameter) -> None:
    with sandbox.recording() as log, pytest.raises(ValidationError) as info:
        toolkit.authentication_strength_usage(value, connection=conn)
    assert info.value.parameter == parameter and info.value.rule
    assert log == []


def test_bad_api_version_fails_before_any_request(conn, sandbox) -> None:
    with sandbox.recording() as log, pytest.raises(ValidationError) as info:
        toolkit.authentication_strength_usage(MFA, api_version="v2", connection=conn)
    assert info.value.parameter == "api_version" and log == []


def test_v1_path_is_served_too(conn, tenant) -> None:
    df = toolkit.authentication_strength_usage(MFA, api_version="v1.0", connection=conn)
    assert len(df) == len(_expected(tenant, MFA))


# ---------------------------------------------------------------------------- list and audit

def test_strength_policies_are_listed_over_every_page(conn, sandbox, tenant) -> None:
    with sandbox.recording() as log:
        df = toolkit.authentication_strength_policies(connection=conn)
    assert len(log) == 2  # five a page
    _check_schema(df, STRENGTH_POLICIES)
    assert df["id"].tolist() == [s.id for s in tenant.strengths]
    assert df["policyType"].astype(str).tolist() == [s.policy_type for s in tenant.strengths]
    assert df["allowedCombinations"].map(len).gt(0).all()
    assert str(df["createdDateTime"].dtype) == "datetime64[ns, UTC]"


def test_strength_policy_list_stops_at_max_items(conn) -> None:
    with pytest.warns(toolkit.TruncatedResultWarning):
        df = toolkit.authentication_strength_policies(max_items=3, connection=conn)
    assert len(df) == 3


def test_audit_joins_every_strength_and_flags_the_locked_policies(conn, tenant) -> None:
    df = toolkit.authentication_strength_audit(connection=conn)
    _check_schema(df, STRENGTH_AUDIT)
    assert len(df) == len(tenant.policies)
    names = {s.id: s.display_name for s in tenant.strengths}
    kinds = {s.id: s.policy_type for s in tenant.strengths}
    assert (df["policy_name"] == df["policy_id"].map(names)).all()
    assert (df["policy_type"].astype(str) == df["policy_id"].map(kinds)).all()
    assert (df["blocks_mfa_weakening"] == (df["requirement"] == "mfa")).all()
    expected = sorted((p.strength_id, p.id) for p in tenant.policies)
    assert sorted(zip(df["policy_id"], df["id"], strict=True)) == expected
    unused = {s.id for s in tenant.strengths if not tenant.users_of(s.id)}
    assert not set(df["policy_id"]) & unused


def test_audit_of_chosen_policies(conn, sandbox, tenant) -> None:
    with sandbox.recording() as log:
        df = toolkit.authentication_strength_audit(PHISHING_RESISTANT, connection=conn)
    assert sum("/usage" in r.path for r in log) == 1
    assert set(df["policy_id"]) == {PHISHING_RESISTANT}
    assert len(df) == len(_expected(tenant, PHISHING_RESISTANT))


def test_audit_keeps_a_failed_lookup_as_a_row_with_its_error(conn, sandbox, tenant) -> None:
    # the usage query of one strength fails on the service (500s past every retry)
    sandbox.inject("500", path=f"{PHISHING_RESISTANT}/usage")
    df = toolkit.authentication_strength_audit(connection=conn)
    _check_schema(df, STRENGTH_AUDIT)
    failed = df[df["policy_id"] == PHISHING_RESISTANT]
    assert len(failed) == 1 and failed["error"].str.contains("HTTP 500").all()
    assert failed["policy_name"].notna().all() and failed["blocks_mfa_weakening"].isna().all()
    good = df[df["policy_id"] != PHISHING_RESISTANT]
    assert good["error"].isna().all() and len(good) == len(tenant.policies) - len(
        _expected(tenant, PHISHING_RESISTANT))


def test_audit_rejects_bad_ids_before_any_request(conn, sandbox) -> None:
    with sandbox.recording() as log, pytest.raises(ValidationError) as info:
        toolkit.authentication_strength_audit([MFA, ""], connection=conn)
    assert info.value.parameter == "policy_ids[1]" and log == []


def test_audit_plot(conn) -> None:
    pytest.importorskip("matplotlib")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from toolkit import plot

    df = toolkit.authentication_strength_audit(connection=conn)
    before = df.copy()
    ax = plot.authentication_strength_usage(df)
    labels = [t.get_text() for t in ax.get_yticklabels()]
    assert set(labels) == set(df["policy_name"])
    drawn = sum(p.get_width() for p in ax.patches)
    assert drawn == len(df)
    pd.testing.assert_frame_equal(df, before)
    plt.close("all")
    with pytest.raises(ValidationError):
        plot.authentication_strength_usage(df.drop(columns=["requirement"]))
