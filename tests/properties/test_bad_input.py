"""Property-based tests of bad input: every value outside a function's rules (spec §4 and §8,
the service semantics and the docstrings) is refused with a ValidationError naming the parameter,
before any request; and no value at all, however odd, escapes as anything but a toolkit error."""

from __future__ import annotations

import math
import re
import uuid
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import toolkit
from toolkit import Secret, ToolkitError, ValidationError

SETTINGS = settings(max_examples=40, deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.function_scoped_fixture,
                                           HealthCheck.too_slow, HealthCheck.filter_too_much])
FEW = settings(SETTINGS, max_examples=15)
ANY = settings(SETTINGS, max_examples=30)

SUB = "fa45cb68-4748-4b16-94b6-0ce33d13187c"
WORKSPACE = "7ac3669e-b62c-4ea0-9aaa-321c3edbfbdd"

# ------------------------------------------------------------------------------ strategies
#: Values of the wrong type for a string parameter.
NOT_TEXT = st.one_of(
    st.none(), st.booleans(), st.integers(), st.floats(allow_nan=True, allow_infinity=True),
    st.binary(max_size=4), st.dictionaries(st.text(max_size=3), st.integers(), max_size=2),
    st.lists(st.integers(), max_size=2), st.tuples(st.integers()),
)
#: The same, without None (for optional parameters, where None is the default).
NOT_TEXT_NOR_NONE = NOT_TEXT.filter(lambda v: v is not None)
#: Values of the wrong type for an integer parameter.
NOT_INT = st.one_of(
    st.booleans(), st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=3),
    st.lists(st.integers(), max_size=2), st.dictionaries(st.text(max_size=2), st.integers(),
                                                           max_size=1),
    st.decimals(allow_nan=True).map(lambda d: d),
)
#: Values of the wrong type for a flag.
NOT_BOOL = st.one_of(
    st.integers(), st.floats(allow_nan=True), st.text(max_size=5),
    st.sampled_from(["true", "false", "yes", "no", "0", "1", ""]), st.lists(st.booleans()),
)
NASTY = list("/?# %&*+=,;:<>\\\"'!@$^[]{}|~`\n\t\r\x00")


def _is_uuid(text: str) -> bool:
    return bool(re.fullmatch(r"[0-9a-fA-F]{8}(-[0-9a-fA-F]{4}){3}-[0-9a-fA-F]{12}", text))


def _with(chars: str | list[str], fill: str = "ab") -> st.SearchStrategy[str]:
    """A short string holding at least one of ``chars``."""
    return st.builds(lambda a, c, b: a + c + b, st.text(fill, max_size=4),
                     st.sampled_from(list(chars)), st.text(fill, max_size=4))


BAD_UUID = st.one_of(
    NOT_TEXT.filter(lambda v: not isinstance(v, uuid.UUID)),
    st.text(max_size=40).filter(lambda s: not _is_uuid(s)),
    st.uuids().map(str).map(lambda s: s.replace("-", "")),             # no hyphens
    st.uuids().map(lambda u: "{" + str(u) + "}"),                        # braces
    st.uuids().map(lambda u: f"urn:uuid:{u}"),                           # URN form
    st.uuids().map(str).map(lambda s: s[:8] + s[9:13] + "-" + s[8] + s[13:]),  # hyphen moved
    st.uuids().map(str).map(lambda s: s + "\n"),
    st.uuids().map(str).map(lambda s: " " + s),
)
BAD_RESOURCE_GROUP = st.one_of(
    NOT_TEXT, st.just(""), st.text("abc-_", min_size=91, max_size=120),
    st.text("abc", min_size=1, max_size=8).map(lambda s: s + "."),
    _with([c for c in NASTY if c not in "()"]),
    st.text("abc", min_size=1, max_size=8).map(lambda s: s + "\n"),
)
BAD_SERVER = st.one_of(
    NOT_TEXT, st.just(""), st.text("abc", min_size=64, max_size=80),
    _with("ABCZ_."), st.text("ab", min_size=1, max_size=5).map(lambda s: "-" + s),
    st.text("ab", min_size=1, max_size=5).map(lambda s: s + "-"), _with(NASTY),
    st.text("ab", min_size=1, max_size=5).map(lambda s: s + "\n"),
)
BAD_GATEWAY = st.one_of(
    NOT_TEXT, st.just(""), st.text("abc", min_size=81, max_size=100),
    st.text("ab", min_size=1, max_size=5).map(lambda s: "_" + s),
    st.text("ab", min_size=1, max_size=5).map(lambda s: s + "."),
    st.text("ab", min_size=1, max_size=5).map(lambda s: s + "-"), _with(NASTY),
    st.text("ab", min_size=1, max_size=5).map(lambda s: s + "\n"),
)
BAD_CLUSTER = st.one_of(
    NOT_TEXT, st.just(""), st.text("abc", min_size=64, max_size=80),
    st.text("ab", min_size=1, max_size=5).map(lambda s: "-" + s),
    st.text("ab", min_size=1, max_size=5).map(lambda s: s + "_"),
    _with([c for c in NASTY if c not in "-_"]),
    st.text("ab", min_size=1, max_size=5).map(lambda s: s + "\n"),
)
BAD_PATH_NAME = st.one_of(   # free-form names that go into a URL path segment
    NOT_TEXT, st.just(""), st.text("ab", min_size=201, max_size=220), _with("/?# \t\n"),
    st.text("ab", min_size=1, max_size=5).map(lambda s: s + "\n"),
)
BAD_API_VERSION = st.one_of(NOT_TEXT, st.sampled_from(["", " ", "\t"]))
BAD_LANGUAGE_TAG = st.one_of(NOT_TEXT_NOR_NONE, st.sampled_from(["", " ", "e", "english!",
                                                                 "en_US", "en-", "fr-FR\n",
                                                                 "de/DE", "12"]))
BAD_BLANK = st.one_of(NOT_TEXT_NOR_NONE, st.sampled_from(["", " ", "\t\n"]))


def _ints_outside(lo: int | None, hi: int | None) -> st.SearchStrategy[int]:
    parts = []
    if lo is not None:
        parts.append(st.integers(max_value=lo - 1))
    if hi is not None:
        parts.append(st.integers(min_value=hi + 1))
    return st.one_of(*parts)


def BAD_INT(lo: int | None, hi: int | None = None, *,
            optional: bool = True) -> st.SearchStrategy[Any]:
    base = st.one_of(_ints_outside(lo, hi), NOT_INT)
    return base if optional else st.one_of(base, st.none())


BAD_TIMEOUT = st.one_of(st.floats(max_value=-1e-9), st.integers(max_value=-1), st.just(math.nan),
                        st.booleans(), st.text(max_size=3), st.lists(st.integers(), max_size=1))

FINITE_LON = st.floats(-180, 180)
FINITE_LAT = st.floats(-90, 90)
OUT_LON = st.one_of(st.floats(min_value=180.0001, max_value=1e6),
                    st.floats(max_value=-180.0001, min_value=-1e6))
OUT_LAT = st.one_of(st.floats(min_value=90.0001, max_value=1e6),
                    st.floats(max_value=-90.0001, min_value=-1e6))
NOT_FINITE = st.sampled_from([math.nan, math.inf, -math.inf])


def bad_point(order: str = "lonlat") -> st.SearchStrategy[Any]:
    """One point that breaks the coordinate rules (given in ``order``)."""
    lonlat = st.one_of(st.tuples(OUT_LON, FINITE_LAT), st.tuples(FINITE_LON, OUT_LAT),
                       st.tuples(NOT_FINITE, FINITE_LAT), st.tuples(FINITE_LON, NOT_FINITE))
    pairs = lonlat.map(lambda p: p[::-1]) if order == "latlon" else lonlat
    return st.one_of(
        pairs, pairs.map(list),
        st.sampled_from(["1.5,42.5", b"12", {"lon": 1.5, "lat": 42.5}, (1.5,), (1, 2, 3, 4),
                         ("a", "b"), (None, None), (True, False), [[1.5], [42.5, 1.0]]]),
    )


def bad_locations() -> st.SearchStrategy[Any]:
    """Weather places, ``(lon, lat)``, that break the rules (a string is a place name, and a
    pair of strings two of them: not among them)."""
    return st.one_of(
        st.none(), st.just([]), st.just(()), st.just(pd.DataFrame({"lat": [], "lon": []})),
        bad_point().filter(lambda p: not isinstance(p, str) and not (
            isinstance(p, tuple | list) and p and all(isinstance(v, str) for v in p))),
        st.lists(bad_point().filter(
            lambda p: isinstance(p, tuple | list) and len(p) == 2 and
            all(isinstance(v, float) for v in p)), min_size=1, max_size=3).map(
            lambda bad: [(1.5, 42.5), *bad]),
        st.sampled_from(["", " "]).map(lambda blank: ["Ordino", blank]),
        st.just(pd.DataFrame({"lat": [42.5, 95.0], "lon": [1.5, 1.5]})),
        st.just(pd.DataFrame({"a": [1.0], "b": [2.0]})),
    )


@st.composite
def bad_bbox(draw: Any, *, min_deg: float | None = None, max_deg: float | None = None,
             min_m: float | None = None, max_m: float | None = None,
             optional: bool = False) -> Any:
    """A bounding box out of range, in the wrong order, of the wrong size or shape."""
    kind = draw(st.sampled_from(["range", "order", "nan", "shape", "small", "large"]))
    w = draw(st.floats(-170, 160))
    s = draw(st.floats(-80, 70))
    if kind == "range":
        return draw(st.sampled_from([(w, s, 181.0, s + 1), (w, -91.0, w + 1, s),
                                     (-200.0, s, w, s + 1), (w, s, w + 1, 95.0)]))
    if kind == "order":
        return (w + 1, s, w, s + 1) if draw(st.booleans()) else (w, s + 1, w + 1, s)
    if kind == "nan":
        return (w, s, draw(NOT_FINITE), s + 1)
    if kind == "shape":
        shapes = [(w, s, w + 1), (w, s, w + 1, s + 1, 0.0), "1,2,3,4", [], {"w": w},
                  ("a", "b", "c", "d"), 12]
        return draw(st.sampled_from(shapes if optional else [*shapes, None]))
    if kind == "small":
        if min_deg is not None:
            d = draw(st.floats(0, min_deg * 0.99))
            return (w, s, w + d, s + 1) if draw(st.booleans()) else (w, s, w + 1, s + d)
        d = draw(st.floats(0, (min_m or 12) * 0.9 / 111_320 / 2))  # half the minimum, metres
        return (w, s, w + d, s + 0.01) if draw(st.booleans()) else (w, s, w + 0.01, s + d)
    # large
    if max_deg is not None:
        d = draw(st.floats(max_deg + 0.01, 60))
        return (w, max(s, -50.0), min(w + d, 180.0), max(s, -50.0) + 1) if draw(st.booleans()) \
            else (w, -40.0, w + 0.1, -40.0 + d)
    if min_deg is not None:   # the globe is the most: nothing beyond it but out-of-range
        return (-180.0, -90.0, 180.0001, 90.0)
    return (w, s, w + 0.1, s + 0.1)  # pragma: no cover - every caller gives a limit


# ------------------------------------------------------------------------------ the functions
#: A valid call of every function (keywords; required ids from the sandbox world).
VALID: dict[str, dict[str, Any]] = {
    "backend_health": {"subscription_id": SUB, "resource_group": "rg-web-weu",
                       "gateway": "agw-web-prod-weu"},
    "check_server_names": {"subscription_id": SUB, "names": ["fuzz-free-name"]},
    "sql_operations": {},
    "update_encryption_protector": {"subscription_id": SUB, "resource_group": "rg-data-weu",
                                    "server": "sql-retail-prod-weu-02",
                                    "server_key_type": "VendorKeyVault",
                                    "server_key_name": "kv-retail-prod-weu_tde-primary"},
    "encryption_protector": {"subscription_id": SUB, "resource_group": "rg-data-weu",
                             "server": "sql-retail-prod-weu-02"},
    "policy_states": {"subscription_id": SUB, "resource_group": "rg-web-weu"},
    "policy_summary": {"subscription_id": SUB, "resource_group": "rg-web-weu"},
    "management_groups": {},
    "management_group_tree": {"group_id": "retail"},
    "resource_graph": {"query": "resources | project id, name | take 3"},
    "resource_graph_policy_states": {"subscription_id": SUB, "resource_group": "rg-web-weu"},
    "subscriptions": {},
    "resource_groups": {"subscription_id": SUB},
    "sql_servers": {"subscription_id": SUB},
    "application_gateways": {"subscription_id": SUB},
    "managed_clusters": {"subscription_id": SUB},
    "openshift_clusters": {"subscription_id": SUB},
    "fabric_workspaces": {},
    "support_services": {},
    "problem_classifications": {"service_name": "virtual-machines"},
    "cluster_monitoring_credentials": {"subscription_id": SUB, "resource_group": "rg-web-weu",
                                       "cluster": "aks-web-prod-weu"},
    "hosted_cluster_credentials": {"subscription_id": SUB, "resource_group": "rg-web-weu",
                                   "cluster": "aro-payments-prod"},
    "autocomplete": {"query": "Ordi", "coordinates": (1.53, 42.55)},
    "route_directions": {"queries": [{"origin": (1.5218, 42.5075),
                                      "destination": (1.5331, 42.5560)}]},
    "snap_to_roads": {"points": [(1.5218, 42.5075), (1.5230, 42.5080)]},
    "traffic_incidents": {"bbox": (1.40, 42.42, 1.79, 42.66)},
    "route_matrix": {"origins": [(1.5218, 42.5075)], "destinations": [(1.5331, 42.5560)]},
    "route_range": {"origin": (1.5218, 42.5075), "time_budget": 600},
    "air_quality": {"locations": (1.5218, 42.5075)},
    "air_quality_forecast": {"locations": (1.5218, 42.5075)},
    "air_quality_hourly_forecast": {"locations": (1.5218, 42.5075)},
    "severe_weather_alerts": {"locations": (1.5218, 42.5075)},
    "geocode": {"query": "Ordino"},
    "reverse_geocode": {"points": [(1.5218, 42.5075), (1.5331, 42.5560)]},
    "authentication_strength_usage": {"policy_id": "00000000-0000-0000-0000-000000000002"},
    "authentication_strength_policies": {},
    "authentication_strength_audit": {"policy_ids": ["00000000-0000-0000-0000-000000000002"]},
    # an fsspec memory folder: nothing written on disk
    "snapshot_policy_states": {"store": "memory://bad-input-policy-history",
                               "scope": f"/subscriptions/{SUB}/resourceGroups/rg-web-weu",
                               "day": "2026-11-19"},
    "create_eventstream": {"workspace_id": WORKSPACE, "display_name": "fuzz-never-created"},
    "create_eventstreams": {"items": [{"workspace_id": WORKSPACE,
                                       "display_name": "fuzz-never-created"}]},
}


@dataclass(frozen=True)
class Rule:
    """Values of one parameter that break a rule, and the parameter the error must name."""

    function: str
    parameter: str
    values: st.SearchStrategy[Any]
    names: str | None = None     # the parameter the error names, when not ``parameter``
    extra: tuple[tuple[str, Any], ...] = ()   # other arguments that make the rule apply

    @property
    def id(self) -> str:
        return f"{self.function}-{self.parameter}" + (f"-{dict(self.extra)}" if self.extra
                                                       else "")


_ARM_IDS = ("backend_health", "update_encryption_protector", "encryption_protector",
            "policy_states", "cluster_monitoring_credentials", "hosted_cluster_credentials")
_WEATHER = ("air_quality", "air_quality_forecast", "air_quality_hourly_forecast",
            "severe_weather_alerts")
_INVENTORY = ("sql_servers", "application_gateways", "managed_clusters", "openshift_clusters")

RULES: list[Rule] = [
    *[Rule(f, "subscription_id", BAD_UUID) for f in (*_ARM_IDS, "check_server_names")],
    *[Rule(f, "resource_group", BAD_RESOURCE_GROUP) for f in _ARM_IDS
      if f != "policy_states"],
    # without a resource group, policy states are the subscription's
    Rule("policy_states", "resource_group", BAD_RESOURCE_GROUP.filter(lambda v: v is not None)),
    *[Rule(f, "api_version", BAD_API_VERSION) for f in (
        *_ARM_IDS, "check_server_names", "sql_operations", "support_services",
        "problem_classifications", "autocomplete", "route_directions",
        "snap_to_roads", "traffic_incidents", "route_matrix", "route_range", *_WEATHER)],
    Rule("geocode", "api_version", BAD_API_VERSION),
    Rule("reverse_geocode", "api_version", BAD_API_VERSION),
    *[Rule(f, "max_items", BAD_INT(0)) for f in ("sql_operations", "policy_states",
                                                  "support_services", "problem_classifications")],
    *[Rule(f, "timeout", BAD_TIMEOUT) for f in ("backend_health", "update_encryption_protector",
                                                "create_eventstream", "create_eventstreams",
                                                "route_matrix")],
    *[Rule(f, "wait", NOT_BOOL) for f in ("backend_health", "update_encryption_protector",
                                          "create_eventstream", "route_matrix")],
    # policy states
    Rule("policy_states", "resource", st.one_of(NOT_TEXT, st.text(max_size=8).filter(
        lambda s: s.lower() not in ("latest", "default")))),
    *[Rule("policy_states", p, BAD_BLANK) for p in ("filter", "apply")],
    *[Rule("policy_states", p, st.one_of(
        st.integers(), st.floats(), st.booleans(), st.binary(max_size=2), st.just([]),
        st.sampled_from(["", " "]), st.lists(st.one_of(st.integers(), st.none(), st.just("")),
                                             min_size=1, max_size=2),
        st.dictionaries(st.text(max_size=2), st.text(max_size=2), max_size=1)))
      for p in ("select", "orderby")],
    Rule("policy_states", "select", st.sampled_from(
        ["0", "a b", "resourceId, 0abc", "properties/x", "resourceId,,timestamp", "*"])),
    Rule("policy_states", "top", BAD_INT(0)),
    *[Rule("policy_states", p, st.one_of(
        st.integers(), st.floats(), st.booleans(), st.lists(st.integers(), max_size=1),
        st.dictionaries(st.text(max_size=2), st.integers(), max_size=1),
        st.sampled_from(["", "yesterday", "2026-13-45", "not a date", "NaT"]),
        st.just(pd.NaT))) for p in ("start", "end")],
    Rule("policy_states", "start", st.datetimes(min_value=pd.Timestamp("2026-01-01")
                                                .to_pydatetime()).map(str),
         extra=(("end", "2026-01-01T00:00:00Z"),)),
    *[Rule(f, "scope", st.one_of(
        NOT_TEXT_NOR_NONE, st.sampled_from([
            "", "/", "/subscriptions/x", "/providers/Vendor.Management/managementGroups/",
            f"/subscriptions/{SUB}/resourceGroups/bad name", f"/subscriptions/{SUB}/foo",
            f"/subscriptions/{SUB}/providers/Vendor.Authorization/policyAssignments",
            "subscriptions/" + SUB, "https://management.vendor.com/subscriptions/" + SUB])),
        extra=(("subscription_id", None), ("resource_group", None)))
      for f in ("policy_states", "policy_summary")],
    Rule("policy_states", "engine", st.one_of(NOT_TEXT_NOR_NONE,
                                              st.sampled_from(["", "spark", "Dask", "ray"]))),
    Rule("policy_summary", "top", BAD_INT(0)),
    Rule("policy_summary", "filter", BAD_BLANK),
    Rule("resource_groups", "subscription_id", BAD_UUID),
    Rule("management_group_tree", "group_id", st.one_of(
        NOT_TEXT_NOR_NONE, st.just(""), st.text("abc-_", min_size=91, max_size=120),
        st.text("abc", min_size=1, max_size=8).map(lambda s: s + "."),
        _with([c for c in NASTY if c not in "()._-"]),
        st.text("abc", min_size=1, max_size=8).map(lambda s: s + "\n"))),
    Rule("management_group_tree", "api_version", BAD_API_VERSION),
    *[Rule(f, "max_items", BAD_INT(0)) for f in ("management_groups", "subscriptions",
                                                  "resource_groups")],
    # resource graph
    Rule("resource_graph", "query", st.one_of(
        NOT_TEXT, st.sampled_from(["", " ", "\t\n", "resources\x00"]))),
    Rule("resource_graph", "subscriptions", st.one_of(
        NOT_TEXT_NOR_NONE.filter(lambda v: not isinstance(v, str)),
        st.just([]), st.text(max_size=40).filter(
            lambda s: not _is_uuid(s) and s.lower() != "all"),
        st.lists(st.text(max_size=8), min_size=1, max_size=2))),
    Rule("resource_graph", "management_groups", st.one_of(
        NOT_TEXT_NOR_NONE, st.just([]), st.just(""), st.text("abc-_", min_size=91, max_size=95),
        st.text("abc", min_size=1, max_size=8).map(lambda s: s + "."),
        _with([c for c in NASTY if c not in "()._-"]),
        st.lists(st.just("bad name"), min_size=1, max_size=2))),
    Rule("resource_graph", "management_groups", st.just("retail"),
         extra=(("subscriptions", SUB),)),
    Rule("resource_graph", "page_size", BAD_INT(1, 1000, optional=False)),
    Rule("resource_graph", "max_items", BAD_INT(0)),
    Rule("resource_graph", "incomplete", st.one_of(
        NOT_TEXT, st.sampled_from(["", "Raise", "ignore", "warn "]))),
    Rule("resource_graph", "expand", st.one_of(
        st.integers(), st.floats(), st.just([]), st.sampled_from(["", " ", ["properties", ""]]),
        st.lists(st.integers(), min_size=1, max_size=2))),
    Rule("resource_graph", "api_version", BAD_API_VERSION),
    Rule("resource_graph_policy_states", "subscription_id", BAD_UUID),
    Rule("resource_graph_policy_states", "reconcile", NOT_BOOL),
    Rule("resource_graph_policy_states", "max_items", BAD_INT(0)),
    Rule("resource_graph_policy_states", "scope", st.sampled_from([
        f"/subscriptions/{SUB}/providers/Vendor.Authorization/policyAssignments/a",
        f"/subscriptions/{SUB}/resourceGroups/rg/providers/Vendor.Compute/disks/d"]),
        extra=(("subscription_id", None), ("resource_group", None))),
    # the inventory lists (a resource group is optional: None lists the subscription's)
    *[Rule(f, "subscription_id", BAD_UUID) for f in _INVENTORY],
    *[Rule(f, "resource_group", BAD_RESOURCE_GROUP.filter(lambda v: v is not None))
      for f in _INVENTORY],
    *[Rule(f, "api_version", BAD_API_VERSION) for f in _INVENTORY],
    *[Rule(f, "max_items", BAD_INT(0)) for f in (*_INVENTORY, "fabric_workspaces")],
    # the workspaces list
    Rule("fabric_workspaces", "roles", st.one_of(
        NOT_TEXT_NOR_NONE.filter(lambda v: not (isinstance(v, list | tuple) and v and all(
            isinstance(r, str) for r in v))),
        st.sampled_from(["", "Owner", "admin", "Admin,Viewer", "Admin ", ["Admin", "Owner"],
                         ("Viewer", 3), []]))),
    Rule("fabric_workspaces", "api_version", st.one_of(
        NOT_TEXT, st.sampled_from(["", "v", "1", "V1", "v1/..", "../v1", "v1?x=1", "v 1"]))),
    Rule("policy_states", "expand", st.one_of(
        st.integers(), st.just([]), st.sampled_from(["everything", "components,nothing", "",
                                                     "details"]),
        st.lists(st.integers(), min_size=1, max_size=2))),
    # backend health
    Rule("backend_health", "gateway", BAD_GATEWAY),
    Rule("backend_health", "expand", BAD_BLANK),
    # name availability
    Rule("check_server_names", "names", st.one_of(
        st.none(), st.just([]), st.just(()), st.just(set()), st.integers(), st.floats(),
        st.booleans(), st.binary(max_size=3), st.dictionaries(st.text(max_size=2), st.text(
            max_size=2), max_size=2),
        st.lists(st.one_of(st.integers(), st.none(), st.floats(), st.binary(max_size=2)),
                 min_size=1, max_size=3),
        st.lists(st.text(max_size=3), max_size=2).map(lambda xs: [*xs, 7]))),
    Rule("check_server_names", "send_invalid", NOT_BOOL),
    # encryption protector
    *[Rule(f, "server", BAD_SERVER) for f in ("update_encryption_protector",
                                               "encryption_protector")],
    Rule("update_encryption_protector", "server_key_type", st.one_of(
        NOT_TEXT, st.text(max_size=20).filter(
            lambda s: s.lower() not in ("servicemanaged", "vendorkeyvault", "azurekeyvault")),
        st.sampled_from(["Service Managed", "AzureKeyVault ", "VendorKeyVault ", "KeyVault"]))),
    Rule("update_encryption_protector", "server_key_name", st.one_of(
        NOT_TEXT_NOR_NONE, st.just(""), st.text("abc", min_size=1, max_size=20),
        st.sampled_from(["kv_key_version", "k_key", "1kv-name_key",
                         "kv-retail-prod-weu_tde-primary_123",
                         "kv-retail-prod-weu_tde-primary_" + "g" * 32,
                         "kv-retail-prod-weu_tde-primary\n", "kv-retail-prod-weu_tde/primary",
                         "a" * 30 + "_key", "kv-retail-prod-weu_" + "k" * 128]))),
    Rule("update_encryption_protector", "server_key_name",
         st.one_of(NOT_TEXT_NOR_NONE, st.text(max_size=20).filter(
             lambda s: s != "ServiceManaged")),
         extra=(("server_key_type", "ServiceManaged"),)),
    Rule("update_encryption_protector", "auto_rotation_enabled", NOT_BOOL),
    # support
    Rule("problem_classifications", "service_name", BAD_PATH_NAME),
    *[Rule(f, "language", BAD_LANGUAGE_TAG) for f in ("support_services",
                                                      "problem_classifications")],
    # cluster credentials
    Rule("cluster_monitoring_credentials", "cluster", BAD_CLUSTER),
    Rule("cluster_monitoring_credentials", "server_fqdn", st.one_of(
        NOT_TEXT_NOR_NONE, st.sampled_from(["", "1public", "public fqdn", "public\n",
                                            "a" * 33, "private/x", "-x"]))),
    Rule("hosted_cluster_credentials", "cluster", BAD_PATH_NAME),
    # autocomplete
    Rule("autocomplete", "query", st.one_of(
        st.none(), st.just([]), st.integers(), st.floats(), st.dictionaries(
            st.text(max_size=2), st.text(max_size=2), min_size=1, max_size=2),
        st.sampled_from(["", " ", "\t\n"]), st.lists(st.integers(), min_size=1, max_size=2),
        st.just(["Ordi", ""]))),
    Rule("autocomplete", "coordinates", bad_point("lonlat")),
    Rule("autocomplete", "coordinates", st.none(), extra=(("coordinates", None),)),
    Rule("autocomplete", "bbox", bad_bbox(min_deg=0.00001, optional=True)),
    Rule("autocomplete", "country_region", st.one_of(
        NOT_TEXT_NOR_NONE, st.text(max_size=5).filter(
            lambda s: not re.fullmatch("[A-Za-z]{2}", s)),
        st.sampled_from(["FR\n", "F1", "FRA", "Auto"]))),
    Rule("autocomplete", "view", st.one_of(
        NOT_TEXT_NOR_NONE, st.sampled_from(["", "FRA", "F", "ADx", "AD\n", "Automatic"]))),
    Rule("autocomplete", "result_type_groups", st.one_of(
        st.integers(), st.just([]), st.text(max_size=8).filter(
            lambda s: s.lower() not in ("address", "place")),
        st.lists(st.sampled_from(["Address", "Street", 3, None]), min_size=2, max_size=3).filter(
            lambda xs: any(x not in ("Address",) for x in xs)))),
    Rule("autocomplete", "result_types", st.one_of(
        st.integers(), st.just([]), st.sampled_from(["Town", "address ", "", "Populated Place"]),
        st.lists(st.sampled_from(["Address", "Nowhere", 1.5]), min_size=2, max_size=3).filter(
            lambda xs: any(x != "Address" for x in xs)))),
    Rule("autocomplete", "top", BAD_INT(1, 20, optional=False)),
    Rule("autocomplete", "language", BAD_BLANK),
    # geocode
    Rule("geocode", "query", st.one_of(
        st.none(), st.just([]), st.integers(), st.floats(), st.sampled_from(["", " ", "\t\n"]),
        st.lists(st.integers(), min_size=1, max_size=2), st.just(["Ordino", ""]))),
    Rule("geocode", "coordinates", bad_point("lonlat")),
    Rule("geocode", "bbox", bad_bbox(min_deg=0.00001, optional=True)),
    Rule("geocode", "country_region", st.one_of(
        NOT_TEXT_NOR_NONE, st.sampled_from(["FR\n", "F1", "FRA", "Auto"]))),
    Rule("geocode", "view", st.one_of(
        NOT_TEXT_NOR_NONE, st.sampled_from(["", "FRA", "F", "ADx", "AD\n", "Automatic"]))),
    Rule("geocode", "top", BAD_INT(1, 20, optional=False)),
    Rule("geocode", "language", BAD_BLANK),
    # route directions
    Rule("route_directions", "queries", st.one_of(
        st.none(), st.just([]), st.just({}), st.text(max_size=4), st.integers(),
        st.just(pd.DataFrame({"a": [1]})),
        st.just(pd.DataFrame({"origin": [], "destination": []})),
        st.lists(st.one_of(st.integers(), st.text(max_size=2), st.none()), min_size=1,
                 max_size=2),
        st.sampled_from([
            [{"origin": (1.52, 42.5)}], [{"destination": (1.52, 42.5)}], [{}],
            [{"features": []}], [{"features": "x"}],
            [{"features": [{"type": "Feature", "geometry": {"type": "Point",
                                                            "coordinates": [1.5, 42.5]}}]}],
            [{"type": "Polygon", "features": []}],
            [{"origin": (1.52, 42.5), "destination": (1.53, 42.55), "departAt": "now",
              "arriveAt": "later"}],
            [{"origin": (1.52, 42.5), "destination": (1.53, 42.55), "maxRouteCount": 9}],
            [{"origin": (1.52, 42.5), "destination": (1.53, 42.55), "travelMode": "bike"}],
            [{"origin": (1.52, 42.5), "destination": (1.53, 42.55), "avoid": ["mud"]}],
            [{"origin": (1.52, 42.5), "destination": (1.53, 42.55),
              "waypoints": [(1.5, 142.5)]}],
            [{"origin": (1.52, 42.5), "destination": (1.53, 42.55), "departAt": 12}],
            [{"origin": (1.52, 42.5), "destination": (1.53, 42.55),
              "optimizeRoute": "scenic"}],
            [{"origin": (1.52, 42.5), "destination": (1.53, 42.55),
              "routeOutputOptions": ["everything"]}],
            [{"features": [{"type": "Feature", "geometry": {"type": "Point",
                                                            "coordinates": [1.5, 42.5 + i]}}
                           for i in range(2)] + [{"type": "Feature", "properties": {
                               "pointType": "stop"}, "geometry": {
                                   "type": "Point", "coordinates": [1.5, 42.6]}}]}],
        ]),
        st.lists(bad_point("lonlat").filter(lambda p: not isinstance(p, str)), min_size=1,
                 max_size=1).map(lambda p: [{"origin": p[0], "destination": (1.53, 42.55)}]))),
    Rule("route_directions", "optimize_route", st.one_of(NOT_TEXT, st.text(max_size=8))),
    Rule("route_directions", "travel_mode", st.one_of(
        NOT_TEXT, st.sampled_from(["walking", "Driving", "", "truck "]))),
    Rule("route_directions", "max_route_count", BAD_INT(1, 6, optional=False)),
    Rule("route_directions", "avoid", st.one_of(
        st.integers(), st.text(max_size=6), st.lists(st.sampled_from(["tollRoads", "mud", 3]),
                                                     min_size=2, max_size=3).filter(
            lambda xs: any(x != "tollRoads" for x in xs)))),
    Rule("route_directions", "route_output_options", st.one_of(
        st.none(), st.integers(), st.just([]), st.just(()),
        st.sampled_from(["everything", "routepath", ["routePath", "map"]]))),
    Rule("route_directions", "depart_at", st.one_of(
        st.integers(), st.floats(), st.booleans(), st.lists(st.integers(), max_size=1),
        st.sampled_from(["now", "tomorrow at noon", "2026-13-45T99:00:00", ""]))),
    Rule("route_directions", "language", BAD_BLANK),
    # snap to roads
    Rule("snap_to_roads", "points", st.one_of(
        st.none(), st.just([]), st.just([(1.5218, 42.5075)]), st.text(max_size=5),
        st.integers(), st.just({"lon": [1.5], "lat": [42.5]}),
        st.lists(bad_point("lonlat").filter(lambda p: isinstance(p, tuple) and len(p) == 2 and
                                            all(isinstance(v, float) for v in p)),
                 min_size=1, max_size=2).map(lambda bad: [(1.5218, 42.5075), *bad]),
        st.floats(0.06, 1.0).map(lambda d: [(1.5218, 42.5075), (1.5218, 42.5075 + d)]),
        st.floats(0.075, 1.0).map(lambda d: [(1.50, 42.5), (1.50, 42.52), (1.50 + d, 42.52)]),
    )),
    Rule("snap_to_roads", "include_speed_limit", NOT_BOOL),
    Rule("snap_to_roads", "interpolate", NOT_BOOL),
    Rule("snap_to_roads", "travel_mode", st.one_of(NOT_TEXT, st.sampled_from(
        ["walking", "Driving", "", "truck "]))),
    # traffic
    Rule("traffic_incidents", "bbox", bad_bbox(min_m=12, max_m=500_000, max_deg=30)),
    Rule("traffic_incidents", "incident_types", st.one_of(
        st.integers(), st.just([]), st.sampled_from(["Crash", "accident ", "", "Jam"]),
        st.lists(st.sampled_from(["Accident", "Crash", 4, None]), min_size=2, max_size=3)
        .filter(lambda xs: any(x != "Accident" for x in xs)))),
    # route matrix: both sides, the service's limits of size (with options, at most 1,000 a
    # side), the options and the times
    *[Rule("route_matrix", side, bad_locations()) for side in ("origins", "destinations")],
    Rule("route_matrix", "origins", st.integers(1001, 1100).map(lambda n: [(1.52, 42.5)] * n),
         extra=(("avoid", "tollRoads"),)),
    Rule("route_matrix", "destinations", st.integers(10_001, 10_050).map(
        lambda n: np.tile([1.52, 42.5], (n, 1)))),
    Rule("route_matrix", "travel_mode", st.one_of(
        NOT_TEXT, st.sampled_from(["bike", "Driving", "", "walking "]))),
    Rule("route_matrix", "optimize_route", st.one_of(
        NOT_TEXT, st.sampled_from(["fastestWithTraffic", "Fastest", ""]))),
    Rule("route_matrix", "traffic", st.one_of(
        NOT_TEXT, st.sampled_from(["now", "Live", "", "live"]))),
    *[Rule("route_matrix", p, st.one_of(
        st.integers(), st.floats(), st.booleans(), st.lists(st.integers(), max_size=1),
        st.sampled_from(["tomorrow at noon", "2026-13-45T99:00:00", "", "soon"])))
      for p in ("depart_at", "arrive_at")],
    Rule("route_matrix", "arrive_at", st.just("now")),
    Rule("route_matrix", "arrive_at", st.sampled_from(["2026-11-20T09:00:00Z", "any"]),
         extra=(("depart_at", "now"),)),
    Rule("route_matrix", "avoid", st.one_of(
        st.integers(), st.text(max_size=6), st.lists(st.sampled_from(["tollRoads", "mud", 3]),
                                                     min_size=2, max_size=3).filter(
            lambda xs: any(x != "tollRoads" for x in xs)))),
    Rule("route_matrix", "avoid", st.just("tollRoads"), extra=(("travel_mode", "walking"),)),
    # reachable range: one budget, in the service's range
    Rule("route_range", "origin", bad_locations()),
    Rule("route_range", "time_budget", st.one_of(
        st.none(), st.floats(max_value=0), st.floats(min_value=21_600.001, max_value=1e9),
        st.sampled_from([math.nan, math.inf, "600", True, [], [600, -1], [600, "x"],
                         pd.Timedelta(hours=7), pd.Timedelta(seconds=-5)]))),
    Rule("route_range", "distance_budget", st.one_of(
        st.floats(max_value=0), st.floats(min_value=500_000.001, max_value=1e9),
        st.sampled_from([math.nan, "5 km", False, [], [5000, 0], pd.Timedelta(minutes=5)])),
        extra=(("time_budget", None),)),
    Rule("route_range", "distance_budget", st.floats(1, 500_000)),  # with time_budget: both
    Rule("route_range", "travel_mode", st.one_of(
        NOT_TEXT, st.sampled_from(["walking", "Driving", "", "truck "]))),
    Rule("route_range", "optimize_route", st.one_of(
        NOT_TEXT, st.sampled_from(["fastest", "Shortest", ""]))),
    Rule("route_range", "avoid", st.one_of(
        st.integers(), st.text(max_size=6), st.lists(st.sampled_from(["carTrains", "mud", 3]),
                                                     min_size=2, max_size=3).filter(
            lambda xs: any(x != "carTrains" for x in xs)))),
    Rule("route_range", "depart_at", st.one_of(
        st.integers(), st.floats(), st.booleans(), st.lists(st.integers(), max_size=1),
        st.sampled_from(["tomorrow at noon", "2026-13-45T99:00:00", ""]))),
    # weather
    *[Rule(f, "locations", bad_locations()) for f in _WEATHER],
    *[Rule(f, "language", BAD_BLANK) for f in _WEATHER],
    Rule("air_quality", "pollutants", NOT_BOOL),
    Rule("severe_weather_alerts", "details", NOT_BOOL),
    Rule("air_quality_forecast", "duration", BAD_INT(1, 7, optional=False)),
    Rule("air_quality_hourly_forecast", "duration", st.one_of(
        BAD_INT(1, 96, optional=False), st.sampled_from([0, 2, 6, 13, 25, 36, 95]))),
    Rule("air_quality_hourly_forecast", "pollutants", NOT_BOOL),
    # reverse geocoding
    Rule("reverse_geocode", "points", st.one_of(
        st.none(), st.just([]), st.text(max_size=5), st.integers(),
        bad_point().filter(lambda p: not isinstance(p, str)),
        st.lists(bad_point("lonlat").filter(lambda p: isinstance(p, tuple) and len(p) == 2 and
                                            all(isinstance(v, float) for v in p)),
                 min_size=1, max_size=2).map(lambda bad: [(1.5218, 42.5075), *bad]))),
    Rule("reverse_geocode", "result_types", st.one_of(
        st.integers(), st.just([]), st.sampled_from(["Town", "address ", "", "Street"]),
        st.lists(st.sampled_from(["Address", "Town", 4, None]), min_size=2, max_size=3)
        .filter(lambda xs: any(x != "Address" for x in xs)))),
    Rule("reverse_geocode", "view", st.one_of(
        NOT_TEXT_NOR_NONE, st.sampled_from(["", "A", "AND", "1A", "Automatic"]))),
    Rule("reverse_geocode", "language", BAD_BLANK),
    # identity
    Rule("authentication_strength_usage", "policy_id", st.one_of(
        st.none(), st.just([]), st.integers(), st.dictionaries(st.text(max_size=2),
                                                               st.text(max_size=2), max_size=1),
        st.just(""), _with("/?# %\\\n\t:"), st.text("ab", min_size=129, max_size=140),
        st.sampled_from(["-lead", ".lead", "_lead", "id\n"]),
        st.lists(st.integers(), min_size=1, max_size=2))),
    *[Rule(f, "api_version", st.one_of(NOT_TEXT, st.sampled_from(["", "v2", "beta/", "1.0",
                                                                   "Beta"])))
      for f in ("authentication_strength_usage", "authentication_strength_policies",
                "authentication_strength_audit")],
    Rule("authentication_strength_policies", "max_items", BAD_INT(0)),
    Rule("authentication_strength_audit", "policy_ids", st.one_of(
        st.just([]), st.integers(), st.dictionaries(st.text(max_size=2), st.text(max_size=2),
                                                    min_size=1, max_size=1),
        st.just(""), _with("/?# %\\\n\t:"), st.lists(st.integers(), min_size=1, max_size=2),
        st.sampled_from([["-lead"], ["ok-id", ""], [None]]))),
    # the policy history store
    Rule("snapshot_policy_states", "store", st.one_of(NOT_TEXT, st.sampled_from(["", " "]))),
    Rule("snapshot_policy_states", "scope", st.one_of(NOT_TEXT, st.sampled_from([
        "", "/", "/subscriptions/x", f"/subscriptions/{SUB}/resourceGroups/bad name",
        f"/subscriptions/{SUB}/foo"]))),
    Rule("snapshot_policy_states", "day", st.one_of(
        st.integers(), st.floats(), st.booleans(), st.lists(st.integers(), max_size=1),
        st.sampled_from(["", "yesterday", "2026-13-45", "not a date", "NaT"]))),
    Rule("snapshot_policy_states", "engine", st.one_of(NOT_TEXT, st.sampled_from(
        ["", "spark", "Dask"]))),
    Rule("snapshot_policy_states", "filter", BAD_BLANK),
    # eventstream
    *[Rule(f, "workspace_id", BAD_UUID) for f in ("create_eventstream",)],
    Rule("create_eventstream", "display_name", st.one_of(
        NOT_TEXT, st.sampled_from(["", " ", "   "]), st.text("ab", min_size=257, max_size=300),
        st.text("ab", min_size=1, max_size=5).map(lambda s: " " + s),
        st.text("ab", min_size=1, max_size=5).map(lambda s: s + "."),
        _with('\\/:*?"<>|#%'), _with([chr(c) for c in (*range(32), 127)]))),
    Rule("create_eventstream", "description", st.one_of(
        NOT_TEXT_NOR_NONE, st.text("ab ", min_size=257, max_size=300))),
    Rule("create_eventstream", "folder_id", BAD_UUID.filter(lambda v: v is not None)),
    Rule("create_eventstream", "definition", st.one_of(
        st.just({}), st.integers(), st.text(max_size=3).filter(bool), st.lists(
            st.integers(), min_size=1, max_size=2),
        st.sampled_from([{"/abs.json": {}}, {"": "x"}, {3: "x"}, {"e.json": object()},
                         {"e.json": {"x": {1, 2}}}, {"parts": []},
                         {"parts": [{"path": "e.json"}]},
                         {"parts": [{"path": "e.json", "payload": "***"}]},
                         {"parts": [{"path": "e.json", "payload": "e30=",
                                     "payloadType": "Inline"}]}]))),
    Rule("create_eventstream", "sensitivity_label_settings", st.one_of(
        NOT_TEXT_NOR_NONE.filter(lambda v: not isinstance(v, dict)), st.just({}),
        st.sampled_from([{"label": "x"}, {"labelId": "not-a-uuid"},
                         {"labelId": "c548374d-3bb1-474f-9434-38347785000d",
                          "sensitivityLabelApplyStrategy": "Always"},
                         {"labelId": None}, {1: "x", "labelId": "y"}]))),
    Rule("create_eventstream", "api_version", st.one_of(
        NOT_TEXT, st.sampled_from(["", "1", "v", "beta", "v1/", "v1\n"]))),
    Rule("create_eventstreams", "items", st.one_of(
        st.none(), st.just([]), st.just({}), st.text(max_size=3), st.integers(),
        st.just(pd.DataFrame()),
        st.lists(st.one_of(st.integers(), st.text(max_size=2), st.none()), min_size=1,
                 max_size=2),
        st.just([{"workspace_id": WORKSPACE, "display_name": "x", "colour": "red"}]),
        st.just([{"workspace_id": WORKSPACE, "display_name": "x", 1: "one", "b": 2}]))),
    Rule("create_eventstreams", "api_version", st.one_of(
        NOT_TEXT, st.sampled_from(["", "1", "v", "beta"]))),
]


def _names(err: ValidationError, parameter: str) -> bool:
    """Whether the error names ``parameter`` (itself, or an item or field of it)."""
    return err.parameter == parameter or re.match(rf"{re.escape(parameter)}[\[.' ]",
                                                  err.parameter) is not None


def _call(function: str, kwargs: dict[str, Any], conn: Any) -> Any:
    return getattr(toolkit, function)(**kwargs, connection=conn)


@pytest.mark.parametrize("rule", RULES, ids=lambda r: r.id)
@SETTINGS
@given(data=st.data())
def test_a_value_outside_the_rules_is_refused_before_any_request(rule: Rule, data: Any, conn: Any,
                                                                 sandbox: Any) -> None:
    value = data.draw(rule.values, label=rule.parameter)
    kwargs = {**VALID[rule.function], **dict(rule.extra), rule.parameter: value}
    with sandbox.recording() as log, pytest.raises(ValidationError) as info:
        _call(rule.function, kwargs, conn)
    assert log == []
    err = info.value
    assert _names(err, rule.names or rule.parameter), (err.parameter, str(err))
    assert err.rule and str(err).startswith(err.parameter)


# ------------------------------------------------------------------------------ anything goes
#: Any value at all: each parameter of each function gets these.
ANYTHING = st.one_of(
    st.none(), st.booleans(), st.integers(), st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=12), st.binary(max_size=4),
    st.lists(st.one_of(st.integers(), st.floats(), st.text(max_size=4), st.none()), max_size=3),
    st.dictionaries(st.text(max_size=4), st.one_of(st.integers(), st.text(max_size=4),
                                                   st.none()), max_size=3),
    st.tuples(st.floats(allow_nan=True), st.floats(allow_nan=True)),
    st.sets(st.integers(), max_size=2), st.just(object()), st.just(pd.NA), st.just(pd.NaT),
    st.just(pd.DataFrame({"x": [1]})), st.just(pd.DataFrame()), st.just(pd.Series([1.5, 2.5])),
    st.sampled_from([np.int64(3), np.float64("nan"), np.bool_(True), np.array([1.0, 2.0]),
                     np.array([]), -0.0, 2**64, -(2**63) - 1, "\x00", "\ud7ff\u202e", " " * 3,
                     "../../etc", "%2F", "a/b?c#d", "x" * 300]),
    st.datetimes(), st.text(st.characters(codec="utf-8"), max_size=6),
)

#: Functions whose valid calls change the sandbox (a created eventstream, a protector change in
#: progress): they are called over a connection to a closed port, so a value the toolkit accepts
#: ends in a TransportError instead of a change other tests would see.
MUTATING = {"update_encryption_protector", "create_eventstream", "create_eventstreams",
            "snapshot_policy_states"}


@pytest.fixture
def offline(waits: Any) -> Any:
    """A connection to a loopback port nothing listens on (waits recorded, never slept)."""
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    connection = toolkit.connect(base_url=f"http://127.0.0.1:{port}", token="t",
                                 maps_key="k", progress=False)
    connection.sleep = waits
    yield connection
    connection.close()

#: Rules that tie two parameters: a value of the first can make the second one wrong.
CROSS = {("update_encryption_protector", "server_key_type"): ("server_key_name",),
         ("policy_states", "end"): ("start",)}

PARAMETERS = sorted({(r.function, r.parameter) for r in RULES}
                    | {(f, "connection") for f in VALID})


@pytest.mark.parametrize(("function", "parameter"), PARAMETERS,
                         ids=[f"{f}-{p}" for f, p in PARAMETERS])
@ANY
@given(data=st.data())
# a small max_items gives a frame and says it was truncated: that warning is a right answer here
@pytest.mark.filterwarnings("ignore::toolkit.TruncatedResultWarning")
def test_any_value_gives_a_frame_or_a_toolkit_error(function: str, parameter: str, data: Any,
                                                    conn: Any, offline: Any,
                                                    sandbox: Any) -> None:
    value = data.draw(ANYTHING, label=parameter)
    kwargs = {**VALID[function], "connection": offline if function in MUTATING else conn,
              parameter: value}
    with sandbox.recording() as log:
        try:
            result = getattr(toolkit, function)(**kwargs)
        except ValidationError as err:
            assert log == [], f"{function}: {err} raised after {len(log)} requests"
            assert _names(err, parameter) or err.parameter in CROSS.get(
                (function, parameter), ()), (parameter, str(err))
            return
        except ToolkitError:
            return
    assert isinstance(result, pd.DataFrame | toolkit.Operation | toolkit.ItemOperation)


# ------------------------------------------------------------------------------ batch rows
@FEW
@given(item=st.one_of(
    st.fixed_dictionaries({"workspace_id": BAD_UUID.filter(lambda v: v is not None and not (
        isinstance(v, float) and math.isnan(v))), "display_name": st.just("fuzz-x")}),
    st.fixed_dictionaries({"workspace_id": st.sampled_from([[], [1, 2], (WORKSPACE,), {"a": 1}]),
                           "display_name": st.just("fuzz-w")}),
    st.fixed_dictionaries({"workspace_id": st.just(WORKSPACE), "display_name": st.one_of(
        st.just(""), _with('\\/:*?"<>|#%'), st.text("ab", min_size=257, max_size=260))}),
    st.fixed_dictionaries({"workspace_id": st.just(WORKSPACE), "display_name": st.just("fuzz-y"),
                           "description": st.text("a", min_size=257, max_size=260)}),
    st.fixed_dictionaries({"workspace_id": st.just(WORKSPACE), "display_name": st.just("fuzz-z"),
                           "folder_id": st.sampled_from(["folder", "123", "{x}"])}),
))
def test_invalid_items_of_a_batch_are_rows_and_never_sent(item: dict[str, Any], conn: Any,
                                                          sandbox: Any) -> None:
    with sandbox.recording() as log:
        df = toolkit.create_eventstreams([item, item], connection=conn)
    assert log == []
    assert df["status"].tolist() == ["Invalid", "Invalid"]
    assert (df["error_code"] == "ValidationError").all()
    assert df["error"].str.len().gt(0).all()


@FEW
@given(names=st.lists(BAD_SERVER.filter(lambda v: isinstance(v, str)), min_size=1, max_size=4))
def test_invalid_server_names_are_answered_without_a_request(names: list[str], conn: Any,
                                                             sandbox: Any) -> None:
    with sandbox.recording() as log:
        df = toolkit.check_server_names(SUB, names, connection=conn)
    assert log == []
    assert df["name"].tolist() == names
    assert not df["available"].any() and (df["reason"] == "Invalid").all()
    assert (df["answered_by"] == "toolkit").all()


# ------------------------------------------------------------------------------ kubeconfig
KUBECONFIG = "apiVersion: v1\nkind: Config\nclusters: []\n"


@FEW
@given(value=st.one_of(
    st.none(), st.integers(), st.text(max_size=5), st.just(pd.DataFrame()),
    st.just(pd.DataFrame({"value": [Secret(KUBECONFIG), Secret(KUBECONFIG)]})),
    st.just(pd.DataFrame({"value": ["plain text"]})), st.just(pd.Series({"name": "x"})),
    st.just(pd.Series({"value": None})), st.dictionaries(st.text(max_size=3), st.text(max_size=3)),
    st.lists(st.just(Secret(KUBECONFIG)), max_size=2)))
def test_write_kubeconfig_refuses_what_is_not_one_kubeconfig(value: Any, tmp_path: Any) -> None:
    target = tmp_path / "config"
    with pytest.raises(ValidationError) as info:
        toolkit.write_kubeconfig(value, target)
    assert info.value.parameter == "row_or_frame"
    assert not target.exists()


@FEW
@given(path=st.one_of(st.none(), st.integers(), st.floats(), st.booleans(), st.just(""),
                      st.lists(st.text(max_size=2), max_size=2),
                      st.dictionaries(st.text(max_size=2), st.text(max_size=2), max_size=1)))
def test_write_kubeconfig_refuses_a_path_that_is_not_one(path: Any) -> None:
    with pytest.raises(ValidationError) as info:
        toolkit.write_kubeconfig(Secret(KUBECONFIG), path)
    assert info.value.parameter == "path"


@FEW
@given(overwrite=NOT_BOOL)
def test_write_kubeconfig_refuses_a_flag_that_is_not_one(overwrite: Any, tmp_path: Any) -> None:
    with pytest.raises(ValidationError) as info:
        toolkit.write_kubeconfig(Secret(KUBECONFIG), tmp_path / "k", overwrite=overwrite)
    assert info.value.parameter == "overwrite"


# ------------------------------------------------------------------------------ the rules' edges
def test_the_edges_of_each_range_are_accepted(conn: Any, sandbox: Any) -> None:
    """The limits themselves are inside the rules (the strategies above only go past them): the
    toolkit sends them (the service may still have nothing there)."""
    accepted: list[Callable[[], Any]] = [
        lambda: toolkit.autocomplete("Ordi", coordinates=(180, 90), top=20, connection=conn),
        lambda: toolkit.autocomplete("Ordi", bbox=(1.5, 42.5, 1.50001, 42.50001), top=1,
                                     connection=conn),
        lambda: toolkit.air_quality_forecast((1.5218, 42.5075), duration=7, connection=conn),
        lambda: toolkit.air_quality_forecast((1.5218, 42.5075), duration=1, connection=conn),
        lambda: toolkit.air_quality_hourly_forecast((1.5218, 42.5075), duration=1,
                                                    connection=conn),
        lambda: toolkit.air_quality_hourly_forecast((1.5218, 42.5075), duration=96,
                                                    connection=conn),
        lambda: toolkit.reverse_geocode([(180, 90), (-180, -90)], connection=conn),
        lambda: toolkit.geocode("Ordi", coordinates=(180, 90), top=20, connection=conn),
        lambda: toolkit.geocode("Ordi", bbox=(1.5, 42.5, 1.50001, 42.50001), top=1,
                                connection=conn),
        lambda: toolkit.snap_to_roads([(1.5218, 42.5075), (1.5218, 42.5075 + 0.0539)],
                                      connection=conn),
        lambda: toolkit.sql_operations(max_items=0, connection=conn),
    ]
    for call in accepted:
        with sandbox.recording() as log, warnings.catch_warnings():
            warnings.simplefilter("ignore", toolkit.TruncatedResultWarning)
            try:
                call()
            except ValidationError:
                raise
            except ToolkitError:
                pass
        assert log, call


def test_bad_input_rules_cover_every_function() -> None:
    assert {r.function for r in RULES} == set(VALID)
