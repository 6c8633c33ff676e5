"""provenance and provenance_of: the attrs every frame carries (operation, api-version, endpoint
without its query, request ids and whether each answer came from the cache, the time), and their
copy into a derived frame."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pandas as pd

from toolkit._core.provenance import provenance, provenance_of


def test_the_endpoint_drops_the_query_and_fragment() -> None:
    attrs = provenance("policy_states", "2024-10-01",
                       "https://127.0.0.1:8443/subscriptions/s/providers/x?api-version=1&$top=5#f",
                       ["r1", "r2"])
    assert attrs["operation"] == "policy_states" and attrs["api_version"] == "2024-10-01"
    assert attrs["endpoint"] == "https://127.0.0.1:8443/subscriptions/s/providers/x"
    assert attrs["request_ids"] == ["r1", "r2"]
    assert attrs["from_cache"] == [False, False]  # ids never answered from the cache


def test_no_url_means_no_endpoint_and_the_time_is_now_in_utc() -> None:
    before = datetime.now(UTC).replace(microsecond=0)
    attrs = provenance("local_helper", None, None)
    retrieved = datetime.fromisoformat(attrs["retrieved_at"])
    assert attrs["endpoint"] is None and attrs["request_ids"] == [] and attrs["from_cache"] == []
    assert retrieved.utcoffset() == timedelta(0)
    assert before <= retrieved <= datetime.now(UTC) + timedelta(seconds=1)


def test_request_ids_are_copied_not_shared() -> None:
    ids = ["r1"]
    attrs = provenance("f", None, None, ids)
    ids.append("r2")
    assert attrs["request_ids"] == ["r1"]


def test_provenance_of_is_a_copy_of_the_frames_attrs() -> None:
    df = pd.DataFrame({"a": [1]})
    df.attrs.update(provenance("f", "v1", "https://127.0.0.1/p", ["r1"]))
    copied = provenance_of(df)
    assert copied == df.attrs
    copied["operation"] = "g"
    assert df.attrs["operation"] == "f"
    assert provenance_of(pd.DataFrame()) == {}
