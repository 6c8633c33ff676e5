"""A next link planted in record data goes nowhere.

Anyone who can tag a resource can put an ``"@odata.nextLink"`` key into the policy-state records
an auditor reads. The next page must come from the page's envelope only: neither a foreign host
nor another path of the service itself may be asked for anything because of a record's content.
"""

from __future__ import annotations

from typing import Any

import orjson

import toolkit
from tests.security.conftest import connect_to
from tests.security.hostile import Answer, Hostile, Seen

SUB = "00000000-0000-0000-0000-000000000001"


def _record(i: int, planted: str) -> dict[str, Any]:
    return {"timestamp": "2026-01-01T00:00:00Z",
            "resourceId": f"/subscriptions/{SUB}/resourceGroups/rg/providers/Vendor.Web/sites/s{i}",
            "policyAssignmentName": "a1", "complianceState": "Compliant", "isCompliant": True,
            # a tag value, or an evaluated expression, that holds the key
            "policyEvaluationDetails": {"evaluatedExpressions": [
                {"expression": "tags", "expressionValue": {"@odata.nextLink": planted}}]}}


def _service(planted_at: Hostile | None) -> Hostile:
    """A policy-states service of two pages whose records carry a planted next link, to
    ``planted_at`` (another host) or, when ``None``, to another path of the service itself."""

    def script(seen: Seen, server: Hostile) -> Answer:
        if "/steal" in seen.path:
            return Answer(200, orjson.dumps({"value": []}))
        second = "skiptoken=2" in seen.path
        planted = f"{(planted_at or server).url}/steal"
        body: dict[str, Any] = {"value": [_record(i + (10 if second else 0), planted)
                                          for i in range(3)]}
        if not second:
            base = seen.path.split("?")[0]
            body["@odata.nextLink"] = f"{server.url}{base}?api-version=2024-10-01&$skiptoken=2"
        # the records come first in the bytes, the envelope's link after them
        return Answer(200, orjson.dumps(body), {"Content-Type": "application/json"})

    return Hostile(script)


def test_a_next_link_planted_in_record_data_reaches_no_foreign_host(foreign: Hostile) -> None:
    with _service(foreign) as service:
        df = toolkit.policy_states(SUB, "rg", connection=connect_to(service))
    assert foreign.count() == 0
    assert len(df) == 6


def test_a_next_link_planted_in_record_data_is_not_followed_on_the_service() -> None:
    with _service(None) as service:
        df = toolkit.policy_states(SUB, "rg", connection=connect_to(service))
        stolen = [s for s in service.seen if "/steal" in s.path]
    assert stolen == []
    assert len(df) == 6
