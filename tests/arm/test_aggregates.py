"""aggregate_frame: a real ``$apply`` answer parsed into its grouped columns and counts."""

from __future__ import annotations

import pandas as pd

from tests.conftest import example
from toolkit.arm.aggregates import aggregate_frame

FOLDER = "05-policy-states"


def test_real_apply_example_parses_into_grouped_columns_and_counts() -> None:
    ex = example(FOLDER, "PolicyStates_FilterAndGroupByWithAggregate.json")
    body = ex["responses"]["200"]["body"]
    df = aggregate_frame(body["value"], ex["parameters"]["$apply"], {})
    assert list(df.columns) == ["policyAssignmentId", "policyDefinitionId",
                                "policyDefinitionAction", "resourceId",
                                "NumAuditDenyNonComplianceRecords"]
    assert df["NumAuditDenyNonComplianceRecords"].tolist() == [10, 10]
    assert str(df["NumAuditDenyNonComplianceRecords"].dtype) == "Int64"
    assert df["resourceId"].tolist() == [r["resourceId"] for r in body["value"]]
    assert isinstance(df["policyDefinitionAction"].dtype, pd.CategoricalDtype)
