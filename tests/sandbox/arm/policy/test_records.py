"""Policy-state records written as the service writes them: the page as one buffer, plain JSON
values, ``$select`` in the columns' own case, and a key vault's components."""

from __future__ import annotations

import numpy as np
import orjson
import pandas as pd
import pytest

from toolkit.sandbox.arm.policy.query import page_body
from toolkit.sandbox.arm.policy.records import plain, resolve_select
from toolkit.sandbox.http import SandboxHTTPError


def test_a_page_is_its_envelope_and_its_records() -> None:
    envelope = {"@odata.nextLink": None, "@odata.count": 2}
    items = [orjson.dumps({"a": 1}), orjson.dumps({"a": 2})]
    assert orjson.loads(page_body(envelope, items)) == {**envelope, "value": [{"a": 1}, {"a": 2}]}
    assert orjson.loads(page_body(envelope, [])) == {**envelope, "value": []}


@pytest.mark.parametrize(("value", "written"), [
    (np.int64(3), 3), (np.float64(2.5), 2.5), (np.float64("nan"), None), (pd.NA, None),
    (pd.Timestamp("2026-11-20T09:00:00Z"), "2026-11-20T09:00:00Z"), ("text", "text"),
])
def test_plain_values_are_jsons(value, written) -> None:
    assert plain(value) == written


def test_select_takes_the_columns_own_case_and_refuses_unknown_ones() -> None:
    names = ["resourceId", "complianceState"]
    assert resolve_select(["RESOURCEID", "complianceState"], names) == names
    with pytest.raises(SandboxHTTPError) as err:
        resolve_select(["nosuch"], names)
    assert err.value.status == 400 and "nosuch" in err.value.message
