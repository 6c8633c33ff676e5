"""Support (spec 1 §2.9, §4.7): services a ticket can be opened for, their problem classifications.

Service and classification names are identifiers the service hands out; the spec asks clients to
discover them, never to hard-code them: :func:`support_services` lists the services,
:func:`problem_classifications` one service's classifications, and
:func:`classification_consents` turns the classifications' consent lists into one row per consent.
"""

from __future__ import annotations

import logging
import re
from typing import TYPE_CHECKING, Any

import pandas as pd

from toolkit._core.errors import ValidationError
from toolkit._core.frames import FrameBuilder
from toolkit._core.paging import ARM, collect_frame, iter_pages
from toolkit._core.registry import OperationRecord, register
from toolkit._core.urls import segment
from toolkit._core.validate import check_api_version, check_frame, check_int
from toolkit._spec.arm import SUPPORT_API_VERSIONS
from toolkit.arm._schemas import PROBLEM_CLASSIFICATIONS, SUPPORT_SERVICES
from toolkit.connection import get_connection

if TYPE_CHECKING:
    from toolkit.connection import Connection

logger = logging.getLogger(__name__)

__all__ = ["classification_consents", "problem_classifications", "support_services"]

API_VERSION = SUPPORT_API_VERSIONS[0]
LANGUAGE_RE = re.compile(r"^[A-Za-z]{2,3}(-[A-Za-z0-9]{1,8})*$")
SERVICE_NAME_RE = re.compile(r"^[^/?#\s]{1,200}$")
_SERVICE_ID_RE = re.compile(r"^/providers/[^/]+\.Support/services/(?P<name>[^/?#\s]{1,200})/?$",
                            re.IGNORECASE)


def _headers(language: str | None) -> dict[str, str] | None:
    if language is None:
        return None
    if not isinstance(language, str) or not LANGUAGE_RE.fullmatch(language):
        raise ValidationError("language", language,
                              "must be a language tag such as 'en', 'de-DE' or 'fr-FR'")
    return {"Accept-Language": language}


def _service_name(service_name: Any) -> str:
    """Take a service name, or the name inside a service id.

    The id reads ``/providers/<ns>.Support/services/<name>``.
    """
    if isinstance(service_name, str):
        m = _SERVICE_ID_RE.match(service_name)
        if m:
            return m["name"]
        if SERVICE_NAME_RE.fullmatch(service_name):
            return service_name
    raise ValidationError("service_name", service_name,
                          "must be a support service name (the 'name' column of "
                          "support_services()) or its id: a non-empty string without '/', '?', "
                          "'#' or spaces")


def support_services(*, language: str | None = None, max_items: int | None = None,
                     api_version: str = API_VERSION,
                     connection: Connection | None = None) -> pd.DataFrame:
    """List the services a support ticket can be opened for.

    Parameters
    ----------
    language : str, optional
        Language of ``displayName`` (sent as ``Accept-Language``, e.g. ``"de-DE"``); the service
        answers in English for languages it does not have.
    max_items : int, optional
        Stop after this many services (warns that the result is truncated).
    api_version : str
        The service version.
    connection : Connection, optional
        Defaults to the default connection.

    Returns
    -------
    pandas.DataFrame
        One row per service: ``id``, ``name`` (the service name to pass to
        :func:`problem_classifications`), ``type``, ``displayName`` (localized) (strings),
        ``resourceTypes`` (list of the resource types the service covers).
    """
    headers = _headers(language)
    if max_items is not None:
        check_int(max_items, "max_items", minimum=0)
    check_api_version(api_version)
    conn = get_connection(connection)
    pipe = conn.pipeline("arm")
    pages = iter_pages(pipe, "GET", f"/providers/{conn.namespace}.Support/services", style=ARM,
                       params={"api-version": api_version}, operation="support_services",
                       headers=headers)
    df = collect_frame(pages, FrameBuilder(SUPPORT_SERVICES), operation="support_services",
                       max_items=max_items, connection=conn, api_version=api_version)
    df.attrs["language"] = language
    return df


def problem_classifications(service_name: str, *, language: str | None = None,
                            max_items: int | None = None, api_version: str = API_VERSION,
                            connection: Connection | None = None) -> pd.DataFrame:
    """List the problem classifications of a support service (every page).

    Parameters
    ----------
    service_name : str
        The service's name (the ``name`` column of :func:`support_services`), or its ``id``.
    language : str, optional
        Language of ``displayName`` and of the consent texts (``Accept-Language``).
    max_items : int, optional
        Stop after this many classifications (warns that the result is truncated).
    api_version : str
        The service version.
    connection : Connection, optional
        Defaults to the default connection.

    Returns
    -------
    pandas.DataFrame
        One row per classification: ``id``, ``name`` (the classification name a ticket uses),
        ``type``, ``displayName`` (localized, ``"Area / Problem"``) (strings),
        ``secondaryConsentEnabled`` (list of ``{"type", "description"}``: the partner services
        that need the customer's consent; null when none does; one row per consent with
        :func:`classification_consents`), ``systemData.createdAt``,
        ``systemData.lastModifiedAt`` (UTC date-times), ``systemData.createdBy``,
        ``systemData.lastModifiedBy`` (strings), ``systemData.createdByType``,
        ``systemData.lastModifiedByType`` (categories), and the toolkit's ``service_name``.
    """
    name = _service_name(service_name)
    headers = _headers(language)
    if max_items is not None:
        check_int(max_items, "max_items", minimum=0)
    check_api_version(api_version)
    conn = get_connection(connection)
    pipe = conn.pipeline("arm")
    path = (f"/providers/{conn.namespace}.Support/services/{segment(name, 'service_name')}/"
            "problemClassifications")
    pages = iter_pages(pipe, "GET", path, style=ARM, params={"api-version": api_version},
                       operation="problem_classifications", headers=headers)

    def add_service(items: list[Any]) -> list[Any]:
        return [{**item, "service_name": name} if isinstance(item, dict) else item
                for item in items]

    df = collect_frame(pages, FrameBuilder(PROBLEM_CLASSIFICATIONS),
                       operation="problem_classifications", max_items=max_items,
                       transform=add_service, connection=conn, api_version=api_version)
    df.attrs["language"] = language
    return df


def classification_consents(df: pd.DataFrame, *, keep_empty: bool = False) -> pd.DataFrame:
    """One row per consent a classification asks for.

    Parameters
    ----------
    df : pandas.DataFrame
        The frame :func:`problem_classifications` returns.
    keep_empty : bool
        Keep the classifications that need no consent (their consent columns are null).

    Returns
    -------
    pandas.DataFrame
        The input's columns without ``secondaryConsentEnabled``, plus
        ``secondaryConsentEnabled.type`` and ``secondaryConsentEnabled.description`` (strings),
        one row per consent; the input's index is kept, so a classification with two consents
        appears twice under its index.
    """
    check_frame(df, ["secondaryConsentEnabled"], "classification_consents",
                "problem_classifications()")
    positions: list[int] = []
    types: list[Any] = []
    texts: list[Any] = []
    for pos, value in enumerate(df["secondaryConsentEnabled"]):
        items = [c for c in value if isinstance(c, dict)] if isinstance(value, list) else []
        if not items and keep_empty:
            items = [{}]
        for consent in items:
            positions.append(pos)
            types.append(consent.get("type"))
            texts.append(consent.get("description"))
    rest = df.drop(columns=["secondaryConsentEnabled"]).iloc[positions]
    out = rest.assign(**{"secondaryConsentEnabled.type": pd.array(types, dtype="string"),
                         "secondaryConsentEnabled.description": pd.array(texts, dtype="string")})
    out.attrs.update(df.attrs)
    return out


SERVICES_RECORD = register(OperationRecord("support_services", schema=SUPPORT_SERVICES,
                                           lifetime=86_400))
CLASSIFICATIONS_RECORD = register(OperationRecord(
    "problem_classifications", schema=PROBLEM_CLASSIFICATIONS, lifetime=86_400))
CONSENTS_RECORD = register(OperationRecord("classification_consents",
                                           derived_from="problem_classifications"))
