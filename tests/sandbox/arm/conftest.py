"""Raw HTTP calls to the sandbox's resource-management routes, with a valid token."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
import requests

from toolkit.sandbox.server import Sandbox

Call = Callable[..., requests.Response]


def arm_caller(sandbox: Sandbox) -> Call:
    """``call(method, path_or_url, params=..., headers=..., json=...)`` with a bearer token."""
    token = sandbox.token("arm")

    def call(method: str, path: str, *, headers: dict[str, str] | None = None,
             **kw: Any) -> requests.Response:
        url = path if path.startswith("http") else sandbox.url + path
        h = {"Authorization": f"Bearer {token}", **(headers or {})}
        return requests.request(method, url, headers=h, timeout=30, **kw)

    return call


@pytest.fixture(scope="module")
def arm(sandbox: Sandbox) -> Call:
    return arm_caller(sandbox)
