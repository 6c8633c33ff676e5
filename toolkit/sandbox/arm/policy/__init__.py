"""The sandbox's policy insights: the world (:mod:`.world`) and the HTTP operations over it
(:mod:`.handlers`)."""

from toolkit.sandbox.arm.policy.handlers import API_VERSIONS, PAGE_SIZE, WINDOW_DAYS, register
from toolkit.sandbox.arm.policy.world import (
    FIELDS,
    STATES,
    PolicyWorld,
    build_world,
    catalog_rows,
)

__all__ = ["API_VERSIONS", "FIELDS", "PAGE_SIZE", "STATES", "WINDOW_DAYS", "PolicyWorld",
           "build_world", "catalog_rows", "register"]
