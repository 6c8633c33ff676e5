"""policy_changes: what changed between two days of a history store this test writes itself (the
store's own layout: ``scope=<scope>/day=<day>/part-0.parquet``), each kind of change from a
scenario written out by hand below; the days chosen by default and asked for; one scope among
others; bad arguments refused before reading. And, on the sandbox's history, the changes agree
with a plain reckoning over the two stored days."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import quote

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import toolkit
from toolkit._spec.arm import COMPLIANCE_STATES
from toolkit.arm.changes import CHANGES

SUB = "00000000-1111-2222-3333-444444444444"
OTHER = "99999999-1111-2222-3333-444444444444"
DAY_A, DAY_B, DAY_C = "2026-05-01", "2026-05-02", "2026-05-03"


def _rid(name: str, sub: str = SUB) -> str:
    return f"/subscriptions/{sub}/resourceGroups/rg-{name[:2]}/providers/Microsoft.Storage/" \
           f"storageAccounts/{name}"


def _pa(name: str, sub: str = SUB) -> str:
    return f"/subscriptions/{sub}/providers/Microsoft.Authorization/policyAssignments/{name}"


def _record(day: str, resource: str, assignment: str, state: str, *, definition: str = "d1",
            hour: int = 10, sub: str = SUB) -> dict:
    rid = resource if resource.startswith("/") else _rid(resource, sub)
    return {"timestamp": pd.Timestamp(f"{day}T{hour:02d}:00:00Z"), "resourceId": rid,
            "resourceType": "Microsoft.Storage/storageAccounts",
            "resourceGroup": rid.split("/")[4], "policyAssignmentId": _pa(assignment, sub),
            "policyAssignmentName": assignment,
            "policyDefinitionId": f"/providers/Microsoft.Authorization/policyDefinitions/"
                                  f"{definition}",
            "policyDefinitionReferenceId": None, "complianceState": state}


def write_day(store: Path, day: str, records: list[dict], sub: str = SUB) -> None:
    """Write one day of one subscription's records as the store keeps it."""
    folder = store / f"scope={quote(f'/subscriptions/{sub}', safe='')}" / f"day={day}"
    folder.mkdir(parents=True)
    frame = pd.DataFrame(records)
    table = pa.table({
        "timestamp": pa.array(frame["timestamp"], type=pa.timestamp("ns", tz="UTC")),
        **{c: pa.array(frame[c].tolist(), type=pa.string())
           for c in frame.columns if c != "timestamp"}})
    pq.write_table(table, folder / "part-0.parquet")


# The scenario, resource by resource: (resource, states on day A, states on day B, the change).
# A state list holds one state per definition; "-" is no evaluation that day.
PA1 = [
    ("sa-r1", ["NonCompliant"], ["Compliant"], "remediated"),
    ("sa-r2", ["Compliant"], ["NonCompliant"], "newly non-compliant"),
    ("sa-r3", ["NonCompliant"], ["Exempt"], "exempted"),
    ("sa-r4", ["Compliant"], "-", "no longer evaluated"),
    ("sa-r5", ["Compliant"], ["Conflict"], "other state"),
    ("sa-r6", ["Compliant"], ["Compliant"], None),
    ("sa-r7", "-", ["NonCompliant"], "newly non-compliant"),
    ("sa-r8", "-", ["Compliant"], None),  # newly evaluated, and fine: nothing to report
    ("sa-r9", ["Compliant", "NonCompliant"], ["Compliant", "Compliant"], "remediated"),
    ("sa-ra", ["NonCompliant"], ["NonCompliant"], None),
    ("sa-rb", ["Compliant"], ["Pending"], "other state"),  # a state the docs do not list
    ("sa-rc", "-", ["Exempt"], "exempted"),
]


def _scenario() -> tuple[list[dict], list[dict], list[tuple]]:
    """Records of day A and day B, and the changes expected (kind, assignment, resource,
    before, after, resources)."""
    a: list[dict] = []
    b: list[dict] = []
    expected: list[tuple] = []
    worst = {s: i for i, s in enumerate(COMPLIANCE_STATES)}
    for name, was, now, change in PA1:
        for day, states, out in ((DAY_A, was, a), (DAY_B, now, b)):
            for i, state in enumerate([] if states == "-" else states):
                out.append(_record(day, name, "pa1", state, definition=f"d{i}"))
        if change:
            def rolled(states):
                return None if states == "-" else max(states, key=lambda s: worst.get(s, -1))
            expected.append((change, "pa1", _rid(name), rolled(was), rolled(now), None))
    # the newest evaluation of a policy counts: sa-r9's second policy was non-compliant in
    # the morning of day B and compliant by noon
    b.append(_record(DAY_B, "sa-r9", "pa1", "NonCompliant", definition="d1", hour=8))
    # the same resource named in another case on day B is the same resource
    b.append(_record(DAY_B, _rid("sa-r6").upper().replace("SUBSCRIPTIONS", "subscriptions"),
                     "pa1", "Compliant", hour=9))
    # pa2 is gone on day B, pa3 new
    a += [_record(DAY_A, n, "pa2", "NonCompliant") for n in ("sa-x1", "sa-x2")]
    b += [_record(DAY_B, n, "pa3", "Compliant") for n in ("sa-y1", "sa-y2", "sa-y3")]
    expected += [("assignment added", "pa3", None, None, None, 3),
                 ("assignment removed", "pa2", None, None, None, 2)]
    order = {k: i for i, k in enumerate(CHANGES)}
    expected.sort(key=lambda e: (order[e[0]], e[1], e[2] or ""))
    return a, b, expected


@pytest.fixture(scope="module")
def store(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("history")
    a, b, _ = _scenario()
    write_day(root, DAY_A, a)
    write_day(root, DAY_B, b)
    # another subscription in the same store, with changes of its own on the same days
    write_day(root, DAY_A, [_record(DAY_A, "sa-z1", "pz", "Compliant", sub=OTHER)], OTHER)
    write_day(root, DAY_B, [_record(DAY_B, "sa-z1", "pz", "NonCompliant", sub=OTHER)], OTHER)
    return root


def _rows(df: pd.DataFrame) -> list[tuple]:
    def value(v):
        if pd.isna(v):
            return None
        return str(v) if isinstance(v, str) else int(v)
    return [tuple(value(r[c]) for c in ("change", "policyAssignmentName", "resourceId",
                                         "before", "after", "resources"))
            for _, r in df.iterrows()]


def test_each_kind_of_change_between_two_days(store) -> None:
    _, _, expected = _scenario()
    df = toolkit.policy_changes(str(store), scope=SUB)
    assert _rows(df) == expected
    assert set(df["day_before"]) == {DAY_A} and set(df["day_after"]) == {DAY_B}
    assert set(df["change"].astype(str)) == set(CHANGES)  # the scenario meets every kind
    # the resource's own columns on a resource's row, the assignment's id on every row
    row = df[df["resourceId"] == _rid("sa-r4")].iloc[0]
    assert (row["resourceType"], row["resourceGroup"]) == ("Microsoft.Storage/storageAccounts",
                                                          "rg-sa")
    assert df["policyAssignmentId"].str.startswith(f"/subscriptions/{SUB}/").all()


def test_the_frame_is_typed(store) -> None:
    df = toolkit.policy_changes(str(store), scope=SUB)
    assert list(df["change"].dtype.categories) == list(CHANGES)
    for col in ("before", "after"):
        assert list(df[col].dtype.categories[:len(COMPLIANCE_STATES)]) == \
            list(COMPLIANCE_STATES)
    assert "Pending" in set(df["after"].dropna().astype(str))  # kept, not dropped
    assert str(df["resources"].dtype) == "Int64"
    for col in ("policyAssignmentName", "resourceId", "day_before", "day_after"):
        assert isinstance(df[col].dtype, pd.StringDtype)
    assert df.attrs["operation"] == "policy_changes" and df.attrs["sandbox"] is False


def test_another_scope_of_the_store_is_its_own(store) -> None:
    df = toolkit.policy_changes(str(store), scope=OTHER)
    assert _rows(df) == [("newly non-compliant", "pz", _rid("sa-z1", OTHER), "Compliant",
                          "NonCompliant", None)]


@pytest.fixture
def three_days(tmp_path) -> Path:
    write_day(tmp_path, DAY_A, [_record(DAY_A, "sa-r1", "pa1", "Compliant")])
    write_day(tmp_path, DAY_B, [_record(DAY_B, "sa-r1", "pa1", "NonCompliant")])
    write_day(tmp_path, DAY_C, [_record(DAY_C, "sa-r1", "pa1", "Exempt")])
    return tmp_path


@pytest.mark.parametrize("start, end, days, change", [
    (None, None, (DAY_B, DAY_C), "exempted"),           # the two latest days
    (None, DAY_B, (DAY_A, DAY_B), "newly non-compliant"),  # end alone: the day before it
    (DAY_A, None, (DAY_A, DAY_C), "exempted"),          # start alone: to the latest day
    (DAY_A, DAY_B, (DAY_A, DAY_B), "newly non-compliant"),
    (pd.Timestamp(f"{DAY_A}T23:00:00Z"), f"{DAY_C}T01:00:00Z", (DAY_A, DAY_C), "exempted"),
])
def test_the_days_compared(three_days, start, end, days, change) -> None:
    df = toolkit.policy_changes(str(three_days), start, end)
    assert (df["day_before"].iloc[0], df["day_after"].iloc[0]) == days
    assert df["change"].astype(str).tolist() == [change]


def test_nothing_changed_is_an_empty_frame_with_every_column(tmp_path) -> None:
    for day in (DAY_A, DAY_B):
        write_day(tmp_path, day, [_record(day, "sa-r1", "pa1", "Compliant")])
    df = toolkit.policy_changes(str(tmp_path))
    assert len(df) == 0
    assert list(df.columns) == ["change", "policyAssignmentName", "resourceId", "resourceType",
                                "resourceGroup", "before", "after", "resources",
                                "policyAssignmentId", "day_before", "day_after"]


@pytest.mark.parametrize("arguments, parameter, said", [
    ({"start": DAY_B, "end": DAY_A}, "start", "a day before end"),
    ({"start": DAY_B, "end": DAY_B}, "start", "a day before end"),
    ({"start": "yesterday"}, "start", None),
    ({"end": "2026-13-01"}, "end", None),
    ({"end": DAY_A}, "store", "holds 0 such day"),      # no day before the first
    ({"start": DAY_B}, "store", "holds 0 such day"),    # no day after the last
    ({"scope": "77777777-1111-2222-3333-444444444444"}, "store", "holds 0 such day"),
])
def test_bad_arguments_are_refused_before_reading(store, arguments, parameter, said) -> None:
    with pytest.raises(toolkit.ValidationError) as info:
        toolkit.policy_changes(str(store), **{"scope": SUB, **arguments})
    assert info.value.parameter == parameter
    if said:
        assert said in str(info.value)


def test_one_day_is_not_enough(tmp_path) -> None:
    write_day(tmp_path, DAY_A, [_record(DAY_A, "sa-r1", "pa1", "Compliant")])
    with pytest.raises(toolkit.ValidationError, match="holds 1 such day"):
        toolkit.policy_changes(str(tmp_path))
    with pytest.raises(toolkit.ValidationError, match="holds 0 such day"):
        toolkit.policy_changes(str(tmp_path / "nothing-here"))


def test_on_the_sandboxs_history_the_changes_agree_with_a_plain_reckoning(
        conn, world, tmp_path) -> None:
    sub = world.subscriptions[0].id
    end = pd.Timestamp(world.epoch).normalize()
    days = [end - pd.Timedelta(days=2), end - pd.Timedelta(days=1)]
    for day in days:
        toolkit.snapshot_policy_states(str(tmp_path), sub, day=day, connection=conn)
    df = toolkit.policy_changes(str(tmp_path), scope=sub)
    assert df.attrs["sandbox"] is True
    stored = toolkit.read_policy_history(str(tmp_path), scope=sub)
    rank = {s: i for i, s in enumerate(COMPLIANCE_STATES)}
    states: list[dict[tuple[str, str], str]] = []
    for day in days:
        newest: dict[tuple, tuple] = {}
        for r in stored[stored["day"].astype(str) == day.date().isoformat()].itertuples():
            key = (r.resourceId.lower(), r.policyAssignmentId.lower(), r.policyDefinitionId,
                   r.policyDefinitionReferenceId)
            if key not in newest or r.timestamp >= newest[key][0]:
                newest[key] = (r.timestamp, str(r.complianceState))
        worst: dict[tuple[str, str], str] = {}
        for (rid, pa_id, _, _), (_, state) in newest.items():
            if (rid, pa_id) not in worst or rank.get(state, -1) > rank.get(
                    worst[(rid, pa_id)], -1):
                worst[(rid, pa_id)] = state
        states.append(worst)
    before, after = states
    gone = [k for k in before if k not in after and k[1] in {p for _, p in after}]
    newly = [k for k, s in after.items() if s == "NonCompliant" and before.get(k) != s]
    fixed = [k for k, s in after.items() if s == "Compliant" and before.get(k) == "NonCompliant"]
    by_kind = df.groupby(df["change"].astype(str)).size().to_dict()
    assert by_kind.get("newly non-compliant", 0) == len(newly)
    assert by_kind.get("remediated", 0) == len(fixed)
    assert by_kind.get("no longer evaluated", 0) == len(gone)
    assert len(df) == sum(1 for k, s in after.items() if before.get(k, s) != s
                          or (k not in before and s in ("NonCompliant", "Exempt"))) + len(gone)
