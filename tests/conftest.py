"""Shared fixtures: one sandbox for the session, a fresh connection per test whose waits are
recorded instead of slept."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import toolkit
from toolkit.sandbox.server import Sandbox

EXAMPLES = Path(__file__).parent / "examples"


class Waits(list):
    """Records the waits the toolkit asks for (Retry-After, backoff, polling)."""

    def __call__(self, seconds: float) -> None:
        self.append(seconds)


#: The instant the tests' sandbox worlds start from: the expected values were written for this
#: world, so every sandbox a test starts without ``now=`` is pinned to it (as the committed
#: notebooks are); the tests of the clock itself unset it.
WORLD_NOW = "2026-11-20T09:00:00Z"


@pytest.fixture(scope="session", autouse=True)
def _pinned_world_day() -> Any:
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("TOOLKIT_SANDBOX_NOW", WORLD_NOW)
        yield


@pytest.fixture(scope="session")
def sandbox() -> Any:
    with Sandbox(seed=7, lro_polls=3, lro_retry_after=2) as sb:
        yield sb


@pytest.fixture(autouse=True)
def _clean_faults(request: pytest.FixtureRequest) -> Any:
    yield
    if "sandbox" in request.fixturenames:
        request.getfixturevalue("sandbox").clear_faults()


@pytest.fixture
def waits() -> Waits:
    return Waits()


@pytest.fixture
def conn(sandbox: Sandbox, waits: Waits) -> Any:
    connection = toolkit.connect(sandbox=sandbox, progress=False)
    connection.sleep = waits
    yield connection
    connection.close()


@pytest.fixture(scope="session")
def world(sandbox: Sandbox) -> Any:
    return sandbox.world


@pytest.fixture(scope="session")
def catalog(sandbox: Sandbox) -> Any:
    return sandbox.catalog()


def example(folder: str, name: str) -> dict[str, Any]:
    """A shared real example payload."""
    return json.loads((EXAMPLES / folder / name).read_text(encoding="utf-8"))
