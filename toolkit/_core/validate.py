"""Client-side rules from the spec, checked before any request.

Every check raises :class:`~toolkit._core.errors.ValidationError` naming the parameter, the value
and the rule. The sandbox applies the same rules to what it receives.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from toolkit._core.errors import ValidationError
from toolkit._spec.arm import RESOURCE_GROUP_MAX, RESOURCE_GROUP_PATTERN, SERVER_NAME_PATTERN
from toolkit._spec.common import UUID_PATTERN
from toolkit._spec.maps import COUNTRY_CODE_PATTERN

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "RESOURCE_GROUP_RULE",
    "SERVER_NAME_RULE",
    "check_api_version",
    "check_bool",
    "check_choice",
    "check_country_code",
    "check_expression",
    "check_frame",
    "check_int",
    "check_language",
    "check_name",
    "check_names",
    "check_resource_group",
    "check_subscription_id",
    "check_time",
    "check_timeout",
    "check_uuid",
    "iso_time",
    "many_strings",
    "resource_group_problem",
    "server_name_problem",
]

SERVER_NAME_RE = re.compile(SERVER_NAME_PATTERN)
SERVER_NAME_RULE = (
    "server names are 1 to 63 characters of lower-case letters, digits and hyphens, with no "
    "'.' or '_' and no leading or trailing '-'"
)
UUID_RE = re.compile(UUID_PATTERN)
RESOURCE_GROUP_RE = re.compile(RESOURCE_GROUP_PATTERN)
RESOURCE_GROUP_RULE = (
    "resource group names are 1 to 90 characters of letters, digits, '_', '-', '.', '(' and "
    "')', not ending in '.'"
)


def server_name_problem(name: str) -> str | None:
    """Why a server name breaks spec 1 §2.6, or ``None`` when it is valid."""
    if not name:
        return "the name is empty; " + SERVER_NAME_RULE
    if len(name) > 63:
        return f"the name has {len(name)} characters, more than 63; " + SERVER_NAME_RULE
    if any(c.isupper() for c in name):
        return "the name has upper-case letters; " + SERVER_NAME_RULE
    if "." in name or "_" in name:
        return "the name contains '.' or '_'; " + SERVER_NAME_RULE
    if name.startswith("-") or name.endswith("-"):
        return "the name starts or ends with '-'; " + SERVER_NAME_RULE
    if not SERVER_NAME_RE.fullmatch(name):
        return "the name has characters other than lower-case letters, digits and '-'; " + \
            SERVER_NAME_RULE
    return None


def resource_group_problem(name: Any) -> str | None:
    """Why a resource group name breaks spec 1 §4.1, or ``None`` when it is valid."""
    if not isinstance(name, str):
        return "must be a string; " + RESOURCE_GROUP_RULE
    if not 1 <= len(name) <= RESOURCE_GROUP_MAX:
        return f"has {len(name)} characters; " + RESOURCE_GROUP_RULE
    if not RESOURCE_GROUP_RE.fullmatch(name) or name.endswith("."):
        return RESOURCE_GROUP_RULE
    return None


def check_resource_group(value: Any, parameter: str = "resource_group") -> str:
    """Check a resource group name, else ValidationError."""
    problem = resource_group_problem(value)
    if problem or not isinstance(value, str):
        raise ValidationError(parameter, value, problem or RESOURCE_GROUP_RULE)
    return value


def check_uuid(value: Any, parameter: str) -> str:
    """Check a UUID string (any case), else ValidationError."""
    if isinstance(value, uuid.UUID):
        return str(value)
    if not isinstance(value, str):
        raise ValidationError(parameter, value, "must be a UUID string")
    if not UUID_RE.fullmatch(value):
        raise ValidationError(parameter, value,
                              "must be a UUID like 00000000-0000-0000-0000-000000000000")
    return value


def check_subscription_id(value: Any, parameter: str = "subscription_id") -> str:
    """Check a subscription id (a UUID), else ValidationError."""
    return check_uuid(value, parameter)


def check_name(value: Any, parameter: str, *, min_len: int = 1, max_len: int | None = None,
               pattern: re.Pattern[str] | None = None, rule: str = "") -> str:
    """Check a non-empty string within length (and pattern) limits."""
    if not isinstance(value, str):
        raise ValidationError(parameter, value, f"must be a string{'; ' + rule if rule else ''}")
    if len(value) < min_len or (max_len is not None and len(value) > max_len):
        limits = f"{min_len} to {max_len}" if max_len is not None else f"at least {min_len}"
        raise ValidationError(parameter, value, rule or f"must have {limits} characters")
    if pattern is not None and not pattern.fullmatch(value):
        raise ValidationError(parameter, value, rule or f"must match {pattern.pattern}")
    return value


def check_choice(value: Any, parameter: str, choices: Sequence[str], *,
                 case_insensitive: bool = False) -> str:
    """One of the allowed values (returned in its canonical spelling)."""
    if isinstance(value, str):
        for c in choices:
            if value == c or (case_insensitive and value.lower() == c.lower()):
                return c
    raise ValidationError(parameter, value, f"must be one of {', '.join(choices)}")


def check_bool(value: Any, parameter: str) -> bool:
    """Check ``True`` or ``False`` (numpy booleans too), else ValidationError."""
    if isinstance(value, bool):
        return value
    try:
        import numpy as np

        if isinstance(value, np.bool_):
            return bool(value)
    except ImportError:  # pragma: no cover - numpy is a dependency
        pass
    raise ValidationError(parameter, value, "must be True or False")


def check_int(value: Any, parameter: str, *, minimum: int | None = None,
              maximum: int | None = None) -> int:
    """Check an integer (not a bool) within bounds."""
    import numpy as np

    number: int
    if isinstance(value, int) and not isinstance(value, bool):
        number = value
    elif isinstance(value, np.integer):
        number = int(value)
    else:
        raise ValidationError(parameter, value, "must be an integer")
    value = number
    if (minimum is not None and value < minimum) or (maximum is not None and value > maximum):
        if minimum is not None and maximum is not None:
            rule = f"must be between {minimum} and {maximum}"
        elif minimum is not None:
            rule = f"must be at least {minimum}"
        else:
            rule = f"must be at most {maximum}"
        raise ValidationError(parameter, value, rule)
    return number


LANGUAGE_TAG_RE = re.compile(r"[A-Za-z]{1,8}(-[A-Za-z0-9]{1,8})*")


def check_language(value: Any, parameter: str = "language") -> str | None:
    """Check ``None`` or an IETF language tag such as ``en`` or ``fr-FR``.

    It travels in the ``Accept-Language`` header, so it must be plain ASCII.
    """
    if value is None:
        return None
    if not isinstance(value, str) or not LANGUAGE_TAG_RE.fullmatch(value):
        raise ValidationError(parameter, value, "must be a language tag such as 'en' or "
                              "'fr-FR', or None")
    return value


COUNTRY_CODE_RE = re.compile(COUNTRY_CODE_PATTERN)


def check_country_code(value: Any, parameter: str, *, auto: bool = False) -> str | None:
    """Check ``None`` or an ISO 3166-1 alpha-2 code (``'AD'``, ``'fr'``), given in upper case.

    With ``auto``, ``'Auto'`` (any case) is accepted too: the maps services' ``view`` default.
    """
    if value is None:
        return None
    if auto and isinstance(value, str) and value.lower() == "auto":
        return "Auto"
    if not isinstance(value, str) or not COUNTRY_CODE_RE.fullmatch(value):
        raise ValidationError(parameter, value, "must be an ISO 3166-1 alpha-2 code such as "
                              "'AD' or 'FR'" + (" (or 'Auto')" if auto else ""))
    return value.upper()


def check_api_version(value: Any, parameter: str = "api_version") -> str:
    """Check a non-empty api-version string (spec: required, minLength 1)."""
    if not isinstance(value, str) or not value.strip():
        raise ValidationError(parameter, value, "the api-version is required: a non-empty string "
                              "such as '2025-01-01'")
    return value


def check_timeout(value: Any, parameter: str = "timeout") -> float | None:
    """``None`` or a number of seconds >= 0."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or value != value \
            or value < 0:
        raise ValidationError(parameter, value, "must be a number of seconds >= 0, or None")
    return float(value)


def many_strings(value: Any, parameter: str, *, choices: Sequence[str] | None = None,
                 case_insensitive: bool = False) -> tuple[list[str], bool]:
    """Check "one string or several": the one rule every parameter of that kind follows.

    Parameters
    ----------
    value : Any
        The argument given: a string, or any iterable of strings (a list, a tuple, a Series...)
        but a mapping or bytes.
    parameter : str
        Its name, for the error.
    choices : sequence of str, optional
        The values an item may take; each is returned in its canonical spelling.
    case_insensitive : bool
        Whether an item matches a choice in any case.

    Returns
    -------
    (list of str, bool)
        The items, and whether one string was given (not a collection).

    Raises
    ------
    ValidationError
        Naming ``parameter`` for a value that is neither a string nor a collection of them, or
        an empty collection; naming ``parameter[i]`` for an item that is not a string or not
        one of ``choices`` (``parameter`` itself when one string was given).
    """
    what = (f"one of {', '.join(choices)}, or a list of them" if choices is not None
            else "a string or a list of strings")
    if isinstance(value, str):
        items, single = [value], True
    else:
        if value is None or isinstance(value, bytes | Mapping):
            raise ValidationError(parameter, value, f"must be {what}")
        try:
            items = list(value)
        except TypeError:
            raise ValidationError(parameter, value, f"must be {what}") from None
        if not items:
            raise ValidationError(parameter, value, "must name at least one item")
        single = False
    out = []
    for i, item in enumerate(items):
        name = parameter if single else f"{parameter}[{i}]"
        if choices is not None:
            out.append(check_choice(item, name, choices, case_insensitive=case_insensitive))
        elif isinstance(item, str):
            out.append(item)
        else:
            raise ValidationError(name, item, "must be a string")
    return out, single


def check_frame(df: object, columns: Sequence[str], helper: str,
                source: str = "the matching toolkit function") -> pd.DataFrame:
    """Check a DataFrame holds ``columns`` (a helper's input).

    ValidationError names what is missing and which function's frame to pass.
    """
    import pandas as pd

    if not isinstance(df, pd.DataFrame):
        raise ValidationError("df", type(df).__name__,
                              f"{helper} needs a DataFrame: pass the frame {source} returned")
    missing = [c for c in columns if c not in df.columns]
    if missing:
        raise ValidationError("df", f"columns {list(df.columns)[:8]}",
                              f"{helper} needs the columns {missing}: pass the frame {source} "
                              "returned")
    return df


def check_expression(value: Any, parameter: str) -> str | None:
    """Check an optional OData expression (``$filter``, ``$apply``): a non-empty string.

    Parameters
    ----------
    value : Any
        The argument given.
    parameter : str
        Its name, for the error.

    Returns
    -------
    str or None
        The expression, or ``None`` when none was given.
    """
    if value is None:
        return None
    if not isinstance(value, str) or not value.strip():
        raise ValidationError(parameter, value, "must be a non-empty OData expression string")
    return value


#: A field name as ``$select`` takes it (``resourceId``, ``PolicyAssignmentId``).
_FIELD_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def check_names(value: Any, parameter: str, *, fields: bool = False) -> str | None:
    """Check optional column names: a comma-separated string or a list of strings.

    Parameters
    ----------
    value : Any
        The argument given (``$select``, ``$orderby`` items).
    parameter : str
        Its name, for the error.
    fields : bool
        Whether each comma-separated item must be a bare field name (``$select``): letters,
        digits and ``_``, not starting with a digit.

    Returns
    -------
    str or None
        The names joined with ``,``, or ``None`` when none were given.
    """
    if value is None:
        return None
    items, single = many_strings(value, parameter)
    for i, item in enumerate(items):
        if not item.strip():
            raise ValidationError(parameter if single else f"{parameter}[{i}]", item,
                                  "must be a non-empty string")
    joined = ",".join(i.strip() for i in items)
    if fields:
        for name in joined.split(","):
            if not _FIELD_NAME.fullmatch(name.strip()):
                raise ValidationError(
                    parameter, value, f"must name fields (letters, digits and _, not starting "
                    f"with a digit, separated by commas): {name.strip()!r} is not a field name")
    return joined


def check_time(value: Any, parameter: str) -> pd.Timestamp | None:
    """Check an optional date-time: a datetime, a date, a Timestamp or an ISO 8601 string.

    Parameters
    ----------
    value : Any
        The argument given; naive times are UTC.
    parameter : str
        Its name, for the error.

    Returns
    -------
    pandas.Timestamp or None
        The time in UTC, or ``None`` when none was given.
    """
    import datetime as dt

    import pandas as pd

    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, str | dt.datetime | dt.date | pd.Timestamp):
        raise ValidationError(parameter, value, "must be a datetime, a pandas Timestamp or an "
                                                "ISO 8601 string")
    try:
        ts = pd.Timestamp(value)
    except (ValueError, TypeError) as err:
        raise ValidationError(parameter, value, "must be a datetime, a pandas Timestamp or an "
                                                "ISO 8601 string") from err
    if pd.isna(ts):
        raise ValidationError(parameter, value, "must be a date-time, not NaT")
    return ts.tz_localize("UTC") if ts.tz is None else ts.tz_convert("UTC")


def iso_time(ts: pd.Timestamp) -> str:
    """Write a UTC time as the services read it: ISO 8601, microseconds only when set, ``Z``.

    Parameters
    ----------
    ts : pandas.Timestamp
        A time in UTC (as :func:`check_time` gives it).

    Returns
    -------
    str
        For example ``2026-11-20T09:00:00Z`` or ``2026-11-20T09:00:00.250000Z``.
    """
    text = ts.strftime("%Y-%m-%dT%H:%M:%S")
    if ts.microsecond:
        text += f".{ts.microsecond:06d}"
    return text + "Z"
