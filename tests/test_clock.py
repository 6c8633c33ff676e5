"""service_now: the time by a service's clock, the ``Date`` of its latest fresh answer (plus the
time since), asked with one light request where the family has one; never an answer from the
response cache; maps and identity refused before any request until they have answered."""

from __future__ import annotations

import pandas as pd
import pytest

import toolkit
from tests.replay import Answer, replay_server
from toolkit.sandbox.server import Sandbox

#: A day the sandbox of these tests is pinned to: no other test, notebook or world is about it.
ELSEWHEN = "2031-03-04T05:06:07Z"
#: Seconds a test may take between the sandbox's start and its last question (a busy machine).
SLACK = 300


@pytest.fixture(scope="module")
def elsewhen():
    with Sandbox(seed=3, now=ELSEWHEN) as sb:
        yield sb


@pytest.fixture
def econn(elsewhen):
    c = toolkit.connect(sandbox=elsewhen, progress=False)
    yield c
    c.close()


def _near(told: pd.Timestamp, start: str) -> None:
    at = pd.Timestamp(start)
    assert at.floor("s") <= told <= at + pd.Timedelta(seconds=SLACK), told
    assert told.tz is not None and told == told.floor("s")


def test_the_resource_managers_clock_asks_one_light_request_first(econn, elsewhen) -> None:
    with elsewhen.recording() as log:
        first = toolkit.service_now(connection=econn)
        again = toolkit.service_now("arm", connection=econn)
    _near(first, ELSEWHEN)
    assert again >= first
    # the first page of the subscriptions, once: the second answer came from the first
    assert [(e.method, e.route) for e in log] == [("GET", "subscriptions")]


def test_the_latest_answer_tells_the_clock_without_asking(econn, elsewhen) -> None:
    toolkit.sql_operations(connection=econn)
    with elsewhen.recording() as log:
        told = toolkit.service_now(connection=econn)
    assert log == []
    _near(told, ELSEWHEN)


def test_eventstreams_ask_the_first_page_of_workspaces(econn, elsewhen) -> None:
    with elsewhen.recording() as log:
        told = toolkit.service_now("fabric", connection=econn)
    _near(told, ELSEWHEN)
    assert [e.route for e in log] == ["fabric_workspaces"]


@pytest.mark.parametrize("family, call", [
    ("maps", lambda c: toolkit.geocode("Ordino", connection=c)),
    ("graph", lambda c: toolkit.authentication_strength_policies(connection=c)),
])
def test_maps_and_identity_tell_it_only_once_they_have_answered(econn, elsewhen, family,
                                                                call) -> None:
    with elsewhen.recording() as log, pytest.raises(toolkit.ToolkitError,
                                                    match=f"no answer of the {family} family"):
        toolkit.service_now(family, connection=econn)
    assert log == []
    call(econn)
    _near(toolkit.service_now(family, connection=econn), ELSEWHEN)


@pytest.mark.parametrize("bad", ["ARM", "sql", "", None, 3])
def test_an_unknown_family_is_refused_before_any_request(econn, elsewhen, bad) -> None:
    with elsewhen.recording() as log, pytest.raises(toolkit.ValidationError) as info:
        toolkit.service_now(bad, connection=econn)
    assert info.value.parameter == "family" and log == []


def test_a_refusal_still_tells_the_date() -> None:
    with replay_server() as rp:
        rp.add("GET", r"/subscriptions\?", Answer(
            403, {"error": {"code": "AuthorizationFailed", "message": "no role"}},
            {"Date": "Fri, 07 Feb 2031 10:11:12 GMT"}))
        c = toolkit.connect(base_url=rp.url, token="example-token-0123456789", progress=False)
        try:
            told = toolkit.service_now(connection=c)
        finally:
            c.close()
    _near(told, "2031-02-07T10:11:12Z")


def test_an_answer_from_the_cache_does_not_tell_the_clock(tmp_path) -> None:
    cache = tmp_path / "answers.sqlite"
    with replay_server() as rp:
        rp.add("GET", r"/providers/Vendor\.Sql/operations", Answer(
            200, {"value": [{"name": "Vendor.Sql/servers/read"}]},
            {"Date": "Mon, 01 Jan 2029 00:00:00 GMT"}))
        rp.add("GET", r"/subscriptions\?", Answer(200, {"value": []},
                                                  {"Date": "Wed, 02 Jan 2030 03:04:05 GMT"}))
        kept = toolkit.connect(base_url=rp.url, token="example-token-0123456789",
                               progress=False, cache=cache)
        later = toolkit.connect(base_url=rp.url, token="example-token-0123456789",
                                progress=False, cache=cache)
        try:
            toolkit.sql_operations(connection=kept)
            _near(toolkit.service_now(connection=kept), "2029-01-01T00:00:00Z")
            asked = len(rp.seen)
            toolkit.sql_operations(connection=later)  # from the cache: nothing sent
            assert len(rp.seen) == asked
            told = toolkit.service_now(connection=later)
        finally:
            kept.close()
            later.close()
    # the cached answer's date (a day of 2029) is not the service's clock: it was asked
    assert rp.seen[-1][1].startswith("/subscriptions?")
    _near(told, "2030-01-02T03:04:05Z")


def test_an_answer_without_a_readable_date_tells_nothing() -> None:
    with replay_server() as rp:
        rp.add("GET", r"/v1/workspaces", Answer(200, {"value": []}, {"Date": "not a date"}))
        c = toolkit.connect(base_url=rp.url, token="example-token-0123456789", progress=False)
        try:
            with pytest.raises(toolkit.ToolkitError, match="no answer of the fabric family"):
                toolkit.service_now("fabric", connection=c)
        finally:
            c.close()
