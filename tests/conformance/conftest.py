"""The vendors' own Python clients against the sandbox in the public cloud's vocabulary, over
TLS (the sandbox's generated certificate authority): one sandbox for the suite, its credential
(tokens for the real audiences) and where its world keeps things."""

from __future__ import annotations

from typing import Any

import pandas as pd
import pytest

from toolkit.sandbox.server import Sandbox

#: Why a module of the vendors' clients is skipped: they are the ``conformance`` extra, which the
#: ``dev`` extra leaves out (``make conformance`` installs it and runs this suite).
NOT_INSTALLED = ("the vendors' clients are not installed: `make conformance` installs the "
                 "conformance extra and runs tests/conformance")


@pytest.fixture(scope="session")
def cloud_sandbox() -> Any:
    # Retry-After: 1 (not 0): the eventstream client's poller ignores polling_interval and
    # waits its own 30 s default whenever the service names no positive wait
    with Sandbox(cloud="public", tls=True, lro_polls=2, lro_retry_after=1) as sb:
        yield sb


@pytest.fixture(autouse=True)
def poller_waits(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """The waits the vendors' pollers (azure-core's, which every client here uses) ask for
    between their polls: recorded, not slept, as the toolkit's are (the sandbox's Retry-After:
    1 s a poll)."""
    try:
        from azure.core.polling.base_polling import LROBasePolling
    except ImportError:  # the conformance extra is not installed: nothing polls
        return []
    waits: list[float] = []
    monkeypatch.setattr(LROBasePolling, "_sleep", lambda self, delay: waits.append(delay))
    return waits


@pytest.fixture(scope="session")
def world_catalog(cloud_sandbox: Sandbox) -> pd.DataFrame:
    return cloud_sandbox.catalog()


@pytest.fixture(scope="session")
def credential(cloud_sandbox: Sandbox) -> Any:
    return cloud_sandbox.credential()


@pytest.fixture(scope="session")
def client_kwargs(cloud_sandbox: Sandbox) -> dict[str, Any]:
    """What every azure-core based client is built with: the sandbox's address and CA."""
    return {"base_url": cloud_sandbox.url, "connection_verify": cloud_sandbox.ca_file}


def first(catalog: pd.DataFrame, kind: str, name: str | None = None) -> pd.Series:
    """The first catalog row of a kind (and name)."""
    rows = catalog[catalog["kind"] == kind]
    if name is not None:
        rows = rows[rows["name"] == name]
    return rows.iloc[0]


def enum_values(enum: Any) -> set[str]:
    """The values an SDK enum knows."""
    return {str(m.value) for m in enum}


#: The sandbox's fault header in the public cloud's words: a long-running operation that fails.
FAIL_OPERATION = {"x-ms-sandbox-fault": "lro_fail"}
