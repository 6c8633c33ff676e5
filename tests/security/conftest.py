"""Fixtures of the security tests: a foreign host that must receive nothing, and connections to
hostile services whose waits are recorded, not slept."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

import toolkit
from tests.security.hostile import Answer, Hostile, Seen

#: A token and a maps key the tests hand to the toolkit; none of the tests may see them again.
TOKEN = "tok-4b1d-SECRET-bearer-7c9e"
MAPS_KEY = "mk-SECRET-maps-key-0f3a9d"


def _nothing(seen: Seen, server: Hostile) -> Answer:
    return Answer(200, {"stolen": True})


@pytest.fixture
def foreign() -> Iterator[Hostile]:
    """Another host (127.0.0.2): whatever the toolkit sends it is recorded."""
    with Hostile(_nothing, host="127.0.0.2") as server:
        yield server


def connect_to(server: Hostile, **kw: Any) -> Any:
    """A connection whose four families all point at ``server``, with a static token and a maps
    key; waits are recorded in ``conn.waits`` instead of slept."""
    waits: list[float] = []
    conn = toolkit.connect(base_url=server.url, token=TOKEN, maps_key=MAPS_KEY,
                           progress=False, **kw)
    conn.sleep = waits.append
    conn.waits = waits  # type: ignore[attr-defined]
    return conn
