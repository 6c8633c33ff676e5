"""The on-disk response cache: identical reads are answered from disk, per caller, and nothing
secret is written."""

from __future__ import annotations

import os
from pathlib import Path

import pandas as pd
import pytest

import toolkit
from toolkit._core.cache import caller_identity, lifetime_header
from toolkit._core.registry import record

pytest.importorskip("requests_cache")


def _connect(sandbox, tmp_path: Path, waits, *, object_id: str | None = None, **kw):
    if object_id is None:
        conn = toolkit.connect(sandbox=sandbox, progress=False, cache=tmp_path / "c.sqlite", **kw)
    else:
        token = sandbox.authority.mint([sandbox.audiences(f)[0] for f in sandbox.cloud.hosts],
                                       object_id=object_id)
        conn = toolkit.connect(sandbox.url, token=token, maps_key=sandbox.maps_key,
                               progress=False, cache=str(tmp_path / "c.sqlite"), **kw)
    conn.sleep = waits
    return conn


def _second_read(sandbox, conn) -> list:
    """The requests the second of two identical reads sent (none when the first answer was
    kept); the connection is closed."""
    try:
        toolkit.support_services(connection=conn)
        with sandbox.recording() as log:
            toolkit.support_services(connection=conn)
    finally:
        conn.close()
    return log


def test_second_identical_read_sends_no_request_and_gives_an_equal_frame(
        sandbox, tmp_path, waits) -> None:
    conn = _connect(sandbox, tmp_path, waits)
    try:
        with sandbox.recording() as first_log:
            first = toolkit.sql_operations(connection=conn)
        with sandbox.recording() as second_log:
            second = toolkit.sql_operations(connection=conn)
    finally:
        conn.close()
    assert len(first_log) >= 2  # several pages went to the service
    assert second_log == []
    pd.testing.assert_frame_equal(first, second)
    assert first.attrs["from_cache"] == [False] * len(first.attrs["request_ids"])
    assert second.attrs["from_cache"] == [True] * len(second.attrs["request_ids"])
    assert second.attrs["request_ids"] == first.attrs["request_ids"]


def test_post_reads_are_keyed_by_body(sandbox, tmp_path, waits) -> None:
    conn = _connect(sandbox, tmp_path, waits)
    try:
        with sandbox.recording() as log:
            a = toolkit.autocomplete("Can", coordinates=(1.6, 42.55), connection=conn)
            b = toolkit.autocomplete("Ord", coordinates=(1.6, 42.55), connection=conn)
            a2 = toolkit.autocomplete("Can", coordinates=(1.6, 42.55), connection=conn)
        routes = [{"origin": (1.5218, 42.5063), "destination": (1.6417, 42.5437)}]
        with sandbox.recording() as route_log:
            r1 = toolkit.route_directions(routes, connection=conn)
            r2 = toolkit.route_directions(routes, connection=conn)
    finally:
        conn.close()
    assert len(log) == 2  # "Can" twice, "Ord" once: the third is from the cache
    assert not a.equals(b)
    pd.testing.assert_frame_equal(a, a2)
    assert [r.method for r in route_log] == ["POST"]
    pd.testing.assert_frame_equal(r1, r2)


def test_a_different_principal_misses(sandbox, tmp_path, waits) -> None:
    alice = _connect(sandbox, tmp_path, waits, object_id="11111111-1111-4111-8111-111111111111")
    try:
        toolkit.support_services(connection=alice)
    finally:
        alice.close()
    bob = _connect(sandbox, tmp_path, waits, object_id="22222222-2222-4222-8222-222222222222")
    try:
        with sandbox.recording() as log:
            df = toolkit.support_services(connection=bob)
        with sandbox.recording() as again:
            toolkit.support_services(connection=bob)
    finally:
        bob.close()
    assert len(log) >= 1 and not any(df.attrs["from_cache"])
    assert again == []


def test_another_maps_account_with_the_same_token_misses(sandbox, tmp_path, waits) -> None:
    # one bearer token, two maps accounts: the service answers the first and refuses the
    # second (its token names no such account); the cache never gives the second the first's
    token = sandbox.token(None)

    def account(client_id: str) -> toolkit.Connection:
        conn = toolkit.connect(sandbox.url, token=token, maps_client_id=client_id,
                               progress=False, cache=str(tmp_path / "c.sqlite"))
        conn.sleep = waits
        return conn

    def read(conn: toolkit.Connection) -> pd.DataFrame:
        try:
            return toolkit.autocomplete("Can", coordinates=(1.6, 42.55), connection=conn)
        finally:
            conn.close()

    assert len(read(account(sandbox.authority.maps_client_id))) > 0
    other = "0f0e0d0c-0b0a-4908-8706-050403020100"
    with sandbox.recording() as log, pytest.raises(toolkit.AuthenticationError):
        read(account(other))
    assert [r.status for r in log] == [401]  # asked, and refused: no such account
    with sandbox.recording() as again:  # the first account's answer is still kept
        assert read(account(sandbox.authority.maps_client_id)).attrs["from_cache"] == [True]
    assert again == []


def test_the_key_holds_every_header_but_those_that_change_nothing() -> None:
    key = b"k" * 32
    base = {"Authorization": "Bearer t", "Accept": "application/json"}
    ident = caller_identity(base, key)
    for changes in ({"x-vendor-client-id": "a"}, {"Accept-Language": "fr"}, {"Prefer": "x"}):
        assert caller_identity({**base, **changes}, key) != ident
    same = {"User-Agent": "other", "x-vendor-client-request-id": "r-1", "Content-Length": "9",
            "Accept-Encoding": "br"}
    assert caller_identity({**base, **same}, key) == ident
    assert caller_identity({**base, "x-ms-client-request-id": "r-2"}, key,
                           header_prefix="x-ms-") == ident


def test_writes_credentials_and_long_running_operations_are_never_cached(
        sandbox, tmp_path, waits, catalog) -> None:
    conn = _connect(sandbox, tmp_path, waits)
    cluster = catalog.query("kind == 'managed_cluster'").iloc[0]
    try:
        for _ in range(2):
            with sandbox.recording() as log:
                creds = toolkit.cluster_monitoring_credentials(
                    cluster.subscription_id, cluster.resource_group, cluster["name"],
                    connection=conn)
            assert len(log) == 1
    finally:
        conn.close()
    assert not any(creds.attrs["from_cache"])
    for name in ("cluster_monitoring_credentials", "hosted_cluster_credentials",
                 "update_encryption_protector", "create_eventstream", "backend_health"):
        assert record(name).lifetime is None
        assert lifetime_header(name, "GET") == {}
    assert lifetime_header("sql_operations", "PUT") == {}


def test_error_answers_are_not_cached(sandbox, tmp_path, waits) -> None:
    conn = _connect(sandbox, tmp_path, waits, max_retries=0)
    try:
        with pytest.raises(toolkit.NotFoundError):
            toolkit.problem_classifications("no-such-service", connection=conn)
        with sandbox.recording() as log, pytest.raises(toolkit.NotFoundError):
            toolkit.problem_classifications("no-such-service", connection=conn)
    finally:
        conn.close()
    assert len(log) >= 1


def test_no_secret_is_written_to_the_cache_files(sandbox, tmp_path, waits, catalog) -> None:
    conn = _connect(sandbox, tmp_path, waits)
    cluster = catalog.query("kind == 'managed_cluster'").iloc[0]
    try:
        toolkit.sql_operations(connection=conn)
        toolkit.air_quality((1.5218, 42.5063), connection=conn)
        creds = toolkit.cluster_monitoring_credentials(
            cluster.subscription_id, cluster.resource_group, cluster["name"], connection=conn)
        token = conn.credential.get_token(conn.scope_for("arm")).token
    finally:
        conn.close()
    secrets = [token, str(sandbox.maps_key.reveal()), token.split(".")[2]]
    secrets += [str(v.reveal()) for v in creds["value"]]
    files = list(tmp_path.iterdir())
    assert files and any(f.stat().st_size > 0 for f in files)
    for f in files:
        data = f.read_bytes()
        for secret in secrets:
            assert secret.encode() not in data, f.name


def test_cache_clear_empties_the_file(sandbox, tmp_path, waits) -> None:
    conn = _connect(sandbox, tmp_path, waits)
    try:
        toolkit.sql_operations(connection=conn)
        assert toolkit.cache_clear(tmp_path / "c.sqlite") == 1
        with sandbox.recording() as log:
            toolkit.sql_operations(connection=conn)
    finally:
        conn.close()
    assert len(log) >= 1


def test_environment_variable_turns_the_cache_on(sandbox, tmp_path, waits, monkeypatch) -> None:
    monkeypatch.setenv("TOOLKIT_CACHE", str(tmp_path / "env-cache"))
    conn = toolkit.connect(sandbox=sandbox, progress=False)
    assert _second_read(sandbox, conn) == []
    assert (tmp_path / "env-cache.sqlite").exists()


def test_cache_setting_is_checked() -> None:
    with pytest.raises(toolkit.ValidationError, match="cache"):
        toolkit.connect("http://127.0.0.1:9", token="t", cache=3)


def test_identity_is_a_keyed_digest_of_the_credential_never_its_claims() -> None:
    import base64
    import json

    def jwt(claims: dict, signature: str = "c2ln") -> str:
        body = base64.urlsafe_b64encode(json.dumps(claims).encode()).decode().rstrip("=")
        return f"e30.{body}.{signature}"

    key = b"k" * 32
    a = jwt({"tid": "t1", "oid": "o1", "exp": 1})
    ident = caller_identity({"Authorization": f"Bearer {a}"}, key)
    forged = jwt({"tid": "t1", "oid": "o1", "exp": 1}, signature="Zm9yZ2Vk")
    assert caller_identity({"Authorization": f"Bearer {forged}"}, key) != ident
    refreshed = jwt({"tid": "t1", "oid": "o1", "exp": 2})
    assert caller_identity({"Authorization": f"Bearer {refreshed}"}, key) != ident
    assert caller_identity({"Authorization": f"Bearer {a}"}, b"x" * 32) != ident  # per file
    assert a not in ident and "t1" not in ident and "o1" not in ident
    assert caller_identity({"subscription-key": "k1"}, key) != caller_identity(
        {"subscription-key": "k2"}, key)
    assert "k1" not in caller_identity({"subscription-key": "k1"}, key)


class _Planted:
    """A pickle payload: unpickling it creates the file ``marker``."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self):
        return (open, (str(self.marker), "w"))


@pytest.mark.parametrize("planted", ["pickle", b'{"foo": 1}', b"[]", b"null",
                                     b'{"status_code": "x"}', b'{"status_code": 200}'])
def test_a_planted_row_runs_nothing_and_is_a_miss(sandbox, tmp_path, waits, planted) -> None:
    import pickle
    import sqlite3

    conn = _connect(sandbox, tmp_path, waits)
    marker = tmp_path / "ran"
    row = pickle.dumps(_Planted(marker)) if planted == "pickle" else planted
    try:
        first = toolkit.support_services(connection=conn)
        with sqlite3.connect(tmp_path / "c.sqlite") as db:
            rows = db.execute("UPDATE responses SET value = ?", (row,)).rowcount
        assert rows >= 1
        with sandbox.recording() as log:
            again = toolkit.support_services(connection=conn)
    finally:
        conn.close()
    assert not marker.exists()
    assert len(log) >= 1 and not any(again.attrs["from_cache"])  # a miss, not a crash
    pd.testing.assert_frame_equal(first.reset_index(drop=True), again.reset_index(drop=True),
                                  check_like=True)


def _planted_loose(path: Path) -> None:
    path.write_bytes(b"")
    path.chmod(0o666)


def _planted_link(path: Path) -> None:
    target = path.parent / "elsewhere.sqlite"
    target.write_bytes(b"")
    target.chmod(0o600)
    path.symlink_to(target)


def _planted_loose_journal(path: Path) -> None:
    journal = Path(f"{path}-wal")
    journal.write_bytes(b"")
    journal.chmod(0o666)


def _planted_by_another_user(path: Path) -> None:
    if not hasattr(os, "getuid") or os.getuid() != 0:
        pytest.skip("giving a file to another user needs root")
    path.write_bytes(b"")
    path.chmod(0o600)
    os.chown(path, 65534, 65534)


@pytest.mark.parametrize("plant", [_planted_loose, _planted_link, _planted_loose_journal,
                                   _planted_by_another_user])
def test_a_cache_file_others_can_write_or_a_symlink_is_refused(
        sandbox, tmp_path, waits, plant) -> None:
    path = tmp_path / "c.sqlite"
    plant(path)
    conn = _connect(sandbox, tmp_path, waits)
    try:
        with sandbox.recording() as log, pytest.raises(toolkit.ValidationError) as caught:
            toolkit.support_services(connection=conn)
    finally:
        conn.close()
    assert log == []
    message = str(caught.value)
    assert caught.value.parameter == "cache" and str(path) in message
    assert "chmod 600" in message and "remove it" in message


def test_the_cache_files_and_the_folder_made_for_them_are_private(sandbox, tmp_path,
                                                                  waits) -> None:
    folder = tmp_path / "made" / "here"
    conn = toolkit.connect(sandbox=sandbox, progress=False, cache=folder / "c.sqlite")
    conn.sleep = waits
    try:
        toolkit.support_services(connection=conn)
        toolkit.sql_operations(connection=conn)
    finally:
        conn.close()
    for made in (folder, folder.parent):
        assert made.stat().st_mode & 0o777 == 0o700, made
    files = list(folder.iterdir())
    assert files
    for f in files:
        assert f.stat().st_mode & 0o777 == 0o600, f.name


@pytest.mark.parametrize("trailing", ["", "/"])
def test_a_folder_means_a_cache_file_inside_it(sandbox, tmp_path, waits, trailing) -> None:
    folder = tmp_path / "answers"
    if not trailing:
        folder.mkdir()
    conn = toolkit.connect(sandbox=sandbox, progress=False, cache=f"{folder}{trailing}")
    conn.sleep = waits
    assert _second_read(sandbox, conn) == []
    assert (folder / "responses.sqlite").is_file()
    assert not (tmp_path / "answers.sqlite").exists()


def test_a_forged_token_with_anothers_claims_reads_nothing_of_theirs(
        sandbox, tmp_path, waits) -> None:
    alice_id = "11111111-1111-4111-8111-111111111111"
    alice = _connect(sandbox, tmp_path, waits, object_id=alice_id)
    try:
        toolkit.support_services(connection=alice)
        real = alice.token.reveal()
    finally:
        alice.close()
    header, claims, _ = real.split(".")
    forged = f"{header}.{claims}.Zm9yZ2VkLXNpZ25hdHVyZQ"
    mallory = toolkit.connect(sandbox.url, token=forged, maps_key=sandbox.maps_key,
                              progress=False, cache=str(tmp_path / "c.sqlite"), max_retries=0)
    mallory.sleep = waits
    try:
        with sandbox.recording() as log, pytest.raises(toolkit.AuthenticationError):
            toolkit.support_services(connection=mallory)
    finally:
        mallory.close()
    assert len(log) == 1  # asked the service, which refused the forged token


def test_a_200_page_that_is_not_json_is_not_kept(tmp_path) -> None:
    from tests.security.conftest import connect_to
    from tests.security.hostile import Answer, Hostile, json_answer

    def script(seen, server) -> Answer:
        if server.count() == 1:  # a captive portal's page, once
            return Answer(200, b"<html>Sign in to the hotel wifi</html>",
                          {"Content-Type": "text/html"})
        return json_answer({"value": []})

    with Hostile(script) as service:
        conn = connect_to(service, cache=tmp_path / "c.sqlite", max_retries=0)
        try:
            with pytest.raises(toolkit.ProtocolError):
                toolkit.sql_operations(connection=conn)
            df = toolkit.sql_operations(connection=conn)
            toolkit.sql_operations(connection=conn)
        finally:
            conn.close()
        assert service.count() == 2  # the second call reached the service, the third did not
    assert df.empty


def test_an_answer_the_operation_cannot_read_is_removed_from_the_cache(tmp_path) -> None:
    from tests.security.conftest import connect_to
    from tests.security.hostile import Answer, Hostile, json_answer

    def script(seen, server) -> Answer:
        if server.count() == 1:  # a JSON object, but no list of operations
            return json_answer({"value": "maintenance"})
        return json_answer({"value": []})

    with Hostile(script) as service:
        conn = connect_to(service, cache=tmp_path / "c.sqlite", max_retries=0)
        try:
            with pytest.raises(toolkit.ProtocolError, match="'value' is not a list"):
                toolkit.sql_operations(connection=conn)
            df = toolkit.sql_operations(connection=conn)
            toolkit.sql_operations(connection=conn)
        finally:
            conn.close()
        assert service.count() == 2  # the refused answer was not given again from the cache
    assert df.empty
