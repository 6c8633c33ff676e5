"""The GUID shape every family shares: it accepts the GUIDs of the real examples in any case and
nothing but the hyphenated form, and the client refuses what it refuses."""

from __future__ import annotations

import re
import uuid
from typing import Any

import pytest

from tests._spec.conftest import copies_of, imports_beyond_spec, spec_text, top_level_statements
from tests.conftest import EXAMPLES, example
from toolkit._core.errors import ValidationError
from toolkit._core.validate import check_uuid
from toolkit._spec import common

RX = re.compile(common.UUID_PATTERN)
# The fields the spec documents as GUIDs (spec 1 §4.8, spec 3 §2.1, §2.2, §4.2).
GUID_FIELDS = {"subscriptionId", "workspaceId", "operationId", "id", "folderId"}


def _values(node: Any, keys: set[str]) -> list[str]:
    """Every string under one of ``keys`` anywhere in a JSON document."""
    if isinstance(node, dict):
        return [v for k, v in node.items() if k in keys and isinstance(v, str)] + \
            [x for v in node.values() for x in _values(v, keys)]
    if isinstance(node, list):
        return [x for v in node for x in _values(v, keys)]
    return []


def test_the_module_is_data_only() -> None:
    assert imports_beyond_spec(common) == []
    assert top_level_statements(common) == []
    assert common.__all__ == ["SANDBOX_HEADER", "UUID_PATTERN"]


def test_no_fact_is_written_again_elsewhere_in_the_package(package_literals) -> None:
    assert copies_of(common, package_literals) == []


def test_the_spec_names_these_fields_guids() -> None:
    assert "subscriptionId: uuid" in spec_text(1)
    assert "workspaceId (string uuid" in spec_text(3)
    assert "id (string, GUID)" in spec_text(3)


def test_every_guid_of_the_examples_is_accepted() -> None:
    guids = []
    for path in sorted(EXAMPLES.glob("*/*.json")):
        for value in _values(example(path.parent.name, path.name), GUID_FIELDS):
            try:
                uuid.UUID(value)
            except ValueError:
                continue  # a resource id, a placeholder ('subid'): not a GUID
            guids.append(value)
    assert len(set(guids)) >= 8
    assert all(RX.fullmatch(g) for g in guids), [g for g in guids if not RX.fullmatch(g)]
    placeholders = [v for p in sorted(EXAMPLES.glob("0*/*.json"))
                    for v in _values(example(p.parent.name, p.name)["parameters"],
                                     {"subscriptionId", "serviceName"})
                    if v.count("-") != 4]
    assert placeholders and not any(RX.fullmatch(v) for v in placeholders)


@pytest.mark.parametrize(("good", "bad"), [
    (["00000000-0000-0000-0000-000000000000"], ["0000", "g" * 36]),
])
def test_patterns_mean_what_the_spec_says(good: list[str], bad: list[str]) -> None:
    assert all(RX.fullmatch(s) for s in good)
    assert not any(RX.fullmatch(s) for s in bad)


@pytest.mark.parametrize("seed", range(5))
def test_any_case_of_a_hyphenated_guid_is_accepted(seed: int) -> None:
    value = str(uuid.UUID(int=(seed + 1) * 0x1234_5678_9ABC_DEF0_1234_5678_9ABC_DEF))
    assert RX.fullmatch(value) and RX.fullmatch(value.upper())
    assert RX.fullmatch(value[:9] + value[9:].upper())


@pytest.mark.parametrize("form", [
    lambda u: u.hex,  # the same GUID without hyphens
    lambda u: "{" + str(u) + "}",
    lambda u: u.urn,
    lambda u: str(u)[:-1],
    lambda u: str(u) + "0",
    lambda u: str(u).replace("-", "", 1),
    lambda u: "g" + str(u)[1:],
    lambda u: " " + str(u),
])
def test_other_forms_are_refused_by_the_pattern_and_the_client(form: Any) -> None:
    value = form(uuid.UUID("a26dbede-a6c0-4156-92e1-6c86dd7bc561"))
    assert not RX.fullmatch(value), value
    with pytest.raises(ValidationError, match="subscription_id"):
        check_uuid(value, "subscription_id")


def test_the_client_accepts_what_the_pattern_accepts() -> None:
    value = "A26DBEDE-a6c0-4156-92e1-6c86dd7bc561"
    assert RX.fullmatch(value) and check_uuid(value, "workspace") == value
