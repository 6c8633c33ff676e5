"""The sandbox's Resource Graph route: ``POST /providers/Vendor.ResourceGraph/resources``.

The body is the service's ``QueryRequest``: ``query``, ``subscriptions`` or ``managementGroups``
(neither: every subscription), ``options`` (``$top`` 1 to 1,000 rows a page, default 1,000;
``$skip``; ``$skipToken``; ``resultFormat`` ``objectArray`` (default) or ``table``) and
``facets``. The answer is ``QueryResponse``: ``totalRecords``, ``count``, ``resultTruncated``,
``$skipToken``, ``data`` and ``facets``. As the service, it gives a ``$skipToken`` only when the
result has an ``id`` column; a larger result without one is cut at the page and says
``resultTruncated: "true"``. A query's result is kept (a few of them) so that its pages agree;
the token names it, its next offset and its page size. Each query counts in the caller's quota
(:mod:`~toolkit.sandbox.arm.resourcegraph.quota`); the KQL runs on
:mod:`~toolkit.sandbox.arm.resourcegraph.engine`.
"""

from __future__ import annotations

import base64
import hashlib
import threading
import uuid
from collections import OrderedDict
from typing import TYPE_CHECKING, Any

import orjson

from toolkit._spec.arm import (
    MANAGEMENT_GROUP_NAME_PATTERN,
    RESOURCE_GRAPH_API_VERSIONS,
    RESOURCE_GRAPH_PAGE_MAX,
    RESOURCE_GRAPH_PATH,
    RESOURCE_GRAPH_RESULT_FORMATS,
    RESOURCE_GRAPH_SCOPE_FILTERS,
    RESOURCE_GRAPH_SKIP_TOKEN_KEY,
)
from toolkit.sandbox.arm.common import arm_reply
from toolkit.sandbox.arm.resourcegraph.engine import Engine, KqlFailure, Result, available
from toolkit.sandbox.arm.resourcegraph.quota import spend
from toolkit.sandbox.arm.resourcegraph.tables import build_tables
from toolkit.sandbox.http import Reply, Request, Router, SandboxHTTPError

if TYPE_CHECKING:
    from toolkit.sandbox.server import Sandbox

__all__ = ["API_VERSIONS", "engine_of", "register"]

API_VERSIONS = RESOURCE_GRAPH_API_VERSIONS
_OBJECT_ARRAY, _TABLE = RESOURCE_GRAPH_RESULT_FORMATS
#: Results kept for paging: at most this many, or this many rows in all.
_RESULTS_MAX = 16
_RESULTS_MAX_ROWS = 2_000_000
_ENGINE_LOCK = threading.Lock()
#: A facet's count column (``count`` is a word of KQL: quoted as an identifier).
_COUNT = "['count']"
_SUPPORT = ("Please provide below info when asking for support: timestamp = {when}, "
            "correlationId = {request}.")


def _bad(request: Request, detail_code: str, detail: str, status: int = 400,
         code: str = "BadRequest") -> SandboxHTTPError:
    """Make an error in the service's words: a support line, then the details."""
    when = request.sandbox.now().strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    return SandboxHTTPError(status, code, _SUPPORT.format(when=when, request=request.request_id),
                            details=[{"code": detail_code, "message": detail}])


def engine_of(sandbox: Any) -> Engine:
    """Give the sandbox's Resource Graph database, loaded on first use."""
    with sandbox.state_lock:
        found = sandbox.state.get("resourcegraph_engine")
    if found is not None:
        return found
    with _ENGINE_LOCK:
        with sandbox.state_lock:
            found = sandbox.state.get("resourcegraph_engine")
        if found is None:
            found = Engine(build_tables(sandbox.world))
            with sandbox.state_lock:
                sandbox.state["resourcegraph_engine"] = found
    return found


def _strings(request: Request, body: dict[str, Any], key: str) -> list[str] | None:
    value = body.get(key)
    if value is None:
        return None
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        raise _bad(request, "InvalidRequestContent", f"'{key}' must be an array of strings.")
    if not value:
        raise _bad(request, "InvalidRequestContent", f"'{key}' must not be empty.")
    return value


def _scope(request: Request, body: dict[str, Any]) -> tuple[list[str] | None, list[str] | None]:
    import re

    subs = _strings(request, body, "subscriptions")
    groups = _strings(request, body, "managementGroups")
    if subs is not None and groups is not None:
        raise _bad(request, "InvalidRequestContent",
                   "Give either 'subscriptions' or 'managementGroups', not both.")
    for sub in subs or []:
        try:
            uuid.UUID(sub)
        except ValueError:
            raise _bad(request, "InvalidSubscriptionId",
                       f"The subscription identifier '{sub[:60]}' is malformed.") from None
    world = request.sandbox.world
    for name in groups or []:
        known = name.lower() in {mg.name.lower() for mg in world.management_groups}
        if not re.fullmatch(MANAGEMENT_GROUP_NAME_PATTERN, name) or not known:
            ns = request.sandbox.namespace
            raise _bad(request, "AuthorizationFailed",
                       f"The client does not have authorization to perform action "
                       f"'{ns}.{RESOURCE_GRAPH_PATH}/read' over scope '/providers/{ns}."
                       f"Management/managementGroups/{name[:90]}', or the scope is invalid.",
                       status=403, code="AuthorizationFailed")
    if groups is not None:
        groups = [world.management_group(g).name for g in groups]
    return subs, groups


def _int_option(request: Request, options: dict[str, Any], key: str, low: int,
                high: int | None) -> int | None:
    value = options.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < low or \
            (high is not None and value > high):
        bound = f"between {low} and {high}" if high is not None else f"at least {low}"
        raise _bad(request, "InvalidRequestContent", f"'options.{key}' must be an integer "
                                                     f"{bound}.")
    return value


def _token(key: str, offset: int, size: int) -> str:
    raw = orjson.dumps({"k": key, "o": offset, "n": size})
    return base64.b64encode(raw).decode()


def _read_token(request: Request, token: str) -> tuple[str, int, int]:
    try:
        data = orjson.loads(base64.b64decode(token, validate=True))
        return str(data["k"]), int(data["o"]), int(data["n"])
    except (ValueError, KeyError, TypeError, orjson.JSONDecodeError):
        raise _bad(request, "InvalidSkipToken",
                   f"The $skipToken '{token[:40]}' is not valid.") from None


def _key(query: str, subs: list[str] | None, groups: list[str] | None) -> str:
    scope = ("g:" + ",".join(sorted(g.lower() for g in groups)) if groups is not None else
             "s:" + ",".join(sorted(s.lower() for s in subs)) if subs is not None else "t")
    return hashlib.sha256(f"{scope}\n{query}".encode()).hexdigest()[:32]


def _result(request: Request, engine: Engine, query: str, subs: list[str] | None,
            groups: list[str] | None) -> Result:
    """Run a query over a scope, or give the result kept from running it before."""
    key = _key(query, subs, groups)
    sandbox = request.sandbox
    with sandbox.state_lock:
        cache: OrderedDict[str, Result] = sandbox.state.setdefault("resourcegraph_results",
                                                                   OrderedDict())
        hit = cache.get(key)
        if hit is not None:
            cache.move_to_end(key)
            return hit
    try:
        result = engine.run(query, subs, groups)
    except KqlFailure as err:
        raise SandboxHTTPError(
            400, "BadRequest",
            _SUPPORT.format(when=sandbox.now().strftime("%Y-%m-%dT%H:%M:%S.%fZ"),
                            request=request.request_id),
            details=[{"code": "InvalidQuery",
                      "message": "Query is invalid. Please refer to the documentation for the "
                                 "Azure Resource Graph service and fix the error before "
                                 "retrying."},
                     {"code": err.kind, "message": err.message[:1000]}]) from None
    with sandbox.state_lock:
        cache[key] = result
        while len(cache) > 1 and (len(cache) > _RESULTS_MAX or
                                  sum(r.total for r in cache.values()) > _RESULTS_MAX_ROWS):
            cache.popitem(last=False)
    return result


def _data(result: Result, rows: list[list[Any]], fmt: str) -> Any:
    if fmt == _TABLE:
        return {"columns": result.columns, "rows": rows}
    names = [c["name"] for c in result.columns]
    return [dict(zip(names, row, strict=True)) for row in rows]


def _facets(request: Request, engine: Engine, query: str, subs: list[str] | None,
            groups: list[str] | None, facets: Any, fmt: str) -> list[dict[str, Any]]:
    """Compute the facets asked (a count of rows per value of an expression)."""
    if facets is None:
        return []
    if not isinstance(facets, list):
        raise _bad(request, "InvalidRequestContent", "'facets' must be an array.")
    out: list[dict[str, Any]] = []
    for facet in facets:
        expression = facet.get("expression") if isinstance(facet, dict) else None
        if not isinstance(expression, str) or not expression.strip():
            raise _bad(request, "InvalidRequestContent", "Each facet needs an 'expression'.")
        options = facet.get("options") or {}
        top = options.get("$top", 10) if isinstance(options, dict) else 10
        order = str(options.get("sortOrder", "desc")).lower() if isinstance(options, dict) \
            else "desc"
        sort_by = options.get("sortBy") if isinstance(options, dict) else None
        where = options.get("filter") if isinstance(options, dict) else None
        if not isinstance(top, int) or isinstance(top, bool) or not 1 <= top <= 1000 or \
                order not in ("asc", "desc"):
            raise _bad(request, "InvalidRequestContent", "A facet's '$top' is 1 to 1000 and "
                                                         "its 'sortOrder' asc or desc.")
        text = (f"{query}" + (f" | where {where}" if where else "")
                + f" | summarize ['count'] = count() by {expression}"
                + f" | order by {sort_by or _COUNT} {order}")
        try:
            result = engine.run(text, subs, groups)
        except KqlFailure as err:
            out.append({"expression": expression, "resultType": "FacetError",
                        "errors": [{"code": "InvalidFacetExpression",
                                    "message": err.message[:500]}]})
            continue
        rows = result.page(0, top)
        out.append({"expression": expression, "resultType": "FacetResult",
                    "totalRecords": result.total, "count": len(rows),
                    "data": _data(result, rows, fmt)})
    return out


def _resources(request: Request) -> Reply:
    quota_headers = spend(request)
    body = request.json()
    if not isinstance(body, dict):
        raise _bad(request, "InvalidRequestContent", "The request body must be a QueryRequest "
                                                     "object.")
    query = body.get("query")
    if not isinstance(query, str) or not query.strip():
        raise _bad(request, "InvalidQuery", "The 'query' property is required: a KQL query.")
    options = body.get("options") or {}
    if not isinstance(options, dict):
        raise _bad(request, "InvalidRequestContent", "'options' must be an object.")
    fmt = options.get("resultFormat", _OBJECT_ARRAY)
    if fmt not in RESOURCE_GRAPH_RESULT_FORMATS:
        raise _bad(request, "InvalidRequestContent", "'options.resultFormat' must be one of "
                   f"{', '.join(RESOURCE_GRAPH_RESULT_FORMATS)}.")
    scope_filter = options.get("authorizationScopeFilter", RESOURCE_GRAPH_SCOPE_FILTERS[0])
    if scope_filter not in RESOURCE_GRAPH_SCOPE_FILTERS:
        raise _bad(request, "InvalidRequestContent", "'options.authorizationScopeFilter' must be "
                   f"one of {', '.join(RESOURCE_GRAPH_SCOPE_FILTERS)}.")
    top = _int_option(request, options, "$top", 1, RESOURCE_GRAPH_PAGE_MAX)
    skip = _int_option(request, options, "$skip", 0, None)
    token = options.get(RESOURCE_GRAPH_SKIP_TOKEN_KEY)
    if token is not None and (not isinstance(token, str) or not token):
        raise _bad(request, "InvalidSkipToken", "'options.$skipToken' must be a string.")
    subs, groups = _scope(request, body)
    if not available():
        raise _bad(request, "SandboxEngineMissing",
                   "The sandbox runs Resource Graph queries with duckdb-kql, which is not "
                   "installed: pip install \"cloudops-frames[kql]\".")
    engine = engine_of(request.sandbox)
    key = _key(query, subs, groups)
    size = top or RESOURCE_GRAPH_PAGE_MAX
    offset = skip or 0
    if token is not None:
        token_key, offset, size = _read_token(request, token)
        if token_key != key:
            raise _bad(request, "InvalidSkipToken", "The $skipToken belongs to another query or "
                                                    "scope.")
        size = top or size  # $top overrides the page size when a token is given
        offset = offset if skip is None else skip
    result = _result(request, engine, query, subs, groups)
    total = result.total
    rows = result.page(offset, size)
    pageable = any(c["name"] == "id" for c in result.columns)
    more = offset + len(rows) < total
    out: dict[str, Any] = {"totalRecords": total, "count": len(rows),
                           "resultTruncated": "true" if more and not pageable else "false"}
    if more and pageable:
        out[RESOURCE_GRAPH_SKIP_TOKEN_KEY] = _token(key, offset + len(rows), size)
    out["data"] = _data(result, rows, fmt)
    out["facets"] = _facets(request, engine, query, subs, groups, body.get("facets"), fmt)
    reply = arm_reply(request, out)
    reply.headers.update(quota_headers)
    return reply


def register(router: Router, sandbox: Sandbox) -> None:
    """Add the Resource Graph query route."""
    router.add("POST", f"/providers/{{ns}}.{RESOURCE_GRAPH_PATH}", _resources, family="arm",
               api_versions=API_VERSIONS, name="resource_graph")
