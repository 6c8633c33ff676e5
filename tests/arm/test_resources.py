"""management_groups, subscriptions and resource_groups: every page read, the sandbox tenant's
lists in order, declared dtypes; management_group_tree: the world's hierarchy, bad ids refused
before any request, hostile hierarchies refused without walking them."""

from __future__ import annotations

from urllib.parse import parse_qsl

import pandas as pd
import pytest

import toolkit
from tests.replay import Answer, replay_server
from toolkit.arm import resources
from toolkit.arm.resources import TREE_MAX_DEPTH
from toolkit.sandbox.arm.tenant import PAGE_SIZE


def test_lists_read_every_page_and_match_the_world(conn, sandbox, world) -> None:
    with sandbox.recording() as log:
        mgs = toolkit.management_groups(connection=conn)
    assert len(world.management_groups) > PAGE_SIZE  # more than one page, linked by @nextLink
    assert len(log) == -(-len(world.management_groups) // PAGE_SIZE)
    assert list(mgs["name"]) == [m.name for m in world.management_groups]
    assert mgs["id"].str.startswith("/providers/Vendor.Management/managementGroups/").all()
    subs = toolkit.subscriptions(connection=conn)
    assert len(world.subscriptions) > PAGE_SIZE
    assert list(subs["subscriptionId"]) == [s.id for s in world.subscriptions]
    sub = world.subscriptions[0]
    assert len(sub.resource_groups) > PAGE_SIZE  # more than one page
    with sandbox.recording() as log:
        groups = toolkit.resource_groups(sub.id, connection=conn)
    assert len(log) == -(-len(sub.resource_groups) // PAGE_SIZE)
    assert list(groups["name"]) == [g.name for g in sub.resource_groups]
    assert (groups["subscription_id"] == sub.id).all()
    assert isinstance(groups["location"].dtype, pd.CategoricalDtype)


def test_the_lists_ask_the_current_api_versions(conn, sandbox, world) -> None:
    # the versions the vendors' current clients send by default (azure-mgmt-managementgroups 2.0,
    # azure-mgmt-resource-subscriptions 1.0, azure-mgmt-resource 26)
    with sandbox.recording() as log:
        toolkit.management_groups(connection=conn)
        toolkit.subscriptions(connection=conn)
        toolkit.resource_groups(world.subscriptions[0].id, connection=conn)
    versions = {e.path.rsplit("/", 1)[-1].lower(): dict(parse_qsl(e.query))["api-version"]
                for e in log}
    assert versions == {"managementgroups": "2023-04-01", "subscriptions": "2022-12-01",
                        "resourcegroups": "2025-04-01"}


# ------------------------------------------------------------------ management_group_tree
def _expected_tree(world, ns: str) -> list[tuple[str, str, str, int]]:
    """(id, type, path, depth) of every group and subscription below the tenant root, from the
    world's definition: groups before subscriptions under each group, depth first."""
    rows = []

    def walk(name: str, above: str, depth: int) -> None:
        mg = world.management_group(name)
        path = f"{above}/{mg.name}" if above else mg.name
        rows.append((f"/providers/{ns}.Management/managementGroups/{mg.name}",
                     f"{ns}.Management/managementGroups", path, depth))
        for child in world.management_groups:
            if child.parent == mg.name:
                walk(child.name, path, depth + 1)
        for sub_name in mg.subscriptions:
            sub = next(s for s in world.subscriptions if s.name == sub_name)
            rows.append((f"/subscriptions/{sub.id}", "/subscriptions", f"{path}/{sub.id}",
                         depth + 1))

    walk(world.tenant_id, "", 0)
    return rows


def test_the_tree_is_the_worlds_hierarchy_below_the_tenant_root(conn, sandbox, world) -> None:
    with sandbox.recording() as log:
        tree = toolkit.management_group_tree(connection=conn)
    # the root group's id is the tenant id, read from the management groups list
    assert [e.route for e in log] == ["management_groups", "management_group"]
    assert list(zip(tree["id"], tree["type"], tree["path"], tree["depth"], strict=True)) == \
        _expected_tree(world, sandbox.namespace)
    root = tree.iloc[0]
    assert root["name"] == world.tenant_id and root["displayName"] == "Tenant Root Group"
    assert pd.isna(root["parent_id"])
    by_id = dict(zip(tree["id"], tree["path"], strict=True))
    for _, row in tree.iloc[1:].iterrows():  # each row's parent is the row its path runs through
        assert by_id[row["parent_id"]] == row["path"].rsplit("/", 1)[0]
    subs = tree[tree["type"] == "/subscriptions"]
    assert dict(zip(subs["name"], subs["displayName"], strict=True)) == \
        {s.id: s.name for s in world.subscriptions}
    assert str(tree["depth"].dtype) == "Int64"
    assert all(isinstance(tree[c].dtype, pd.StringDtype)
               for c in ("id", "name", "type", "displayName", "parent_id", "path"))
    assert tree.attrs["operation"] == "management_group_tree"


def test_the_tree_below_a_group_starts_at_depth_0(conn, sandbox, world) -> None:
    with sandbox.recording() as log:
        tree = toolkit.management_group_tree("retail", connection=conn)
    assert len(log) == 1
    expected = [(i, t, p.split("/", 1)[1], d - 1) for i, t, p, d in
                _expected_tree(world, sandbox.namespace) if p.split("/")[1:2] == ["retail"]]
    assert list(zip(tree["id"], tree["type"], tree["path"], tree["depth"], strict=True)) == \
        expected
    assert tree["parent_id"].iloc[0].endswith(f"/managementGroups/{world.tenant_id}")


@pytest.mark.parametrize("bad", ["", "a" * 91, "ends.", "has/slash", "spa ce", 7, ["root"]])
def test_a_bad_group_id_is_refused_before_any_request(conn, sandbox, bad) -> None:
    with sandbox.recording() as log, pytest.raises(toolkit.ValidationError, match="group_id"):
        toolkit.management_group_tree(bad, connection=conn)
    assert log == []


def test_an_unknown_group_is_not_found(conn) -> None:
    with pytest.raises(toolkit.NotFoundError):
        toolkit.management_group_tree("no-such-group", connection=conn)


def _nested(depth: int) -> dict:
    """A hierarchy answer whose deepest row is at ``depth``."""
    node: dict = {"id": "/providers/Vendor.Management/managementGroups/leaf",
                  "type": "Vendor.Management/managementGroups", "name": "leaf",
                  "displayName": "leaf"}
    for i in range(depth):
        node = {"id": f"/providers/Vendor.Management/managementGroups/g{i}",
                "type": "Vendor.Management/managementGroups", "name": f"g{i}",
                "displayName": f"g{i}", "children": [node]}
    return {"id": "/providers/Vendor.Management/managementGroups/top",
            "type": "Vendor.Management/managementGroups", "name": "top",
            "properties": {"displayName": "top", "children": node["children"]}}


@pytest.fixture
def hostile():
    with replay_server() as rp:
        c = toolkit.connect(base_url=rp.url, token="example-token-0123456789", progress=False,
                            max_retries=1)
        yield rp, c
        c.close()


def _deep_text(depth: int) -> bytes:
    """A hierarchy answer nested ``depth`` levels, as text (too deep to build as objects)."""
    return (b'{"id": "/g/top", "name": "top", "properties": {"children": ['
            + b'{"name": "g", "children": [' * depth + b"]}" * depth + b"]}}")


@pytest.mark.parametrize("body", [
    _nested(TREE_MAX_DEPTH + 1),  # a level more than the service allows below the root
    _deep_text(100),              # a hundred levels
    _deep_text(100_000),          # nesting past any JSON parser's limit
], ids=["one-too-deep", "hundred-deep", "parser-limit"])
def test_a_hostile_hierarchy_is_refused_not_walked(hostile, body) -> None:
    rp, c = hostile
    rp.add("GET", r"/managementGroups/top\?", Answer(200, body))
    with pytest.raises(toolkit.ProtocolError):
        toolkit.management_group_tree("top", connection=c)


def test_the_deepest_hierarchy_the_service_allows_is_read(hostile) -> None:
    rp, c = hostile
    rp.add("GET", r"/managementGroups/top\?", Answer(200, _nested(TREE_MAX_DEPTH)))
    tree = toolkit.management_group_tree("top", connection=c)
    assert tree["depth"].max() == TREE_MAX_DEPTH and len(tree) == TREE_MAX_DEPTH + 1


def test_more_rows_than_the_bound_are_refused(hostile, monkeypatch) -> None:
    rp, c = hostile
    monkeypatch.setattr(resources, "TREE_MAX_ROWS", 50)
    wide = _nested(1)
    wide["properties"]["children"] = [
        {"id": f"/subscriptions/{i}", "type": "/subscriptions", "name": f"s{i}"}
        for i in range(60)]
    rp.add("GET", r"/managementGroups/top\?", Answer(200, wide))
    with pytest.raises(toolkit.ProtocolError, match="more than 50"):
        toolkit.management_group_tree("top", connection=c)
