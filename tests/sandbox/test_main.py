"""``python -m toolkit.sandbox``: the sandbox served by a process of its own, its options
(port, seed, cloud, TLS, operation length, credentials, logging) and its refusals of bad ones.

Every process a test starts lives inside a ``with`` block that stops it (SIGINT as Ctrl-C, then
kill if it lingers), and every wait for its output has a deadline.
"""

from __future__ import annotations

import os
import queue
import signal
import socket
import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import requests

import toolkit
from tests.browser import free_port
from toolkit.sandbox.__main__ import main
from toolkit.sandbox.auth import TokenAuthority
from toolkit.sandbox.graph.identity import build_world
from toolkit.sandbox.world import World

ROOT = Path(toolkit.__file__).parents[1]
#: Seconds a started process may take to say where it serves (imports on a shared machine).
STARTUP = 60
STRENGTHS = "/beta/policies/authenticationStrengthPolicies"


@dataclass
class Served:
    """A running ``python -m toolkit.sandbox``: its process, address and printed lines."""

    proc: subprocess.Popen
    lines: list[str]
    url: str = ""
    credentials: dict[str, str] = field(default_factory=dict)
    ca_file: str | None = None


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "TOOLKIT_CLOUD"}
    env.update(extra)
    return env


@contextmanager
def serving(*args: str, env: dict[str, str] | None = None,
            stderr: object = subprocess.DEVNULL, ignore_sigint: bool = False
            ) -> Iterator[Served]:
    """Start the sandbox process, wait (bounded) for its address, and always stop it.

    ``ignore_sigint`` starts it with SIGINT ignored, as a shell starts a background job.
    """
    proc = subprocess.Popen([sys.executable, "-m", "toolkit.sandbox", *args], cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=stderr, text=True,
                            env=env or _env(),
                            preexec_fn=(lambda: signal.signal(signal.SIGINT, signal.SIG_IGN))
                            if ignore_sigint else None)
    lines: queue.Queue[str | None] = queue.Queue()

    def read() -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            lines.put(line.rstrip("\n"))
        lines.put(None)

    threading.Thread(target=read, daemon=True).start()
    served = Served(proc, [])
    try:
        while True:
            line = lines.get(timeout=STARTUP)
            assert line is not None, f"the process ended ({proc.wait(10)}) before serving"
            served.lines.append(line)
            if line.startswith("sandbox serving at "):
                served.url = line.split(" at ", 1)[1].split(" ", 1)[0]
            elif line.startswith("CA certificate: "):
                served.ca_file = line.removeprefix("CA certificate: ").split(" (", 1)[0]
            elif line.startswith("TOOLKIT_"):
                name, _, value = line.partition("=")
                served.credentials[name] = value
            if line.startswith(("tokens are signed", "TOOLKIT_MAPS_KEY=")):
                break
        yield served
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGINT)
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(timeout=15)
        if proc.stdout is not None:
            proc.stdout.close()


def _strength_ids(served: Served) -> list[str]:
    token = served.credentials["TOOLKIT_TOKEN"]
    url, ids = served.url + STRENGTHS, []
    while url:
        body = requests.get(url, headers={"Authorization": f"Bearer {token}"}, timeout=10,
                            verify=served.ca_file or True).json()
        ids += [s["id"] for s in body["value"]]
        url = body.get("@odata.nextLink")
    return ids


# ---------------------------------------------------------------------- serving
def test_serves_until_interrupted_and_then_frees_its_port() -> None:
    with serving() as served:
        assert served.url.startswith("http://127.0.0.1:")
        first = served.lines[0]
        assert "(seed 7; the neutral cloud's words" in first
        assert served.lines[1].startswith("tokens are signed by this process")
        assert served.credentials == {}  # no secret printed unless asked
        r = requests.get(served.url + "/providers/Vendor.Sql/operations?api-version=2025-01-01",
                         timeout=10)
        assert r.status_code == 401  # a real service: it authenticates
        served.proc.send_signal(signal.SIGINT)
        assert served.proc.wait(timeout=15) == 0  # Ctrl-C is a clean stop
    with pytest.raises(requests.ConnectionError):
        requests.get(served.url + "/openapi.json", timeout=5)


def test_ctrl_c_stops_it_even_when_started_with_sigint_ignored() -> None:
    # a background job of a shell, or the child of a process that ignores SIGINT, inherits
    # the ignoring; the process says Ctrl-C stops it, and it does
    with serving(ignore_sigint=True) as served:
        served.proc.send_signal(signal.SIGINT)
        assert served.proc.wait(timeout=15) == 0


def test_port_operation_length_credentials_and_logging_options() -> None:
    port = free_port()
    gw = World(7).catalog().query("kind == 'application_gateway'").iloc[0]
    with tempfile.TemporaryFile("w+") as log:
        with serving("--port", str(port), "--lro-polls", "4", "--show-credentials", "-v",
                     stderr=log) as served:
            assert served.url == f"http://127.0.0.1:{port}"
            token, key = (served.credentials[k] for k in ("TOOLKIT_TOKEN", "TOOLKIT_MAPS_KEY"))
            # the printed credentials are the ones the process accepts, through the toolkit
            conn = toolkit.connect(served.url, token=token, maps_key=key, progress=False)
            try:
                assert len(toolkit.sql_operations(connection=conn)) > 0
                assert len(toolkit.autocomplete("Can", coordinates=(1.52, 42.51),
                                                connection=conn)) > 0
            finally:
                conn.close()
            wrong = requests.get(served.url + "/geocode:autocomplete?api-version=2026-01-01"
                                 "&query=Can&coordinates=1.52,42.51",
                                 headers={"subscription-key": key[::-1]}, timeout=10)
            assert wrong.status_code == 401
            # an operation takes the polls asked for
            headers = {"Authorization": f"Bearer {token}"}
            first = requests.post(
                f"{served.url}/subscriptions/{gw.subscription_id}/resourceGroups/"
                f"{gw.resource_group}/providers/Vendor.Network/applicationGateways/"
                f"{gw['name']}/backendhealth?api-version=2025-05-01&marker=verbose",
                headers=headers, timeout=10)
            assert first.status_code == 202
            codes = [requests.get(first.headers["Location"], headers=headers,
                                  timeout=10).status_code for _ in range(4)]
            assert codes == [202, 202, 202, 200]
        log.seek(0)
        text = log.read()
    # -v logs every request (and never the credentials)
    assert "sandbox serving at" in text and "marker=verbose" in text
    assert token not in text and key not in text


def test_seed_cloud_and_tls_options() -> None:
    # the option wins over the environment
    with serving("--seed", "8", "--cloud", "public", "--tls", "--show-credentials",
                 env=_env(TOOLKIT_CLOUD="china")) as served:
        assert "(seed 8; the public cloud's words: connect with cloud='public'" in \
            served.lines[0]
        assert served.url.startswith("https://127.0.0.1:")
        assert served.ca_file and Path(served.ca_file).is_file()
        # that seed's world, verified with the printed CA
        assert _strength_ids(served) == [s.id for s in build_world(World(8)).strengths]
        assert _strength_ids(served) != [s.id for s in build_world(World(7)).strengths]
        headers = {"Authorization": f"Bearer {served.credentials['TOOLKIT_TOKEN']}"}
        r = requests.get(served.url + "/providers/Microsoft.Sql/operations"
                         "?api-version=2025-01-01", headers=headers, timeout=10,
                         verify=served.ca_file)
        assert r.status_code == 200 and "x-ms-request-id" in r.headers
        assert r.json()["value"][0]["name"].startswith("Microsoft.Sql/")
        vendor = requests.get(served.url + "/providers/Vendor.Sql/operations"
                              "?api-version=2025-01-01", headers=headers, timeout=10,
                              verify=served.ca_file)
        assert vendor.status_code == 404
        with pytest.raises(requests.exceptions.SSLError):
            requests.get(served.url + "/openapi.json", timeout=10)
        ca_file = served.ca_file
    assert not Path(ca_file).exists()  # removed when the process stops


def test_the_cloud_defaults_to_the_environments() -> None:
    with serving(env=_env(TOOLKIT_CLOUD="public")) as served:
        assert "the public cloud's words" in served.lines[0]
        r = requests.get(served.url + "/providers/Microsoft.Sql/operations", timeout=10)
        assert r.status_code == 401 and "x-ms-request-id" in r.headers


# ---------------------------------------------------------------------- refusals
def test_a_bad_option_stops_the_command_before_serving() -> None:
    done = subprocess.run([sys.executable, "-m", "toolkit.sandbox", "--cloud", "mars"],
                          cwd=ROOT, capture_output=True, text=True, timeout=STARTUP, env=_env())
    assert done.returncode == 2
    assert "invalid choice: 'mars'" in done.stderr
    assert "usage: python -m toolkit.sandbox" in done.stderr
    assert done.stdout == ""  # nothing served


@pytest.mark.parametrize("args, said", [
    (["--cloud", "mars"], "invalid choice: 'mars'"),
    (["--port", "eighty"], "invalid int value: 'eighty'"),
    (["--port", "70000"], "70000 is not a port"),
    (["--port", "-1"], "-1 is not a port"),
    (["--seed", "1.5"], "invalid int value: '1.5'"),
    (["--lro-polls", "x"], "invalid int value: 'x'"),
    (["--host", "0.0.0.0"], "unrecognized arguments: --host"),
    (["extra"], "unrecognized arguments: extra"),
    (["--deny-subscription", "retail-qa"],
     "no subscription of this world is named 'retail-qa' (its subscriptions: retail-prod, "),
])
def test_bad_options_are_refused(capsys: pytest.CaptureFixture[str], args: list[str],
                                 said: str) -> None:
    with pytest.raises(SystemExit) as info:
        main(args)
    assert info.value.code == 2
    out, err = capsys.readouterr()
    assert said in err and out == ""


def test_a_bad_cloud_in_the_environment_is_refused(monkeypatch: pytest.MonkeyPatch,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("TOOLKIT_CLOUD", "mars")
    with pytest.raises(SystemExit) as info:
        main([])
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert "TOOLKIT_CLOUD" in err and "'mars'" in err and "neutral" in err


def test_a_port_in_use_is_refused() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = subprocess.run([sys.executable, "-m", "toolkit.sandbox", "--port", str(port)],
                              cwd=ROOT, capture_output=True, text=True, timeout=STARTUP,
                              env=_env())
    assert done.returncode == 1
    assert f"cannot listen on 127.0.0.1:{port}" in done.stderr
    assert "Traceback" not in done.stderr and done.stdout == ""


def test_help_lists_the_options(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        main(["--help"])
    assert info.value.code == 0
    out = capsys.readouterr().out
    for option in ("--port", "--seed", "--tls", "--cloud", "--lro-polls",
                   "--show-credentials", "--verbose", "--deny-subscription", "--secret"):
        assert option in out


def test_now_pins_the_served_world_and_says_so() -> None:
    with serving("--now", "2027-01-05") as served:
        assert "its clock started at 2027-01-05T09:00:00+00:00" in served.lines[0]
        r = requests.get(served.url + "/subscriptions?api-version=2022-12-01", timeout=10)
        assert r.headers["Date"].startswith("Tue, 05 Jan 2027 09:")


def test_a_subscription_denied_and_the_keys_from_a_secret() -> None:
    secret = "a-secret-this-test-made-up-0123456789"
    world = World(7)
    dev = next(s for s in world.subscriptions if s.name == "retail-dev")
    with serving("--deny-subscription", "RETAIL-DEV", "--show-credentials",
                 env=_env(TOOLKIT_SANDBOX_SECRET=secret)) as served:
        assert "refusing (403) the subscriptions retail-dev and the management groups above " \
               "them" in served.lines
        # the secret in the environment gives the keys it derives, in any process
        assert served.credentials["TOOLKIT_MAPS_KEY"] == \
            TokenAuthority(secret).maps_key.reveal()
        headers = {"Authorization": f"Bearer {served.credentials['TOOLKIT_TOKEN']}"}
        refused = requests.get(f"{served.url}/subscriptions/{dev.id}/resourcegroups"
                               "?api-version=2021-04-01", headers=headers, timeout=10)
        other = next(s for s in world.subscriptions if s.name != "retail-dev")
        read = requests.get(f"{served.url}/subscriptions/{other.id}/resourcegroups"
                            "?api-version=2021-04-01", headers=headers, timeout=10)
    assert refused.status_code == 403
    assert refused.json()["error"]["code"] == "AuthorizationFailed"
    assert read.status_code == 200
