"""What :func:`toolkit.connect` is asked, completed from the environment and checked.

Every keyword of ``connect()`` has a ``TOOLKIT_*`` variable of the same meaning (listed in
:mod:`toolkit.connection`); :class:`Asked` holds the keywords completed from them, checked
before anything starts or is sent: plain ``http://`` only to loopback, a credential shortcut
word that azure-identity builds, the cloud named, ``verify`` and ``proxies``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, fields
from typing import Any

from toolkit._core.config import Settings, check_plain_http
from toolkit._core.credentials import credential_word
from toolkit._core.errors import ValidationError
from toolkit._spec.clouds import CLOUDS, NEUTRAL, Cloud, cloud_of_urls, get_cloud

__all__ = ["Asked", "check_proxies", "cloud_named", "cloud_of", "settings_from_env",
           "settings_of"]

#: The variable of each family's URL.
URL_VARIABLES = {"arm": "TOOLKIT_ARM_URL", "maps": "TOOLKIT_MAPS_URL",
                 "graph": "TOOLKIT_GRAPH_URL", "fabric": "TOOLKIT_FABRIC_URL"}
#: The variable of each :class:`Settings` field, and how its text becomes the value.
ENV_SETTINGS: dict[str, tuple[str, Callable[[str], Any]]] = {
    "max_retries": ("TOOLKIT_MAX_RETRIES", int),
    "max_retry_wait": ("TOOLKIT_MAX_RETRY_WAIT", float),
    "max_concurrency": ("TOOLKIT_MAX_CONCURRENCY", int),
    "max_partitions": ("TOOLKIT_MAX_PARTITIONS", int),
    "read_timeout": ("TOOLKIT_TIMEOUT", float),
    "request_deadline": ("TOOLKIT_REQUEST_DEADLINE", float),
    "max_body_bytes": ("TOOLKIT_MAX_BODY_BYTES", int),
    "poll_interval": ("TOOLKIT_POLL_INTERVAL", float),
    "min_poll_wait": ("TOOLKIT_MIN_POLL_WAIT", float),
    "trusted_hosts": ("TOOLKIT_TRUSTED_HOSTS",
                      lambda v: tuple(h.strip() for h in v.split(",") if h.strip())),
    "progress": ("TOOLKIT_PROGRESS", lambda v: v.strip().lower() not in ("0", "false", "no")),
    "cache": ("TOOLKIT_CACHE", str),
}


def settings_from_env(env: Mapping[str, str]) -> dict[str, Any]:
    """Read the :class:`Settings` fields that ``TOOLKIT_*`` variables give."""
    out: dict[str, Any] = {}
    for name, (var, conv) in ENV_SETTINGS.items():
        if env.get(var):
            try:
                out[name] = conv(env[var])
            except ValueError as err:
                raise ValidationError(var, env[var], f"must be a {conv.__name__}") from err
    return out


def check_proxies(proxies: Any) -> dict[str, str] | None:
    """``proxies=`` as requests takes it: scheme (or ``scheme://host``) -> proxy URL."""
    if proxies is None:
        return None
    from urllib.parse import urlsplit

    if not isinstance(proxies, Mapping) or not all(
            isinstance(k, str) and isinstance(v, str) and urlsplit(v).scheme in (
                "http", "https", "socks5", "socks5h") and urlsplit(v).hostname
            for k, v in proxies.items()):
        raise ValidationError("proxies", type(proxies).__name__,
                              "must be a dict of scheme to proxy URL, as requests takes it: "
                              "{'https': 'http://proxy:8080'}")
    return dict(proxies)


def settings_of(settings: dict[str, Any], env: Mapping[str, str]) -> Settings:
    """Build the :class:`Settings` of the keywords given, over those of ``TOOLKIT_*``."""
    unknown = set(settings) - {f.name for f in fields(Settings)}
    if unknown:
        raise ValidationError(sorted(unknown)[0], settings[sorted(unknown)[0]],
                              f"not a connect() setting; settings are "
                              f"{', '.join(f.name for f in fields(Settings))}")
    return Settings(**{**settings_from_env(env), **settings}).validated()


@dataclass
class Asked:
    """What ``connect()`` was asked, completed from the environment and checked.

    Built by :meth:`of`; the steps of ``connect()`` fill in what a sandbox or the cloud gives
    (``base_url``, ``credential``, ``maps_key``, ``verify``, ``cloud``, ``named``).
    """

    base_url: str | None
    urls: dict[str, str | None]
    credential: Any
    #: a credential shortcut word and the parameter that gave it, built once the cloud is known
    word: tuple[str, str] | None
    token: Any
    maps_key: Any
    maps_sas_token: Any
    maps_client_id: str | None
    namespace: str | None
    header_prefix: str | None
    cloud: Cloud | None
    verify: bool | str
    sandbox: Any
    proxies: dict[str, str] | None
    #: the cloud was named (by the caller, the environment or a sandbox given)
    named: bool = False

    @classmethod
    def of(cls, env: Mapping[str, str], *, base_url: str | None, urls: dict[str, str | None],
           credential: Any, token: Any, maps_key: Any, maps_sas_token: Any,
           maps_client_id: str | None, cloud: str | None, namespace: str | None,
           header_prefix: str | None, verify: bool | str, sandbox: Any,
           proxies: Any) -> Asked:
        """Complete the arguments from ``TOOLKIT_*`` variables and check them.

        All of it before anything starts or is sent.
        """
        base_url = base_url or env.get("TOOLKIT_BASE_URL")
        urls = {fam: url or env.get(URL_VARIABLES[fam]) for fam, url in urls.items()}
        for name, url in (("base_url", base_url), *((f"{f}_url", u) for f, u in urls.items())):
            check_plain_http(name, url or "")
        word: tuple[str, str] | None = None
        if isinstance(credential, str):
            word, credential = (credential_word(credential), "credential"), None
        elif credential is None and env.get("TOOLKIT_CREDENTIAL", "").strip():
            word = (credential_word(env["TOOLKIT_CREDENTIAL"], "TOOLKIT_CREDENTIAL"),
                    "TOOLKIT_CREDENTIAL")
        checked_proxies = check_proxies(proxies)
        chosen = cloud_named(cloud, "cloud") if cloud is not None else None
        if isinstance(sandbox, bool) or sandbox is None:
            env_cloud = env.get("TOOLKIT_CLOUD", "").strip()
            if chosen is None and env_cloud:
                chosen = cloud_named(env_cloud, "TOOLKIT_CLOUD")
        elif chosen is not None and chosen.name != sandbox.cloud.name:
            raise ValidationError("cloud", cloud, f"the sandbox given speaks the "
                                  f"{sandbox.cloud.name} cloud's vocabulary; start one with "
                                  f"Sandbox(cloud={chosen.name!r})")
        if verify is True and env.get("TOOLKIT_VERIFY", "").strip():
            v = env["TOOLKIT_VERIFY"].strip()
            verify = False if v.lower() in ("0", "false", "no") else (True if v.lower() in (
                "1", "true", "yes") else v)
        if env.get("TOOLKIT_SANDBOX", "").lower() in ("1", "true", "yes") and sandbox is None:
            sandbox = True
        return cls(base_url=base_url, urls=urls, credential=credential, word=word,
                   token=token or env.get("TOOLKIT_TOKEN") or None,
                   maps_key=maps_key or env.get("TOOLKIT_MAPS_KEY") or None,
                   maps_sas_token=maps_sas_token or env.get("TOOLKIT_MAPS_SAS_TOKEN") or None,
                   maps_client_id=maps_client_id or env.get("TOOLKIT_MAPS_CLIENT_ID") or None,
                   namespace=namespace or env.get("TOOLKIT_NAMESPACE") or None,
                   header_prefix=header_prefix or env.get("TOOLKIT_HEADER_PREFIX") or None,
                   cloud=chosen, verify=verify, sandbox=sandbox, proxies=checked_proxies)

    @property
    def configured(self) -> bool:
        """Whether an endpoint or a credential of any kind was given."""
        return bool(any(self.urls.values()) or self.base_url or self.credential or self.word
                    or self.token or self.maps_key or self.maps_sas_token)


def cloud_named(name: str, parameter: str) -> Cloud:
    """Return the cloud of a name or alias (ValidationError naming ``parameter`` otherwise)."""
    try:
        return get_cloud(name)
    except KeyError:
        raise ValidationError(parameter, name, f"clouds are {', '.join(CLOUDS)}") from None


def cloud_of(urls: Mapping[str, str]) -> Cloud:
    """Return the real cloud whose hosts the URLs name (``neutral`` when none does).

    Parameters
    ----------
    urls : mapping of str to str
        Family (or ``base``, for all of them) -> the URL given.

    Raises
    ------
    ValidationError
        Naming ``cloud``: a URL on a real cloud's domain the toolkit does not list, or URLs of
        two clouds.
    """
    try:
        return cloud_of_urls(urls) or NEUTRAL
    except ValueError as err:
        raise ValidationError("cloud", None, str(err)) from None
