"""The facts of the eventstream service agree with spec document 3, its schema and the real
examples; the client and the sandbox hold these very facts and judge display names alike."""

from __future__ import annotations

import importlib
import re
from urllib.parse import urlsplit

import pytest

from tests._spec.conftest import (
    copies_of,
    imports_beyond_spec,
    schema,
    schema_enum,
    spec_list,
    spec_section,
    spec_text,
    top_level_statements,
)
from tests.conftest import example
from toolkit._spec import fabric
from toolkit.fabric.eventstream import DISPLAY_NAME_RULE, display_name_problem
from toolkit.sandbox.fabric.eventstream import _display_name_problem

EXAMPLES = "17-fabric-create-eventstream"


def test_the_module_is_data_only() -> None:
    assert imports_beyond_spec(fabric) == []
    assert top_level_statements(fabric) == []
    assert sorted(fabric.__all__) == sorted(n for n in vars(fabric) if n.isupper())


def test_no_fact_is_written_again_elsewhere_in_the_package(package_literals) -> None:
    assert copies_of(fabric, package_literals) == []


# ------------------------------------------------------------------------------ versions
def test_the_version_is_the_path_prefix_of_the_spec_and_the_schema() -> None:
    prefix = re.search(r"under the /(\S+) path prefix", spec_section(3, "## 9."))
    assert prefix and fabric.API_VERSIONS[0] == prefix[1]
    assert f"{{base_url}}/{fabric.API_VERSIONS[0]}/workspaces/" in spec_section(3, "### 4.2")
    assert schema(EXAMPLES)["info"]["version"] == fabric.API_VERSIONS[0]


def test_the_version_pattern_accepts_every_version_and_the_examples_prefix() -> None:
    rx = re.compile(fabric.API_VERSION_PATTERN)
    assert all(rx.fullmatch(v) for v in fabric.API_VERSIONS)
    accepted = example(EXAMPLES, "CreateEventstream.json")["responses"]["202"]
    location = accepted["headers"]["Location"]
    assert rx.fullmatch(urlsplit(location).path.split("/")[1])
    for bad in ("1", "v", "v1.", "V1", "v1.0.0", "beta", " v1"):
        assert not rx.fullmatch(bad), bad
    assert rx.fullmatch("v1.1") and rx.fullmatch("v12")


def test_the_client_sends_the_first_version() -> None:
    from toolkit.fabric import eventstream

    assert fabric.API_VERSIONS[0] == eventstream.API_VERSION


# ------------------------------------------------------------------------------ limits
def test_the_description_limit_is_the_specs() -> None:
    body = re.search(r"\| description \| no \| string \| maximum (\d+) characters \|",
                     spec_section(3, "### 4.2"))
    limits = re.search(r"Eventstream description: at most (\d+) characters",
                       spec_section(3, "## 8."))
    assert body and limits
    assert int(body[1]) == int(limits[1]) == fabric.DESCRIPTION_MAX


def test_display_name_limits_are_consistent_and_the_examples_names_pass() -> None:
    assert fabric.DISPLAY_NAME_MAX >= 1 and fabric.DESCRIPTION_MAX >= 1
    assert all(len(c) == 1 and not c.isalnum() and not c.isspace() and c not in "._-"
               for c in fabric.DISPLAY_NAME_FORBIDDEN)
    for name in ("CreateEventstream.json", "CreateEventstreamWithDefinition.json"):
        request = example(EXAMPLES, name)["parameters"]["createEventstreamRequest"]
        assert len(request["description"]) <= fabric.DESCRIPTION_MAX
        assert display_name_problem(request["displayName"]) is None
        assert _display_name_problem(request["displayName"]) is None


def test_client_and_sandbox_refuse_the_same_display_names() -> None:
    """Each side writes its own check on the spec's limit and characters: they agree."""
    top = fabric.DISPLAY_NAME_MAX
    names = ["ok", "Eventstream_1", "a" * top, "a" * (top + 1), "", " ", " lead", "trail ",
             ".dot", "dot.", "in.side", "tab\there", "del\x7f", *(f"a{c}b" for c in
                                                                     sorted(fabric.DISPLAY_NAME_FORBIDDEN))]
    client = {n for n in names if display_name_problem(n) is not None}
    sandbox = {n for n in names if _display_name_problem(n) is not None}
    assert client == sandbox
    assert {"ok", "Eventstream_1", "a" * top, "in.side"}.isdisjoint(client)
    assert {f"a{c}b" for c in fabric.DISPLAY_NAME_FORBIDDEN} <= client


def test_the_clients_rule_says_the_limit_and_every_forbidden_character() -> None:
    assert str(fabric.DISPLAY_NAME_MAX) in DISPLAY_NAME_RULE
    assert all(c in DISPLAY_NAME_RULE for c in fabric.DISPLAY_NAME_FORBIDDEN)


# ------------------------------------------------------------------------------ enumerations
def test_label_strategies_are_the_schemas_and_the_default_comes_first() -> None:
    assert list(fabric.LABEL_STRATEGIES) == schema_enum(EXAMPLES, "SensitivityLabelApplyStrategy")
    default = re.search(r"sensitivityLabelApplyStrategy \((\w+) default",
                        spec_section(3, "### 2.4"))
    assert default and fabric.LABEL_STRATEGIES[0] == default[1]


def test_item_types_are_the_spec_and_the_schema_in_their_order() -> None:
    documented = spec_list(spec_section(3, "### 2.5"), "### 2.5 ItemType values\n\n")
    assert list(fabric.ITEM_TYPES) == documented
    # the real schema also lists types the spec leaves out; the spec renames those holding a
    # brand word (noted in brackets): every other type is the schema's, in the schema's order
    raw = spec_section(3, "### 2.5").split("\n\n", 1)[1].split(". More values")[0].split(", ")
    kept = [t for t in raw if "(" not in t]
    declared = schema_enum(EXAMPLES, "ItemType")
    assert len(kept) >= 40 and set(kept) <= set(declared)
    assert [t for t in declared if t in kept] == kept
    assert [t for t in fabric.ITEM_TYPES if t in kept] == kept
    answered = example(EXAMPLES, "CreateEventstream.json")["responses"]["201"]["body"]["type"]
    assert answered in fabric.ITEM_TYPES


def test_principal_types_are_the_spec_and_the_schema() -> None:
    documented = spec_list(spec_text(3), "PrincipalType values: ")
    assert list(fabric.PRINCIPAL_TYPES) == documented
    assert list(fabric.PRINCIPAL_TYPES) == schema_enum(EXAMPLES, "PrincipalType")


@pytest.mark.parametrize(("where", "fact"), [
    ("toolkit.fabric.eventstream:DESCRIPTION_MAX", "DESCRIPTION_MAX"),
    ("toolkit.sandbox.fabric.eventstream:DESCRIPTION_MAX", "DESCRIPTION_MAX"),
    ("toolkit.fabric.eventstream:LABEL_STRATEGIES", "LABEL_STRATEGIES"),
    ("toolkit.sandbox.fabric.eventstream:LABEL_STRATEGIES", "LABEL_STRATEGIES"),
    ("toolkit.fabric.eventstream:ITEM_TYPES", "ITEM_TYPES"),
    ("toolkit.fabric.eventstream:PRINCIPAL_TYPES", "PRINCIPAL_TYPES"),
])
def test_client_and_sandbox_tables_are_the_spec(where: str, fact: str) -> None:
    module, name = where.split(":")
    assert getattr(importlib.import_module(module), name) is getattr(fabric, fact), where
