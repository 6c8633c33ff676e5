"""Fixtures of the sandbox's own tests: raw requests with a resource-manager token."""

from __future__ import annotations

import pytest
import requests


@pytest.fixture
def arm(sandbox):
    """Send a raw request to the sandbox with a resource-manager token."""
    token = sandbox.token("arm")

    def call(method: str, path: str, *, headers=None, **kw):
        h = {"Authorization": f"Bearer {token}", **(headers or {})}
        return requests.request(method, sandbox.url + path, headers=h, timeout=10, **kw)

    return call


def ops_path(sandbox) -> str:
    """The path of the database provider's operations, in the sandbox cloud's words."""
    return f"/providers/{sandbox.namespace}.Sql/operations"
