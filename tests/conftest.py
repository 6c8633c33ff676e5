"""Shared fixtures: one sandbox for the session, a fresh connection per test whose waits are
recorded instead of slept; and how pytest-xdist shares the tests between its workers.

``make test`` runs the suite on two workers (``-n 2 --dist loadgroup``). Each test module is one
unit of work, so that its module-scoped fixtures (a sandbox, a dask cluster, the documentation
site, a JupyterLab server) start once; each worker has its own session-scoped sandbox. The tests
that measure real time (a deadline that must end a read, a rate over real seconds, a worker killed
mid-read, JupyterLab in Chromium) carry ``@pytest.mark.xdist_group("real-time")``: one worker runs
them one after another, so that no two of them share the machine at once.
"""

from __future__ import annotations

import json
from importlib.metadata import version as _version
from pathlib import Path
from typing import Any

import pytest

import toolkit
from toolkit.sandbox.server import Sandbox

EXAMPLES = Path(__file__).parent / "examples"
TESTS = Path(__file__).parent


@pytest.hookimpl(tryfirst=True)  # before pytest-xdist writes the groups into the test ids
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Put each test under ``tests/`` without a group of its own into its module's group, and
    order the groups as the workers should take them: the longest first.

    pytest-xdist hands the groups out in the order they are collected (``--no-loadscope-reorder``
    in the Makefile: its own order, by the number of tests, leaves the one long test of
    ``tests/test_install.py`` to the end, a worker waiting for it alone). First the real-time
    group (a chain of tests that must run one at a time), then the groups that hold a ``slow``
    test and the notebooks, then the rest, the groups of most tests first, so that the last
    handed out are short. A notebook's cells are its group (``notebooks/conftest.py``), in order.
    """
    for item in items:
        if item.path.is_relative_to(TESTS) and item.get_closest_marker("xdist_group") is None:
            item.add_marker(pytest.mark.xdist_group(item.nodeid.split("::", 1)[0]))
    members: dict[str, list[pytest.Item]] = {}
    for item in items:
        members.setdefault(_group(item), []).append(item)

    def rank(group: str) -> tuple[int, int]:
        if group == "real-time":
            return (0, 0)
        if any(i.get_closest_marker("slow") or i.path.suffix == ".ipynb" for i in members[group]):
            return (1, 0)
        return (2, -len(members[group]))

    ranks = {group: rank(group) for group in members}
    items[:] = sorted(items, key=lambda item: ranks[_group(item)])


def _group(item: pytest.Item) -> str:
    mark = item.get_closest_marker("xdist_group")
    if mark is None:  # a notebook's cell, before notebooks/conftest.py names its group
        return item.nodeid.split("::", 1)[0]
    return str(mark.args[0] if mark.args else mark.kwargs["name"])


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_node_collection_finished(node: Any, ids: list[str]) -> None:
    """Refuse to go on when a worker of ``--dist loadgroup`` gave its tests no group.

    pytest-xdist 3.8 tells its scheduler the groups through the test ids, which pytest 9.2 no
    longer lets it write (pytest-dev/pytest-xdist#1386): the tests would be shared out one by
    one, with no word said.
    """
    if node.config.getoption("dist") == "loadgroup":
        ungrouped = [i for i in ids if i.startswith("tests/") and i.rfind("@") < i.rfind("]") + 1]
        if ungrouped:
            raise pytest.UsageError(
                f"pytest-xdist {_version('pytest-xdist')} did not group the tests under pytest "
                f"{pytest.__version__} (pytest-dev/pytest-xdist#1386; first: {ungrouped[0]}): "
                "install the versions pyproject.toml's dev extra names, or run without -n")


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
