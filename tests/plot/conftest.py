"""The pictures of every plot helper, drawn once for the session (tests/plot/pictures.py)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.plot.pictures import Pictures, sandbox_frames


@pytest.fixture(scope="session")
def picture_frames() -> Iterator[dict[str, Any]]:
    """Every frame the pictures draw, from a sandbox of their own."""
    with sandbox_frames() as out:
        yield out


@pytest.fixture(scope="session")
def pictures(picture_frames: dict[str, Any]) -> Pictures:
    """Each helper's picture, drawn on first asking and kept for the session."""
    return Pictures(picture_frames)
