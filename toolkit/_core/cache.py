"""An opt-in on-disk cache of read answers (requests-cache, SQLite backend).

``connect(cache=True)`` (or ``TOOLKIT_CACHE=1``) keeps the answers of read operations in
``~/.cache/toolkit/responses.sqlite`` (``cache="path/to/file.sqlite"`` or ``TOOLKIT_CACHE=<path>``
chooses the file), so re-running a notebook against a real tenant does not spend its rate limits
again.

* The key of an answer is the method, the URL, the body, the ``Accept``/``Accept-Language``
  headers and the **identity of the caller**: the tenant and principal read from the bearer token's
  claims (``tid``, ``oid`` or ``sub``), never the token itself; a maps shared key or an opaque token
  counts by a one-way digest. One user's cached answers are never given to another.
* Each read operation has its own lifetime (:data:`LIFETIMES`); anything not listed is never
  cached: credential operations, creations and updates, polls of long-running operations.
  Only successful (200) answers are kept, never errors.
* Credential headers (``Authorization``, ``subscription-key``) are removed from what is stored.
* Answers served from the cache are remembered by their request id, so that
  :func:`~toolkit._core.provenance.provenance` can say in ``df.attrs["from_cache"]`` which pages
  came from the cache.
"""

from __future__ import annotations

import base64
import hashlib
import logging
import os
import threading
from collections import OrderedDict
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import orjson

logger = logging.getLogger(__name__)

__all__ = ["LIFETIMES", "cache_clear", "cache_path", "cached_session", "lifetime_header",
           "served_from_cache"]

#: Seconds an answer of each read operation is kept. Operations not listed are never cached.
LIFETIMES: Mapping[str, int] = {
    # catalogues that change with releases
    "sql_operations": 86_400,
    "support_services": 86_400,
    "problem_classifications": 86_400,
    # states that move with evaluations and configuration
    "policy_states": 3_600,
    "encryption_protector": 300,
    "check_server_names": 60,
    "authentication_strength_policies": 600,
    "authentication_strength_usage": 600,
    # places and roads
    "autocomplete": 86_400,
    "snap_to_roads": 86_400,
    "route_directions": 600,
    "traffic_incidents": 120,
    # weather
    "air_quality": 600,
    "air_quality_forecast": 3_600,
    "severe_weather_alerts": 300,
}

#: Request header carrying an answer's lifetime from the pipeline to the cached session; it is
#: removed before the request leaves.
LIFETIME_HEADER = "x-toolkit-cache-lifetime"

_CREDENTIAL_HEADERS = ("Authorization", "subscription-key", "X-API-KEY", "access_token",
                       "api_key")
_DEFAULT_FILE = Path("~/.cache/toolkit/responses.sqlite")
_opened: set[str] = set()
_opened_lock = threading.Lock()


def cache_path(setting: Any) -> Path | None:
    """The cache file a ``cache=`` setting names: ``None``/``False``/``"0"`` none, ``True``/``"1"``
    the default file, anything else a path (``.sqlite`` added when it has no suffix)."""
    if setting is None or setting is False:
        return None
    if setting is True:
        return _DEFAULT_FILE.expanduser()
    text = os.fspath(setting).strip()
    if text.lower() in ("", "0", "false", "no", "off"):
        return None
    if text.lower() in ("1", "true", "yes", "on"):
        return _DEFAULT_FILE.expanduser()
    path = Path(text).expanduser()
    return path if path.suffix else path.with_suffix(".sqlite")


def lifetime_header(operation: str | None, method: str) -> dict[str, str]:
    """The header that asks the cached session to keep this request's answer (empty when the
    operation is never cached)."""
    seconds = LIFETIMES.get(operation or "")
    if not seconds or method.upper() not in ("GET", "POST"):
        return {}
    return {LIFETIME_HEADER: str(seconds)}


# ------------------------------------------------------------------------------ caller identity
def _jwt_claims(token: str) -> dict[str, Any] | None:
    parts = token.split(".")
    if len(parts) != 3 or len(parts[1]) > 16_384:
        return None
    try:
        raw = base64.urlsafe_b64decode(parts[1] + "=" * (-len(parts[1]) % 4))
        claims = orjson.loads(raw)
    except (ValueError, orjson.JSONDecodeError):
        return None
    return claims if isinstance(claims, dict) else None


def caller_identity(headers: Mapping[str, str]) -> str:
    """Who is asking, without the credential: ``tenant/principal`` from a token's claims, or a
    one-way digest of a key or of a token that is not a JWT."""
    auth = headers.get("Authorization") or ""
    scheme, _, value = auth.partition(" ")
    if value:
        claims = _jwt_claims(value.strip())
        if claims is not None:
            tenant = str(claims.get("tid") or "")
            principal = str(claims.get("oid") or claims.get("sub") or "")
            if principal:
                return f"{scheme.lower()}:{tenant}/{principal}"
        return f"{scheme.lower()}-digest:" + hashlib.sha256(value.encode()).hexdigest()
    key = headers.get("subscription-key")
    if key:
        return "key-digest:" + hashlib.sha256(key.encode()).hexdigest()
    return "anonymous"


# ------------------------------------------------------------------------------ served answers
_SERVED_MAX = 100_000
_served: OrderedDict[str, None] = OrderedDict()
_served_lock = threading.Lock()


def _remember_served(request_id: str) -> None:
    with _served_lock:
        _served[request_id] = None
        _served.move_to_end(request_id)
        while len(_served) > _SERVED_MAX:
            _served.popitem(last=False)


def served_from_cache(request_ids: Iterable[str]) -> list[bool]:
    """For each request id, whether its answer was given from the cache in this process."""
    with _served_lock:
        return [rid in _served for rid in request_ids]


# ------------------------------------------------------------------------------ the session
def cached_session(path: Path, header_prefix: str) -> Any:
    """A ``requests`` session that answers reads from the SQLite file at ``path`` (created with
    its folder, readable by the owner only)."""
    import requests
    from requests_cache import CachedSession
    from requests_cache.cache_keys import create_key

    def key_fn(request: Any, **kw: Any) -> str:
        base = create_key(request, **kw)
        who = caller_identity(request.headers)
        return hashlib.sha256(f"{base}|{who}".encode()).hexdigest()[:32]

    id_headers = (f"{header_prefix}request-id", "request-id", "requestid")

    class _Session(CachedSession):
        """Caches only what the pipeline marked with a lifetime."""

        def send(self, request: Any, expire_after: Any = None, only_if_cached: bool = False,
                 refresh: bool = False, force_refresh: bool = False, **kw: Any) -> Any:
            lifetime = request.headers.pop(LIFETIME_HEADER, None)
            if not lifetime:
                return requests.Session.send(self, request, **kw)
            response = super().send(request, expire_after=int(lifetime),
                                    only_if_cached=only_if_cached, refresh=refresh,
                                    force_refresh=force_refresh, **kw)
            if getattr(response, "from_cache", False):
                rid = next((response.headers.get(h) for h in id_headers
                            if response.headers.get(h)), None)
                if rid:
                    _remember_served(rid)
                logger.debug("answer from the cache: %s", request.method)
            return response

        def _send_and_cache(self, request: Any, actions: Any, cached_response: Any = None,
                            **kw: Any) -> Any:
            # the lifetime became a ``Cache-Control: max-age`` directive of the request for
            # requests-cache's own use: it is not the service's business
            request.headers.pop("Cache-Control", None)
            return super()._send_and_cache(request, actions, cached_response, **kw)

    path.parent.mkdir(parents=True, exist_ok=True)
    fresh = not path.exists()
    session = _Session(
        str(path), backend="sqlite", allowable_methods=("GET", "POST"), allowable_codes=(200,),
        match_headers=["Accept", "Accept-Language"], ignored_parameters=_CREDENTIAL_HEADERS,
        key_fn=key_fn, cache_control=False, stale_if_error=False,
    )
    # The key already holds what answers vary by (Accept, Accept-Language, the caller); the
    # service's Vary also names Accept-Encoding, which the transport decodes before anything is
    # stored, so requests-cache is not asked to key on it a second way.
    session.hooks["response"].append(_drop_vary)
    if fresh and path.exists():
        path.chmod(0o600)
    with _opened_lock:
        _opened.add(str(path))
    return session


def _drop_vary(response: Any, *args: Any, **kwargs: Any) -> Any:
    response.headers.pop("Vary", None)
    return response


def cache_clear(path: Any = None) -> int:
    """Remove every answer kept in a response cache.

    Parameters
    ----------
    path : str or Path, optional
        The cache file; by default every cache file this process opened, and the default file.

    Returns
    -------
    int
        How many cache files were cleared.
    """
    from requests_cache import CachedSession

    if path is not None:
        resolved = cache_path(path)
        targets = {str(resolved)} if resolved is not None else set()
    else:
        with _opened_lock:
            targets = set(_opened)
        targets.add(str(_DEFAULT_FILE.expanduser()))
    cleared = 0
    for target in sorted(targets):
        if not Path(target).exists():
            continue
        session = CachedSession(target, backend="sqlite")
        try:
            session.cache.clear()
        finally:
            session.close()
        cleared += 1
    with _served_lock:
        _served.clear()
    return cleared
