"""connect(): keyword names, environment variables, defaults, masking, TLS rules."""

from __future__ import annotations

import logging

import pytest

import toolkit
from toolkit._core.errors import ValidationError
from toolkit._spec.clouds import NEUTRAL


def test_environment_gives_every_setting(monkeypatch) -> None:
    monkeypatch.setenv("TOOLKIT_ARM_URL", "https://arm.example.test")
    monkeypatch.setenv("TOOLKIT_MAPS_URL", "https://maps.example.test")
    monkeypatch.setenv("TOOLKIT_TOKEN", "env-token-value-123")
    monkeypatch.setenv("TOOLKIT_MAPS_KEY", "env-maps-key-456")
    monkeypatch.setenv("TOOLKIT_MAPS_CLIENT_ID", "client-1")
    monkeypatch.setenv("TOOLKIT_NAMESPACE", "Contoso")
    monkeypatch.setenv("TOOLKIT_HEADER_PREFIX", "x-contoso-")
    monkeypatch.setenv("TOOLKIT_MAX_RETRIES", "2")
    monkeypatch.setenv("TOOLKIT_MAX_RETRY_WAIT", "15")
    monkeypatch.setenv("TOOLKIT_MAX_CONCURRENCY", "3")
    monkeypatch.setenv("TOOLKIT_PROGRESS", "0")
    conn = toolkit.connect()
    assert conn.sandbox is None
    assert conn.arm_url == "https://arm.example.test"
    assert conn.maps_url == "https://maps.example.test"
    assert conn.graph_url == NEUTRAL.host("graph")
    assert conn.token.reveal() == "env-token-value-123"
    assert conn.maps_key.reveal() == "env-maps-key-456"
    assert (conn.namespace, conn.header_prefix) == ("Contoso", "x-contoso-")
    s = conn.settings
    assert (s.max_retries, s.max_retry_wait, s.max_concurrency, s.progress) == (2, 15, 3, False)
    assert "env-token-value-123" not in repr(conn) and "env-maps-key-456" not in repr(conn)
    assert toolkit.get_connection() is conn


def test_base_url_sets_all_families() -> None:
    conn = toolkit.connect("http://127.0.0.1:1", token="x" * 10)
    assert {conn.url_for(f) for f in ("arm", "maps", "graph", "fabric")} == {"http://127.0.0.1:1"}


def test_nothing_configured_starts_the_sandbox(monkeypatch, caplog) -> None:
    for var in ("TOOLKIT_BASE_URL", "TOOLKIT_ARM_URL", "TOOLKIT_TOKEN", "TOOLKIT_MAPS_KEY"):
        monkeypatch.delenv(var, raising=False)
    with caplog.at_level(logging.INFO, logger="toolkit.connection"), \
            pytest.warns(toolkit.SandboxWarning, match="invented data"):
        conn = toolkit.connect(progress=False)
    try:
        assert conn.sandbox is not None and conn.sandbox.running
        assert conn.arm_url == conn.sandbox.url
        lines = [r.getMessage() for r in caplog.records if r.name == "toolkit.connection"]
        assert len(lines) == 1 and conn.sandbox.url in lines[0]
        df = toolkit.sql_operations(connection=conn)
        assert len(df) > 0
    finally:
        conn.close()
    assert not conn.sandbox.running


def test_bad_settings_are_refused() -> None:
    with pytest.raises(ValidationError, match="max_concurrency"):
        toolkit.connect("http://127.0.0.1:1", token="t", max_concurrency=0)
    with pytest.raises(ValidationError, match="not a connect"):
        toolkit.connect("http://127.0.0.1:1", token="t", retries=3)


def test_verify_off_is_refused_for_remote_hosts() -> None:
    with pytest.raises(ValidationError, match="verify"):
        toolkit.connect("https://arm.example.test", token="t", verify=False)
    toolkit.connect("http://127.0.0.1:1", token="t", verify=False)


def test_connection_argument_must_be_a_connection() -> None:
    with pytest.raises(ValidationError, match="connection"):
        toolkit.sql_operations(connection="http://127.0.0.1")


def test_starting_the_sandbox_by_default_warns_once_that_the_data_is_invented() -> None:
    import os
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if not k.startswith("TOOLKIT_")}
    code = "import toolkit\nfor _ in range(2):\n    toolkit.connect().close()\n"
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                          text=True, timeout=120, check=True)
    lines = [line for line in done.stderr.splitlines() if "SandboxWarning" in line]
    assert len(lines) == 1, done.stderr  # the default filter shows it once per place
    assert lines[0].startswith("<string>:3: SandboxWarning: ")  # at the user's own line
    assert "invented data" in lines[0]
    assert "toolkit.connect(cloud='public', credential='cli')" in lines[0]


def test_an_explicit_sandbox_is_announced_without_a_warning(recwarn) -> None:
    conn = toolkit.connect(sandbox=True, progress=False)
    try:
        assert conn.sandbox is not None
        assert not [w for w in recwarn if issubclass(w.category, toolkit.SandboxWarning)]
    finally:
        conn.close()



# ------------------------------------------------ docs/connecting.md's examples, as written
def _guide_blocks() -> list[str]:
    import re
    from pathlib import Path

    text = (Path(__file__).parent.parent / "docs" / "connecting.md").read_text(encoding="utf-8")
    return re.findall(r"```python\n(.*?)```", text, flags=re.S)


class _SandboxTokens:
    """Tokens the sandbox mints for exactly the scope asked (its audience is checked there)."""

    def __init__(self, sandbox) -> None:
        self.sandbox = sandbox
        self.asked: list[str] = []

    def get_token(self, *scopes: str, **kwargs):
        import time

        from azure.core.credentials import AccessToken

        self.asked.append(scopes[0])
        return AccessToken(self.sandbox.authority.mint(scopes[0]), int(time.time()) + 3600)


def test_the_connection_guides_examples_work_as_written_in_every_cloud(monkeypatch) -> None:
    from toolkit._core.credentials import authority_hosts
    from toolkit._spec.clouds import get_cloud
    from toolkit.sandbox.server import Sandbox

    for var in ("TOOLKIT_CLOUD", "TOOLKIT_BASE_URL", "TOOLKIT_CREDENTIAL", "TOOLKIT_TOKEN",
                "AZURE_AUTHORITY_HOST"):
        monkeypatch.delenv(var, raising=False)
    made: list[tuple[dict, toolkit.Connection]] = []
    real = toolkit.connect

    def connect(*args, **kwargs):
        conn = real(*args, **kwargs)
        made.append((kwargs, conn))
        return conn

    monkeypatch.setattr(toolkit, "connect", connect)
    blocks = _guide_blocks()
    assert len(blocks) >= 2
    page: dict = {"__name__": "connecting_md"}  # run top to bottom, as a reader would
    for block in blocks:
        exec(compile(block, "docs/connecting.md", "exec"), page)
    clouds = {get_cloud(kw.get("cloud", "public")).name for kw, _ in made}
    assert clouds == {"public", "usgov", "china"}
    for kwargs, conn in made:
        cloud = get_cloud(kwargs.get("cloud", "public"))
        assert conn.cloud is cloud and conn.sandbox is None
        # the credential signs in at the cloud's own host (or names none: the Azure CLI's)
        assert authority_hosts(conn.credential) <= {cloud.authority_host}
        offered = [f for f in ("arm", "maps", "graph", "fabric") if cloud.host(f)]
        assert {f: conn.url_for(f) for f in offered} == {f: cloud.host(f) for f in offered}
        # the service in that cloud's words takes tokens for the scopes this connection asks
        with Sandbox(cloud=cloud.name) as sb:
            tokens = _SandboxTokens(sb)
            there = real(base_url=sb.url, cloud=cloud.name, credential=tokens,
                         scopes={f: conn.scope_for(f) for f in offered},
                         maps_client_id=sb.authority.maps_client_id, progress=False)
            # (the first workspace, as the catalogue lists it, without building the whole world)
            workspace = next(iter(sb.world.section("fabric").workspaces.values())).id
            try:
                for family in offered:
                    df = {"arm": toolkit.sql_operations,
                          "maps": lambda connection: toolkit.autocomplete(
                              "Can", coordinates=(1.52, 42.51), connection=connection),
                          "graph": toolkit.authentication_strength_policies,
                          "fabric": lambda connection, ws=workspace: toolkit.create_eventstream(
                              ws, "guide-check", connection=connection),
                          }[family](connection=there)
                    assert df.attrs["sandbox"] is True, (cloud.name, family)
            finally:
                there.close()
        assert sorted(set(tokens.asked)) == sorted({conn.scope_for(f) for f in offered})
        conn.close()
