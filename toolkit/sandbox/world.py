"""The sandbox world: deterministic from a seed, built lazily one section at a time.

The core of the world is the tenant's subscriptions and resource groups; each service module adds
a section (application gateways, SQL servers, the operations catalogue, ...) through
:data:`SECTIONS`, built on first use from the world's seed, and says what it holds to
:meth:`World.catalog`.
"""

from __future__ import annotations

import importlib
import random
import threading
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import UTC, date, datetime
from typing import TYPE_CHECKING, Any

from toolkit._spec.clouds import NEUTRAL, Cloud

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["DAY_START_HOUR", "NOW_ENV", "SECTIONS", "ManagementGroup", "ResourceGroup",
           "Subscription", "World", "world_epoch"]

#: The hour (UTC) at which a sandbox day's clock starts: a day given without a time (and the
#: default, today) means this hour of it.
DAY_START_HOUR = 9

#: The instant the committed notebooks' worlds start from (their ``TOOLKIT_SANDBOX_NOW``), and
#: the fixed origin of the calendars some simulations keep (weather cycles).
DEFAULT_EPOCH = datetime(2026, 11, 20, DAY_START_HOUR, 0, 0, tzinfo=UTC)

#: The environment variable that pins the day (or instant) of every sandbox started without
#: ``now=`` (``connect()``'s, ``python -m toolkit.sandbox``'s and ``Sandbox()``'s).
NOW_ENV = "TOOLKIT_SANDBOX_NOW"

_NOW_RULE = ("must be a date, a datetime or an ISO 8601 string such as '2026-11-20' or "
             "'2026-11-20T09:00:00Z'")


def world_epoch(now: date | datetime | str | None = None) -> datetime:
    """Give the instant a sandbox's clock starts from, which its whole world is built back from.

    Parameters
    ----------
    now : date, datetime or ISO 8601 string, optional
        A day (its :data:`DAY_START_HOUR` o'clock UTC) or an instant (naive means UTC). Default:
        :data:`NOW_ENV` when set, else today's date by the machine's clock: the world follows
        the real date, and the same day always gives the same world.

    Raises
    ------
    ValueError
        For anything else (the message names the setting and the value).
    """
    import os

    source = "now"
    if now is None and os.environ.get(NOW_ENV, "").strip():
        now, source = os.environ[NOW_ENV].strip(), NOW_ENV
    if now is None:
        now = datetime.now(UTC).date()
    if isinstance(now, str):
        text = now.strip()
        try:
            now = (date.fromisoformat(text) if len(text) == 10
                   else datetime.fromisoformat(text.replace("Z", "+00:00")))
        except ValueError:
            raise ValueError(f"{source}={text!r}: {_NOW_RULE}") from None
    if isinstance(now, datetime):
        return now.replace(tzinfo=UTC) if now.tzinfo is None else now.astimezone(UTC)
    if isinstance(now, date):
        return datetime(now.year, now.month, now.day, DAY_START_HOUR, tzinfo=UTC)
    raise ValueError(f"{source}={now!r}: {_NOW_RULE}")

#: section name -> "module:function"; the function takes the World and returns the section. A
#: module that holds a section may define ``catalog_rows(section) -> list[dict]``.
SECTIONS: dict[str, str] = {
    "network": "toolkit.sandbox.arm.network:build_world",
    "sql": "toolkit.sandbox.arm.sql:build_world",
    "policy": "toolkit.sandbox.arm.policy.world:build_world",
    "support": "toolkit.sandbox.arm.support:build_world",
    "clusters": "toolkit.sandbox.arm.clusters:build_world",
    "identity": "toolkit.sandbox.graph.identity:build_world",
    "fabric": "toolkit.sandbox.fabric.eventstream:build_world",
    "maps": "toolkit.sandbox.maps.search:build_world",
    "weather": "toolkit.sandbox.maps.weather.world:build_world",
}

#: Extra store subscriptions (under the ``stores`` management group) for tenant-scale runs.
SUBSCRIPTIONS_ENV = "TOOLKIT_SANDBOX_SUBSCRIPTIONS"
MAX_EXTRA_SUBSCRIPTIONS = 200

_LOCATIONS = ("westeurope", "northeurope", "francecentral", "swedencentral", "uksouth")


@dataclass
class ResourceGroup:
    """A resource group of a subscription."""

    subscription_id: str
    name: str
    location: str
    purpose: str


@dataclass
class Subscription:
    """A subscription of the tenant."""

    id: str
    name: str
    resource_groups: list[ResourceGroup] = field(default_factory=list)

    def group(self, name: str) -> ResourceGroup | None:
        """Find the resource group of this name (names are case-insensitive)."""
        low = name.lower()
        return next((g for g in self.resource_groups if g.name.lower() == low), None)


@dataclass
class ManagementGroup:
    """A management group: ``name`` is its id segment (the root group's is the tenant id)."""

    name: str
    display_name: str
    parent: str | None
    subscriptions: list[str] = field(default_factory=list)  # subscription names directly below


# (management group, display name, parent); "root" is the tenant root group
_GROUPS = (
    ("root", "Tenant Root Group", None),
    ("retail", "Retail", "root"),
    ("stores", "Retail stores", "retail"),
    ("platform", "Platform", "root"),
)
_SUB_GROUP = {"retail-prod": "retail", "retail-dev": "retail", "shared-platform": "platform"}
_STORE_GROUPS = (("rg-store-web", "westeurope", "web"), ("rg-store-data", "northeurope", "data"))

# (subscription name, [(resource group, location, purpose)])
_TENANT = (
    ("retail-prod", [
        ("rg-web-weu", "westeurope", "web"),
        ("rg-api-weu", "westeurope", "web"),
        ("rg-data-weu", "westeurope", "data"),
        ("rg-shop-neu", "northeurope", "web"),
        ("rg-analytics-neu", "northeurope", "data"),
        ("rg-identity", "westeurope", "platform"),
    ]),
    ("retail-dev", [
        ("rg-web-dev", "francecentral", "web"),
        ("rg-data-dev", "francecentral", "data"),
        ("rg-sandbox-dev", "swedencentral", "platform"),
    ]),
    ("shared-platform", [
        ("rg-network-hub", "westeurope", "web"),
        ("rg-monitoring", "uksouth", "platform"),
        ("rg-security", "westeurope", "data"),
    ]),
)


class World:
    """Everything the sandbox serves, deterministic from ``seed``.

    Parameters
    ----------
    seed : int
        The seed; the same seed always gives the same world.
    epoch : datetime, optional
        The world's "now" (when histories end); default :func:`world_epoch` (today).
    namespace : str
        Provider namespace word used in resource ids.
    cloud : Cloud, optional
        The sandbox's cloud (:mod:`toolkit._spec.clouds`): its brand words (``words``, with
        ``namespace``) and DNS suffixes; the neutral one by default.
    """

    def __init__(self, seed: int = 7, *, epoch: datetime | None = None,
                 namespace: str = "Vendor", cloud: Cloud | None = None) -> None:
        self.seed = seed
        self.epoch = epoch or world_epoch()
        self.namespace = namespace
        self.cloud = cloud or NEUTRAL
        self.words = replace(self.cloud.words, namespace=namespace)
        rng = self.rng("tenant")
        self.tenant_id = str(uuid.UUID(int=rng.getrandbits(128), version=4))
        self.subscriptions: list[Subscription] = []
        for sub_name, groups in _TENANT:
            sub = Subscription(str(uuid.UUID(int=rng.getrandbits(128), version=4)), sub_name)
            for rg, loc, purpose in groups:
                sub.resource_groups.append(ResourceGroup(sub.id, rg, loc, purpose))
            self.subscriptions.append(sub)
        for i in range(_extra_subscriptions()):
            sub = Subscription(str(uuid.UUID(int=rng.getrandbits(128), version=4)),
                               f"retail-store-{i + 1:03d}")
            for rg, loc, purpose in _STORE_GROUPS:
                sub.resource_groups.append(ResourceGroup(sub.id, rg, loc, purpose))
            self.subscriptions.append(sub)
        self.management_groups: list[ManagementGroup] = []
        for name, display, parent in _GROUPS:
            mg_name = self.tenant_id if name == "root" else name
            mg_parent = None if parent is None else (self.tenant_id if parent == "root"
                                                     else parent)
            self.management_groups.append(ManagementGroup(mg_name, display, mg_parent))
        for sub in self.subscriptions:
            self.management_group(self.group_of(sub.name)).subscriptions.append(sub.name)
        self._sections: dict[str, Any] = {}
        self._lock = threading.RLock()

    def rng(self, name: str) -> random.Random:
        """Make a generator for one part of the world, independent of the others."""
        return random.Random(f"{self.seed}:{name}")

    def subscription(self, subscription_id: str) -> Subscription | None:
        """Find the subscription with this id (case-insensitive)."""
        low = subscription_id.lower()
        return next((s for s in self.subscriptions if s.id.lower() == low), None)

    def group_of(self, subscription_name: str) -> str:
        """Give the management group a subscription sits directly below."""
        return _SUB_GROUP.get(subscription_name, "stores")

    def management_group(self, name: str) -> ManagementGroup:
        """Find the management group of this name (``root`` or the tenant id: the root group)."""
        low = self.tenant_id if name == "root" else name.lower()
        for mg in self.management_groups:
            if mg.name.lower() == low:
                return mg
        raise KeyError(name)

    def ancestors(self, subscription_name: str) -> list[str]:
        """List the management groups above a subscription, nearest first, root last."""
        out: list[str] = []
        name: str | None = self.group_of(subscription_name)
        while name is not None:
            mg = self.management_group(name)
            out.append(mg.name)
            name = mg.parent
        return out

    def resource_groups(self) -> list[ResourceGroup]:
        """Every resource group of every subscription."""
        return [g for s in self.subscriptions for g in s.resource_groups]

    @staticmethod
    def locations() -> tuple[str, ...]:
        """List the regions the world uses."""
        return _LOCATIONS

    def section(self, name: str) -> Any:
        """Return a section of the world, built on first use."""
        with self._lock:
            if name not in self._sections:
                builder = _resolve(SECTIONS[name])
                self._sections[name] = builder(self)
            return self._sections[name]

    def catalog(self) -> pd.DataFrame:
        """One row per thing the world holds.

        Returns
        -------
        pandas.DataFrame
            Columns ``kind``, ``subscription_id``, ``resource_group``, ``name``, ``location``,
            ``detail`` (what else identifies it or what it holds), all strings; subscriptions and
            resource groups first, then each section's things.
        """
        import pandas as pd

        rows: list[dict[str, Any]] = []
        for sub in self.subscriptions:
            rows.append({"kind": "subscription", "subscription_id": sub.id,
                         "resource_group": None, "name": sub.name, "location": None,
                         "detail": f"{len(sub.resource_groups)} resource groups"})
        for g in self.resource_groups():
            rows.append({"kind": "resource_group", "subscription_id": g.subscription_id,
                         "resource_group": g.name, "name": g.name, "location": g.location,
                         "detail": g.purpose})
        for name, target in SECTIONS.items():
            module = importlib.import_module(target.split(":")[0])
            rows_of: Callable[[Any], list[dict[str, Any]]] | None = getattr(
                module, "catalog_rows", None)
            if rows_of is not None:
                rows.extend(rows_of(self.section(name)))
        cols = ["kind", "subscription_id", "resource_group", "name", "location", "detail"]
        df = pd.DataFrame([{c: r.get(c) for c in cols} for r in rows], columns=cols)
        return df.astype("string")


def _extra_subscriptions() -> int:
    import os

    raw = os.environ.get(SUBSCRIPTIONS_ENV, "").strip()
    if not raw:
        return 0
    if not raw.isdigit() or int(raw) > MAX_EXTRA_SUBSCRIPTIONS:
        raise ValueError(f"{SUBSCRIPTIONS_ENV} must be a whole number from 0 to "
                         f"{MAX_EXTRA_SUBSCRIPTIONS}, not {raw!r}")
    return int(raw)


def _resolve(target: str) -> Callable[[World], Any]:
    module, _, func = target.partition(":")
    return getattr(importlib.import_module(module), func)
