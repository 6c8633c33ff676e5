"""URLs of a family and the origin rule every request is held to.

A request goes only to the family's own origin (scheme, host, port) or a trusted host over
https, and over plain http only to loopback; anything else is refused before it is sent
(:class:`~toolkit._core.errors.UntrustedOriginError`), so a credential never reaches another
origin nor travels in clear. A caller's value placed in a path is one segment
(:func:`segment`), never more.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from urllib.parse import quote, urlencode, urlsplit, urlunsplit

from toolkit._core.config import PLAIN_HTTP_RULE, FamilyConfig, Origin
from toolkit._core.errors import UntrustedOriginError, ValidationError

__all__ = ["at_own_origin", "build_url", "check_origin", "segment", "short"]

#: Characters left as they are in a path segment (RFC 3986 ``pchar`` less ``%``): everything
#: else, ``/``, ``?``, ``#`` and ``%`` included, is percent-encoded.
_SEGMENT_SAFE = "-._~!$&'()*+,;=:@"


def segment(value: Any, parameter: str) -> str:
    """Make one path segment of a caller's value.

    The value is percent-encoded, so it can neither add segments nor start a query.

    Parameters
    ----------
    value : object
        The caller's value (``str()`` of it is used).
    parameter : str
        The parameter it came under, for errors.

    Returns
    -------
    str
        The percent-encoded segment.

    Raises
    ------
    ValidationError
        ``.`` and ``..``, which would climb the path.
    """
    text = str(value)
    if text in (".", ".."):
        raise ValidationError(parameter, text, "'.' and '..' are not names: as a path segment "
                              "they would address another resource")
    return quote(text, safe=_SEGMENT_SAFE)


def build_url(base: str, path: str, params: Mapping[str, Any] | None = None) -> str:
    """Join a base URL, a path and query parameters (OData ``$`` names kept readable).

    Parameters
    ----------
    base : str
        The family's base URL.
    path : str
        A path under it, or an absolute URL (taken as it is).
    params : mapping, optional
        Query parameters; ``None`` values are left out.

    Returns
    -------
    str
        The absolute URL.
    """
    url = path if path.startswith(("http://", "https://")) else base.rstrip("/") + path
    if params:
        items = [(k, v) for k, v in params.items() if v is not None]
        if items:
            sep = "&" if "?" in url else "?"
            url += sep + urlencode(items, quote_via=quote, safe=",$:")
    return url


def short(url: str) -> str:
    """Return a URL's path alone, as messages name it (no host, no query).

    Parameters
    ----------
    url : str
        An absolute URL.

    Returns
    -------
    str
        Its path.
    """
    return urlsplit(url).path


def check_origin(config: FamilyConfig, url: str, operation: str | None) -> None:
    """Refuse a URL whose origin the family does not trust, naming the host and why.

    Parameters
    ----------
    config : FamilyConfig
        The family's origin, trusted hosts and TLS verification.
    url : str
        The absolute URL about to be asked.
    operation : str, optional
        The public function's name, for the message.

    Raises
    ------
    UntrustedOriginError
        The URL is not http(s), or its origin is neither the family's own nor trusted.
    """
    origin = Origin.of(url)
    if origin is not None and config.trusts(origin):
        return
    own = config.origin
    what = f"{operation}: " if operation else ""
    if origin is None:
        raise UntrustedOriginError(
            f"{what}the service named a URL that is not an http(s) address ({url[:80]!r}); "
            "nothing was sent.", host="", url=None)
    if origin.scheme != "https" and not origin.loopback:
        why = PLAIN_HTTP_RULE
    elif origin.host == own.host and origin.port == own.port and origin.scheme != own.scheme:
        why = (f"it is {own.host} over {origin.scheme} instead of {own.scheme}; the credential "
               "is never sent over plain http")
    elif config.verify is False and not origin.loopback:
        why = "TLS verification is turned off, which is allowed for loopback addresses only"
    else:
        why = (f"it is not the {config.family} endpoint ({own}) nor a trusted host; if it is a "
               "private endpoint of the same service, add it to trusted_hosts "
               "(toolkit.connect(trusted_hosts=[...]) or TOOLKIT_TRUSTED_HOSTS)")
    raise UntrustedOriginError(
        f"{what}the service pointed the next request at {origin.host} ({origin}); it was "
        f"refused and nothing was sent there: {why}.", host=origin.host)


def at_own_origin(config: FamilyConfig, url: str) -> str:
    """Give the URL to ask instead of one whose host is not the family's: its path, at home.

    A URL on an origin the family trusts is kept as it is. Any other one keeps its path and
    query and takes the scheme, host and port of the family's endpoint, as Microsoft's Fabric
    clients follow the operation URLs the service names on its cluster hosts (see
    :data:`toolkit._spec.fabric.OPERATION_STATE_PATH`): the credential still goes to the
    family's own origin only. A URL without a readable origin is kept, for
    :func:`check_origin` to refuse.

    Parameters
    ----------
    config : FamilyConfig
        The family's endpoint and trusted hosts.
    url : str
        An absolute URL the service named.

    Returns
    -------
    str
        The URL to ask.
    """
    origin = Origin.of(url)
    if origin is None or config.trusts(origin):
        return url
    parts = urlsplit(url)
    own = urlsplit(config.base_url)
    return urlunsplit((own.scheme, own.netloc, parts.path or "/", parts.query, ""))
