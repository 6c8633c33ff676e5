"""Names the caller gives become single path segments: percent-encoded, so they can neither add
segments nor start a query, and ``.`` / ``..`` (which would climb the path) are refused before any
request."""

from __future__ import annotations

import pytest

import toolkit
from tests.security.conftest import connect_to
from tests.security.hostile import Hostile, json_answer
from toolkit._core.errors import ValidationError
from toolkit._core.urls import segment

SUB = "00000000-0000-0000-0000-000000000001"


@pytest.mark.parametrize("name", [".", ".."])
def test_dot_segments_are_refused_before_any_request(name: str) -> None:
    with Hostile(lambda s, h: json_answer({})) as service:
        conn = connect_to(service)
        with pytest.raises(ValidationError, match="cluster") as err:
            toolkit.hosted_cluster_credentials(SUB, "rg", name, connection=conn)
        assert err.value.parameter == "cluster"
        assert service.count() == 0


@pytest.mark.parametrize(("value", "expected"), [
    ("a/b", "a%2Fb"), ("a?b", "a%3Fb"), ("a#b", "a%23b"), ("a%2F..", "a%252F.."),
    ("a b", "a%20b"), ("rg-(prod).1", "rg-(prod).1"), ("é", "%C3%A9"), ("...", "..."),
])
def test_segments_are_percent_encoded(value: str, expected: str) -> None:
    assert segment(value, "name") == expected


def test_an_escaped_name_reaches_the_service_as_one_segment() -> None:
    with Hostile(lambda s, h: json_answer({})) as service:
        conn = connect_to(service)
        toolkit.hosted_cluster_credentials(SUB, "rg", "a%2F..", connection=conn)
    path = service.seen[0].path.split("?")[0]
    assert path.endswith("/hostedClusters/a%252F../listCredentials")
