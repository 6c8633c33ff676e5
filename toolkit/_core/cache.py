"""An opt-in on-disk cache of read answers (requests-cache, SQLite backend).

``connect(cache=True)`` (or ``TOOLKIT_CACHE=1``) keeps the answers of read operations in
``~/.cache/toolkit/responses.sqlite`` (``cache="path/to/file.sqlite"`` or ``TOOLKIT_CACHE=<path>``
chooses the file; a folder, or a path ending with a separator, means ``responses.sqlite`` in it),
so re-running a notebook against a real tenant does not spend its rate limits again.

* The key of an answer is the method, the URL, the body and **every header that can change
  the answer**: the credential that asked (the whole ``Authorization`` header or maps key), the
  maps account named with a bearer token (``<header prefix>client-id``), the languages and
  formats asked for, and any other header the request carries, as a keyed digest (HMAC-SHA256)
  with a random key kept in the cache file itself. Only the headers that change nothing of the
  answer are left out (:data:`NOT_IN_KEY`: the client request id, the user agent, the encodings
  the transport decodes, the body's length, the lifetime of the answer). Nothing read from a
  token's claims counts (they are not verified here), so a forged token never reads another
  caller's answers. A refreshed token is another credential: the first read after a refresh
  misses and asks the service again.
* Each read operation has its own lifetime (the ``lifetime`` of its record,
  :mod:`toolkit._core.registry`); an operation without one is never cached: credential
  operations, creations and updates, polls of long-running operations.
  Only successful (200) answers that are JSON objects (a JSON content type and a body that
  parses) are kept, never errors nor a proxy's or captive portal's page; an answer the
  operation then cannot read (``Response.refuse``: a list that is not a list, a missing
  member) is removed again, so the next call asks the service.
* Credential headers (``Authorization``, ``subscription-key``) are removed from what is stored.
* Entries are stored as JSON (requests-cache's orjson serializer), never pickle: nothing read
  from the file can run code; a row that does not read back is a miss.
* The file is used only when it is a regular file (not a symlink), owned by the current user and
  not writable by group or others; it is created readable and writable by its owner only (SQLite
  gives its journal the file's permissions), in a folder made ``0700`` when the toolkit makes it.
* Answers served from the cache are remembered by their request id, so that
  :func:`~toolkit._core.provenance.provenance` can say in ``df.attrs["from_cache"]`` which pages
  came from the cache.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import logging
import os
import secrets
import sqlite3
import stat
import threading
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

import orjson

from toolkit._core.errors import ValidationError
from toolkit._core.recent import RecentIds
from toolkit._core.registry import find

logger = logging.getLogger(__name__)

__all__ = ["cache_clear", "cache_path", "cached_session", "forgetter",
           "lifetime_header", "served_from_cache"]

#: Request header carrying an answer's lifetime from the pipeline to the cached session; it is
#: removed before the request leaves.
LIFETIME_HEADER = "x-toolkit-cache-lifetime"

#: Request headers that change nothing of the answer, left out of its key (with the client
#: request id, ``<header prefix>client-request-id``, a new one for every request).
NOT_IN_KEY = frozenset({"user-agent", "accept-encoding", "content-length", "connection",
                        "cache-control", "client-request-id", LIFETIME_HEADER})

_CREDENTIAL_HEADERS = ("Authorization", "subscription-key", "X-API-KEY", "access_token",
                       "api_key")
_DEFAULT_FILE = Path("~/.cache/toolkit/responses.sqlite")
_opened: set[str] = set()
_opened_lock = threading.Lock()


def cache_path(setting: Any) -> Path | None:
    """Return the cache file a ``cache=`` setting names.

    ``None``/``False``/``"0"`` name none, ``True``/``"1"`` the default file, a folder (an existing
    one, or a path ending with a separator) ``responses.sqlite`` in it, anything else a file
    (``.sqlite`` added when it has no suffix).
    """
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
    if text.endswith(("/", os.sep)) or path.is_dir():
        return path / _DEFAULT_FILE.name
    return path if path.suffix else path.with_suffix(".sqlite")


def lifetime_header(operation: str | None, method: str) -> dict[str, str]:
    """Return the header that asks the cached session to keep this request's answer.

    It is empty when the operation is never cached.
    """
    record = find(operation)
    seconds = record.lifetime if record is not None else None
    if not seconds or method.upper() not in ("GET", "POST"):
        return {}
    return {LIFETIME_HEADER: str(seconds)}


# ------------------------------------------------------------------------------ caller identity
def caller_identity(headers: Mapping[str, Any], key: bytes, *,
                    header_prefix: str = "x-vendor-") -> str:
    """Identify the caller, and whatever else the request's headers ask of the service.

    The identity is an HMAC-SHA256 under ``key`` of every header but those of
    :data:`NOT_IN_KEY` and the client request id (``<header_prefix>client-request-id``): the
    whole ``Authorization`` header and maps key, the maps account (``<header_prefix>client-id``),
    the languages asked for... (never a claim read from a token, which nothing here verifies).
    Another credential, a refreshed token included, is another caller; another account with the
    same token is another caller too.
    """
    skip = NOT_IN_KEY | {f"{header_prefix}client-request-id".lower()}
    sent = sorted((str(name).lower(), value.decode("latin-1") if isinstance(value, bytes)
                   else str(value)) for name, value in headers.items()
                  if str(name).lower() not in skip)
    return hmac.new(key, orjson.dumps(sent), hashlib.sha256).hexdigest()


# ------------------------------------------------------------------------------ served answers
_served = RecentIds(100_000)


def served_from_cache(request_ids: Iterable[str]) -> list[bool]:
    """For each request id, whether its answer was given from the cache in this process."""
    return _served.flags(request_ids)


# ------------------------------------------------------------------------------ the file
#: Files SQLite keeps beside a database (rollback journal, write-ahead log, shared memory).
_SIDE_FILES = ("-journal", "-wal", "-shm")


def _refused(path: Path, why: str) -> ValidationError:
    return ValidationError(
        "cache", str(path),
        f"the cache file {path} {why}, so others could read or change the answers kept in it; "
        "remove it (or chmod 600 it, if it is yours and you trust its content), or choose "
        "another file with cache= (TOOLKIT_CACHE)")


def _check_file(path: Path) -> None:
    """Refuse an existing cache file (or side file) that is not private to the current user.

    It must be a regular file of the current user's, writable by nobody else; it is looked at
    without following a symbolic link.
    """
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return
    if stat.S_ISLNK(st.st_mode):
        raise _refused(path, "is a symbolic link")
    if not stat.S_ISREG(st.st_mode):
        raise _refused(path, "is not a regular file")
    if hasattr(os, "getuid") and st.st_uid != os.getuid():
        raise _refused(path, f"belongs to another user (uid {st.st_uid})")
    if st.st_mode & 0o022:
        raise _refused(path, f"is writable by group or others (mode {st.st_mode & 0o777:04o})")


def _private_file(path: Path) -> None:
    """Make sure ``path`` is a cache file only its owner can use.

    The folder is made (``0700``)
    and the file created (``0600``) when missing, an existing one checked
    (:func:`_check_file`), its SQLite side files too.
    """
    missing = [p for p in (path.parent, *path.parent.parents) if not p.exists()]
    for folder in reversed(missing):
        with contextlib.suppress(FileExistsError):
            folder.mkdir(mode=0o700)
    for side in ("", *_SIDE_FILES):
        _check_file(Path(f"{path}{side}"))
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL
                     | getattr(os, "O_NOFOLLOW", 0), 0o600)
    except FileExistsError:
        return
    os.close(fd)


def _identity_key(path: Path) -> bytes:
    """Return the random key the callers' identities are digested with.

    It is kept in the cache file and made on first use.
    """
    with contextlib.closing(sqlite3.connect(path)) as con:
        with con:
            con.execute("CREATE TABLE IF NOT EXISTS toolkit_identity_key "
                        "(id INTEGER PRIMARY KEY CHECK (id = 1), value BLOB NOT NULL)")
            con.execute("INSERT OR IGNORE INTO toolkit_identity_key (id, value) VALUES (1, ?)",
                        (secrets.token_bytes(32),))
        row = con.execute("SELECT value FROM toolkit_identity_key WHERE id = 1").fetchone()
    return bytes(row[0])


def _json_object(response: Any) -> bool:
    """Tell whether an answer is what every cached operation expects.

    That is a JSON object, said so by its content type (a proxy's or captive portal's page with
    status 200 is not kept).
    """
    kind = (response.headers.get("Content-Type") or "").split(";")[0].strip().lower()
    if kind != "application/json" and not kind.endswith("+json"):
        return False
    try:
        return isinstance(orjson.loads(response.content), dict)
    except orjson.JSONDecodeError:
        return False


def _serializer() -> Any:
    """Build requests-cache's orjson serializer, storing data only.

    JSON is structured into a response by cattrs, never pickle; reading turns a row that is not an
    answer the toolkit stored (bad JSON, another shape, another status, no expiry) into a
    ValueError: requests-cache counts that row as a miss.
    """
    from requests_cache.models.response import CachedResponse
    from requests_cache.serializers import SerializerPipeline, orjson_serializer

    class Checked(SerializerPipeline):
        def copy(self) -> Checked:  # requests-cache works on a copy of what it is given
            return Checked([stage.copy() for stage in self.stages], name=self.name,
                           is_binary=self.is_binary)

        def loads(self, value: Any) -> CachedResponse:
            try:
                answer = super().loads(value)
            except Exception as err:  # cattrs raises groups of its own: all are a bad row
                raise ValueError(f"a cache entry that does not read back ({err!r:.80})") from None
            if not isinstance(answer, CachedResponse) or answer.status_code != 200 \
                    or answer.expires is None:
                raise ValueError("a cache entry that is not an answer the toolkit stored")
            return answer

    return Checked(orjson_serializer.stages, name="toolkit-json", is_binary=True)


def _backend(path: Path) -> Any:
    """Open the SQLite backend over a checked private file, storing JSON (never pickle)."""
    from requests_cache.backends.sqlite import SQLiteCache

    _private_file(path)
    return SQLiteCache(str(path), serializer=_serializer())


# ------------------------------------------------------------------------------ the session
def cached_session(path: Path, header_prefix: str) -> Any:
    """Make a ``requests`` session that answers reads from the SQLite file at ``path``.

    Raises
    ------
    ValidationError
        The file (or a side file of it) exists and is a symbolic link, not a regular file,
        another user's, or writable by group or others.
    """
    import requests
    from requests_cache import CachedSession
    from requests_cache.cache_keys import create_key

    backend = _backend(path)
    identity_key = _identity_key(path)

    def key_fn(request: Any, **kw: Any) -> str:
        base = create_key(request, **kw)
        who = caller_identity(request.headers, identity_key, header_prefix=header_prefix)
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
                    _served.add(rid)
                logger.debug("answer from the cache: %s", request.method)
            return response

        def _send_and_cache(self, request: Any, actions: Any, cached_response: Any = None,
                            **kw: Any) -> Any:
            # the lifetime became a ``Cache-Control: max-age`` directive of the request for
            # requests-cache's own use: it is not the service's business
            request.headers.pop("Cache-Control", None)
            return super()._send_and_cache(request, actions, cached_response, **kw)

    session = _Session(
        backend=backend, allowable_methods=("GET", "POST"), allowable_codes=(200,),
        match_headers=["Accept", "Accept-Language"], ignored_parameters=_CREDENTIAL_HEADERS,
        key_fn=key_fn, cache_control=False, stale_if_error=False, filter_fn=_json_object,
    )
    # The key already holds what answers vary by (Accept, Accept-Language, the caller); the
    # service's Vary also names Accept-Encoding, which the transport decodes before anything is
    # stored, so requests-cache is not asked to key on it a second way.
    session.hooks["response"].append(_drop_vary)
    with _opened_lock:
        _opened.add(str(path))
    return session


def forgetter(session: Any, raw: Any) -> Callable[[], None] | None:
    """Return what removes an answer from the cache of ``session``.

    ``None`` when the answer was not stored (not cached, or not kept). ``raw`` is the
    transport's response.
    """
    key = getattr(getattr(raw, "internal_response", None), "cache_key", None)
    cache = getattr(session, "cache", None)
    if not key or cache is None:
        return None

    def forget() -> None:
        try:
            cache.delete(key)
        except Exception as err:  # the answer is wrong either way; the error says so
            logger.warning("could not remove an unreadable answer from the cache: %r", err)
        else:
            logger.info("an answer the operation could not read was removed from the cache")

    return forget


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
        backend = _backend(Path(target))
        try:
            backend.clear()
        finally:
            backend.close()
        cleared += 1
    _served.clear()
    return cleared
