"""Serve ``policyStates/{latest|default}/queryResults`` at every scope (spec 1 §2.8, §4.6).

Query options ``$from``/``$to``, ``$filter``, ``$apply``, ``$orderby``, ``$select``, ``$top``,
``$skiptoken``, and ``$expand`` at resource scope only. ``default`` returns every record in the
window, ``latest`` the newest per (resource, assignment, definition, reference id). Pages hold
:data:`PAGE_SIZE` records; ``@odata.count`` is the number on the page; ``@odata.nextLink`` (a
POST) carries every option plus a ``$skiptoken`` that pins the window. Bad expressions answer 400
``QueryFailure`` naming the problem.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import Any
from urllib.parse import quote, urlencode

import orjson

from toolkit._spec.arm import ODATA_NEXT_KEY
from toolkit.sandbox.arm.common import arm_reply
from toolkit.sandbox.arm.odata import (
    ODataError,
    parse_select,
)
from toolkit.sandbox.arm.policy.options import held_window, query_options, resource_word, skiptoken
from toolkit.sandbox.arm.policy.records import (
    Expand,
    fast_records,
    generic_records,
    plain,
    resolve_select,
)
from toolkit.sandbox.arm.policy.results import cached_result
from toolkit.sandbox.arm.policy.scopes import Scope, policy_world
from toolkit.sandbox.http import Reply, Request, SandboxHTTPError

PAGE_SIZE = 1000
_EXPANDS = ("components", "policyEvaluationDetails")


_EXPAND_ITEM = re.compile(r"^\s*(?P<name>\w+)\s*(?:\((?P<inner>.*)\))?\s*$", re.DOTALL)


def split_top(text: str, sep: str) -> list[str]:
    """Split ``text`` at the ``sep`` characters outside parentheses and quotes.

    Returns
    -------
    list of str
        The non-empty parts, stripped.
    """
    parts, depth, quoted, start = [], 0, False, 0
    for i, ch in enumerate(text):
        if ch == "'":
            quoted = not quoted
        elif not quoted and ch == "(":
            depth += 1
        elif not quoted and ch == ")":
            depth -= 1
        elif not quoted and depth == 0 and ch == sep:
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:])
    return [p for p in (p.strip() for p in parts) if p]


def parse_expand(request: Request, scope: Scope) -> list[Expand]:
    """Read ``$expand``, which the service takes at resource scope only.

    Returns
    -------
    list of Expand
        The items asked, in order (none without ``$expand``).

    Raises
    ------
    SandboxHTTPError
        400 ``InvalidQueryParameterValue`` at another scope, or for an item or an option of
        ``components(...)`` the service does not take.
    """
    raw = request.param("$expand") or ""
    items = split_top(raw, ",")
    if items and scope.kind != "resource":
        raise SandboxHTTPError(400, "InvalidQueryParameterValue",
                               "The query parameter '$expand' is supported only for policy states "
                               "of a single resource.")
    by_lower = {e.lower(): e for e in _EXPANDS}
    out = []
    for item in items:
        m = _EXPAND_ITEM.match(item)
        name = by_lower.get(m["name"].lower()) if m else None
        if m is None or name is None or (m["inner"] is not None and name != "components"):
            raise SandboxHTTPError(400, "InvalidQueryParameterValue",
                                   f"The $expand value '{item}' is not supported; use "
                                   f"{' or '.join(_EXPANDS)}, or components($filter=...;"
                                   "$apply=...).")
        exp = Expand(name)
        for part in split_top(m["inner"] or "", ";"):
            key, _, value = part.partition("=")
            if key.strip().lower() == "$filter":
                exp.filter = value.strip()
            elif key.strip().lower() == "$apply":
                exp.apply = value.strip()
            else:
                raise SandboxHTTPError(400, "InvalidQueryParameterValue",
                                       f"The $expand option '{key.strip()}' is not supported "
                                       "inside components(...); use $filter and $apply.")
        out.append(exp)
    return out


def serve_query(request: Request, scope: Scope) -> Reply:
    """Answer one page of ``queryResults`` at ``scope``.

    Returns
    -------
    Reply
        The page: ``@odata.nextLink`` (with a ``$skiptoken``), ``@odata.context``,
        ``@odata.count`` and ``value``, with the resource manager's rate-limit header.

    Raises
    ------
    SandboxHTTPError
        400 for bad options or expressions.
    """
    sandbox = request.sandbox
    resource = resource_word(request, ("latest", "default"))
    start, end, offset, top = query_options(request)
    expand = parse_expand(request, scope)
    options = {k: request.param(k) for k in ("$filter", "$apply", "$orderby", "$select")}
    pw = policy_world(request)
    if request.param("$skiptoken"):
        # the window was fixed by the first page (and carried in the token), so that the pages
        # of one query agree while the clock and the service's window move on
        lo, hi = start.timestamp(), end.timestamp()
    else:
        lo, hi = held_window(request, start, end)
    try:
        result = cached_result(sandbox, pw, scope, resource, lo, hi, options)
        select = parse_select(options["$select"]) if options["$select"] else None
    except ODataError as err:
        raise SandboxHTTPError(400, "InvalidQueryParameterValue", err.message) from None
    total = result.size
    limit = total if top is None else min(total, top)
    stop = min(offset + PAGE_SIZE, limit)
    base = request.path[:request.path.lower().rindex("/policystates/") + len("/policyStates")]
    context = f"{request.base_url}{base}/$metadata#{resource}"
    next_link = None
    if stop < limit:
        params = [(k, v) for k, v in request.query if k.lower() != "$skiptoken"]
        params.append(("$skiptoken", skiptoken(stop, datetime.fromtimestamp(lo, UTC),
                                            datetime.fromtimestamp(hi, UTC))))
        query = urlencode(params, quote_via=quote, safe="$,:")
        next_link = f"{request.base_url}{request.path}?{query}"
    envelope = {ODATA_NEXT_KEY: next_link, "@odata.context": context,
                "@odata.count": max(0, stop - offset)}
    entity_ctx = orjson.dumps(f"{context}/$entity")
    if result.frame is not None:
        page = result.frame.iloc[offset:stop]
        if select:
            cols = resolve_select(select, list(result.frame.columns))
            page = page[cols]
        values = [{"@odata.id": None, "@odata.context": f"{context}/$entity",
                   **{k: plain(v) for k, v in row.items()}}
                  for row in page.to_dict("records")]
        body = orjson.dumps({**envelope, "value": values})
    else:
        rows = result.rows[offset:stop]  # type: ignore[index]
        if select or expand:
            try:
                items = generic_records(pw, result.records, rows, select, expand, entity_ctx,
                                         sandbox.cloud.vault_suffix)
            except ODataError as err:
                raise SandboxHTTPError(400, "InvalidQueryParameterValue", err.message) from None
        else:
            items = fast_records(pw, result.records, rows, entity_ctx)
        body = page_body(envelope, items)
    reply = arm_reply(request, None)
    reply.raw = body
    return reply


def page_body(envelope: dict[str, Any], items: list[bytes]) -> bytes:
    """Build the page's JSON from its envelope and its serialized records, as one buffer.

    A page of megabytes copied again for each part costs more than building it once.

    Returns
    -------
    bytes
        The envelope with ``"value"`` holding the records.
    """
    head = orjson.dumps(envelope)[:-1] + b',"value":['
    if not items:
        return head + b"]}"
    parts = list(items)
    parts[0] = head + parts[0]
    parts[-1] = parts[-1] + b"]}"
    return b",".join(parts)
