"""fabric_workspaces: the workspaces the caller has a role in, every page (continuationUri),
the role filter sent as the service takes it, declared dtypes; bad arguments refused before any
request; a next page at another origin refused."""

from __future__ import annotations

from urllib.parse import parse_qs

import pandas as pd
import pytest

import toolkit
from tests.replay import Answer, replay_server
from toolkit._core.registry import schema_for
from toolkit._spec.fabric import WORKSPACE_ROLES
from toolkit.sandbox.fabric.workspaces import PAGE_SIZE


@pytest.fixture(scope="module")
def spaces(sandbox) -> list:
    """The world's workspaces, in its order."""
    return list(sandbox.world.section("fabric").workspaces.values())


def test_every_workspace_every_page(conn, sandbox, spaces) -> None:
    with sandbox.recording() as log:
        df = toolkit.fabric_workspaces(connection=conn)
    assert df["id"].tolist() == [w.id for w in spaces]
    assert len(spaces) > PAGE_SIZE
    assert len(log) == -(-len(spaces) // PAGE_SIZE)
    # the next pages are asked where the service said: the same path with its token
    assert [parse_qs(e.query).get("continuationToken") for e in log][1:] == \
        [[str(PAGE_SIZE * i)] for i in range(1, len(log))]
    assert list(df.columns) == schema_for("fabric_workspaces").names
    assert df.attrs["operation"] == "fabric_workspaces" and df.attrs["sandbox"] is True
    assert isinstance(df["type"].dtype, pd.CategoricalDtype)
    assert list(df["type"].dtype.categories[:3]) == ["Personal", "Workspace", "AdminWorkspace"]
    for col in ("id", "displayName", "description", "capacityId", "capacityRegion"):
        assert isinstance(df[col].dtype, pd.StringDtype), col


def test_a_personal_workspace_and_one_on_a_shared_capacity(conn, spaces) -> None:
    df = toolkit.fabric_workspaces(connection=conn).set_index("id")
    for w in spaces:
        row = df.loc[w.id]
        personal = w.name.startswith("Personal")
        assert row["type"] == ("Personal" if personal else "Workspace")
        assert row["displayName"] == ("My workspace" if personal else w.name)
        # a workspace on no dedicated capacity names none
        assert pd.isna(row["capacityId"]) == (w.capacity == "Pro")


@pytest.mark.parametrize("roles", [["Admin"], "Viewer", ["Admin", "Member", "Admin"],
                                   ("Contributor", "Viewer")])
def test_the_role_filter(conn, sandbox, spaces, roles) -> None:
    asked = [roles] if isinstance(roles, str) else list(roles)
    with sandbox.recording() as log:
        df = toolkit.fabric_workspaces(roles=roles, connection=conn)
    assert df["id"].tolist() == [w.id for w in spaces if w.role in asked]
    # one comma-separated value, each role once, in the order asked
    assert parse_qs(log[0].query)["roles"] == [",".join(dict.fromkeys(asked))]


@pytest.mark.parametrize("keywords, parameter", [
    ({"roles": "Owner"}, "roles"), ({"roles": []}, "roles"), ({"roles": ["Admin", 3]}, "roles"),
    ({"roles": "admin"}, "roles"), ({"roles": 7}, "roles"),
    ({"api_version": "v2/../x"}, "api_version"), ({"api_version": ""}, "api_version"),
    ({"api_version": None}, "api_version"),
    ({"max_items": -1}, "max_items"), ({"max_items": True}, "max_items"),
])
def test_bad_arguments_are_refused_before_any_request(conn, sandbox, keywords,
                                                      parameter) -> None:
    with sandbox.recording() as log, pytest.raises(toolkit.ValidationError) as info:
        toolkit.fabric_workspaces(connection=conn, **keywords)
    assert info.value.parameter == parameter and log == []
    if parameter == "roles":
        assert all(r in str(info.value) for r in WORKSPACE_ROLES)


def test_max_items_stops_early_and_says_so(conn, sandbox) -> None:
    with sandbox.recording() as log, \
            pytest.warns(toolkit.TruncatedResultWarning, match="max_items=2"):
        df = toolkit.fabric_workspaces(max_items=2, connection=conn)
    assert len(df) == 2 and len(log) == 1


def test_a_next_page_at_another_origin_is_refused() -> None:
    first = {"value": [{"id": "fa9ad228-3e6b-44d4-b5f4-e275f337afa9", "displayName": "A",
                        "description": "", "type": "Workspace"}],
             "continuationToken": "t2",
             "continuationUri": "https://elsewhere.example/v1/workspaces?continuationToken=t2"}
    with replay_server() as rp:
        rp.add("GET", r"/v1/workspaces", Answer(200, first))
        c = toolkit.connect(base_url=rp.url, token="example-token-0123456789", progress=False)
        try:
            with pytest.raises(toolkit.UntrustedOriginError):
                toolkit.fabric_workspaces(connection=c)
        finally:
            c.close()
    assert len(rp.seen) == 1  # the token never went to the other origin
