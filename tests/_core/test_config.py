"""The core gets a frozen per-family configuration and never reads the connection."""

from __future__ import annotations

import ast
import dataclasses
from pathlib import Path

import pytest

import toolkit
from tests.security.hostile import Answer, Hostile, Seen, json_answer
from toolkit._core.config import Credentials, FamilyConfig, Settings
from toolkit._core.messages import Request
from toolkit._core.pipeline import Pipeline
from toolkit._core.policies import Stats
from toolkit._core.polling import Operation

CORE = Path(toolkit.__file__).parent / "_core"


def test_the_core_imports_nothing_from_the_connection() -> None:
    for module in CORE.glob("*.py"):
        tree = ast.parse(module.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            names = []
            if isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
            elif isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            assert not any(n == "toolkit.connection" or n.startswith("toolkit.connection.")
                           for n in names), module.name


def test_the_configuration_is_frozen(sandbox: object) -> None:
    conn = toolkit.connect(sandbox=sandbox, progress=False)
    config = conn.pipeline("arm").config
    with pytest.raises(dataclasses.FrozenInstanceError):
        config.base_url = "https://elsewhere.example"  # type: ignore[misc]
    assert config.settings is conn.settings
    assert conn.owns_sandbox is False
    conn.close()


def _pipeline(base: str, **kw: object) -> Pipeline:
    return Pipeline(FamilyConfig(family="arm", base_url=base, settings=Settings(),
                                 credentials=Credentials(token=toolkit.Secret("t" * 12)),
                                 stats=Stats(), sleep=lambda s: None, **kw))  # type: ignore[arg-type]


def test_the_request_id_is_read_with_the_configured_prefix() -> None:
    with Hostile(lambda s, h: json_answer({}, **{"x-ms-request-id": "rid-ms",
                                                "x-vendor-request-id": "rid-vendor"})) as svc:
        pipe = _pipeline(svc.url, header_prefix="x-ms-")
        assert pipe.send(Request("GET", "/x")).request_id == "rid-ms"
        pipe.close()


def test_polling_follows_the_configured_async_header() -> None:
    def script(seen: Seen, server: Hostile) -> Answer:
        if seen.path.startswith("/status"):
            return json_answer({"status": "Succeeded"})
        if seen.path.startswith("/result"):
            return json_answer({"done": True})
        return Answer(202, b"", {"Location": f"{server.url}/result",
                                 "Azure-AsyncOperation": f"{server.url}/status",
                                 "Retry-After": "1"})

    with Hostile(script) as svc:
        pipe = _pipeline(svc.url, async_header="Azure-AsyncOperation")
        result = Operation.start(pipe, "POST", "/start", name="probe",
                                 parse=lambda r: r.json()).result()
        pipe.close()
    assert result == {"done": True}
    assert [s.path for s in svc.seen] == ["/start", "/status", "/result"]
