"""The resource-management schemas: each is the one its operation's record declares, and their
enumerations are the spec's."""

from __future__ import annotations

import pandas as pd

from toolkit._core.registry import record
from toolkit._core.schemas import Schema
from toolkit._spec import arm as spec
from toolkit._spec.clouds import NEUTRAL_WORDS, REAL_WORDS
from toolkit.arm import _schemas


def _schemas_of_module() -> dict[str, Schema]:
    return {n: v for n, v in vars(_schemas).items() if isinstance(v, Schema)}


def test_each_schema_is_its_operations_record() -> None:
    schemas = _schemas_of_module()
    assert len(schemas) == 19  # the four inventory lists among them
    for name, schema in schemas.items():
        assert record(schema.name).schema is schema, name
        assert name in _schemas.__all__


def test_the_states_are_the_spec_in_its_order() -> None:
    health = _schemas.BACKEND_HEALTH["health"].dtype()
    assert isinstance(health, pd.CategoricalDtype) and health.ordered
    assert tuple(health.categories) == spec.HEALTH_STATES == _schemas.HEALTH_ORDER
    compliance = _schemas.POLICY_STATES["complianceState"]
    assert compliance.categories is spec.COMPLIANCE_STATES and compliance.ordered


def test_a_key_type_is_read_in_either_vocabulary() -> None:
    kinds = _schemas.ENCRYPTION_PROTECTOR["serverKeyType"].categories
    assert kinds == ("ServiceManaged", NEUTRAL_WORDS.key_vault_type, REAL_WORDS.key_vault_type)
    assert kinds is _schemas.SERVER_KEY_TYPES


def test_the_summary_has_a_count_per_kind_and_state() -> None:
    names = _schemas.POLICY_SUMMARY.names
    assert _schemas.POLICY_SUMMARY["level"].categories == _schemas.SUMMARY_LEVELS
    assert {"resources_noncompliant", "policies_exempt", "groups_unknown"} <= set(names)
    assert sum(n.startswith(("resources_", "policies_", "groups_")) for n in names) == 15
