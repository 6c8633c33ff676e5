"""While nbval runs the notebooks, no cell shows a credential of the sandbox it started.

Each notebook's kernel starts with ``TOOLKIT_SANDBOX_NOW`` pinning the sandbox world to the one the
committed outputs were made with (the sandbox otherwise follows today's date), and with
``TOOLKIT_SANDBOX_SECRET`` set to a value only this run knows,
so the sandbox the notebook starts signs its tokens and derives its maps key from it. Every cell's
fresh outputs are then searched for the maps key, the world's secret values and any token that
verifies with the sandbox's signing key; a cell that shows one fails, whatever nbval's comparison
with the committed outputs says.

Under pytest-xdist (``make test`` runs ``-n 2 --dist loadgroup``) each notebook's cells are one
group: one worker runs them in order, in the one kernel the notebook started.
"""

from __future__ import annotations

import json
import os
import re
import secrets
from collections.abc import Iterator
from functools import cache
from typing import Any

import pytest

try:
    from nbval.plugin import IPyNbCell
except ImportError:  # nbval not installed: the notebooks are not run either
    IPyNbCell = None

_SECRET = secrets.token_hex(16)
#: The instant of the world the committed outputs were made with (as the Makefile's NOTEBOOK_NOW).
_NOW = "2026-11-20T09:00:00Z"
# the variables that would point the notebooks away from their own sandbox
_UNSET = ("TOOLKIT_BASE_URL", "TOOLKIT_ARM_URL", "TOOLKIT_MAPS_URL", "TOOLKIT_GRAPH_URL",
          "TOOLKIT_FABRIC_URL", "TOOLKIT_TOKEN", "TOOLKIT_MAPS_KEY", "TOOLKIT_CREDENTIAL",
          "TOOLKIT_CLOUD")
_JWT = re.compile(r"[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{20,}")


def _is_cell(item: pytest.Item) -> bool:
    return IPyNbCell is not None and isinstance(item, IPyNbCell)


@cache
def _known() -> tuple[Any, tuple[str, ...]]:
    from toolkit.sandbox.arm.clusters import secret_values
    from toolkit.sandbox.auth import TokenAuthority
    from toolkit.sandbox.world import World, world_epoch

    authority = TokenAuthority(_SECRET)
    # the notebooks run against the default sandbox world (seed 7) of their pinned day
    return authority, (str(authority.maps_key.reveal()),
                       *secret_values(World(7, epoch=world_epoch(_NOW))))


def _leaks(shown: str) -> list[str]:
    authority, values = _known()
    leaked = [v[:6] + "..." for v in values if v in shown]
    for candidate in set(_JWT.findall(shown)):
        try:
            authority.verify(candidate)
        except ValueError:
            continue
        leaked.append(candidate[:6] + "...")
    return leaked


@pytest.hookimpl(tryfirst=True)  # before pytest-xdist writes the groups into the test ids
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Put each notebook's cells into one xdist group, named after the notebook."""
    for item in items:
        if _is_cell(item):
            item.add_marker(pytest.mark.xdist_group(item.nodeid.split("::", 1)[0]))


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_node_collection_finished(node: Any, ids: list[str]) -> None:
    """Refuse to go on when a worker of ``--dist loadgroup`` gave the cells no group.

    Without it they would be shared out one by one and run in kernels that never ran the cells
    before them (pytest 9.2 with pytest-xdist 3.8: pytest-dev/pytest-xdist#1386).
    """
    if node.config.getoption("dist") == "loadgroup":
        ungrouped = [i for i in ids if ".ipynb::" in i and "@" not in i]
        if ungrouped:
            raise pytest.UsageError(
                f"pytest-xdist did not group the notebooks' cells under pytest "
                f"{pytest.__version__} (pytest-dev/pytest-xdist#1386; first: {ungrouped[0]}): "
                "install the versions pyproject.toml's dev extra names, or run without -n")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_setup(item: pytest.Item) -> Iterator[None]:
    """The first cell's setup starts the notebook's kernel: it inherits this environment."""
    if not _is_cell(item):
        yield
        return
    saved = {name: os.environ.get(name)
             for name in ("TOOLKIT_SANDBOX_SECRET", "TOOLKIT_SANDBOX_NOW", *_UNSET)}
    for name in _UNSET:
        os.environ.pop(name, None)
    os.environ["TOOLKIT_SANDBOX_SECRET"] = _SECRET
    os.environ["TOOLKIT_SANDBOX_NOW"] = _NOW
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    outcome = yield
    if not _is_cell(item) or call.when != "call":
        return
    outputs = getattr(item, "test_outputs", None) or []
    leaked = _leaks(json.dumps(outputs, default=str))
    if leaked:
        report = outcome.get_result()
        report.outcome = "failed"
        report.longrepr = f"{item.name} shows credentials of its sandbox: {leaked}"
