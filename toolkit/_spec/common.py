"""Facts shared by every family: the shape of the GUIDs that name subscriptions, tenants,
workspaces and items.

Data only (see :mod:`toolkit._spec`).
"""

from __future__ import annotations

__all__ = ["UUID_PATTERN"]

#: A GUID in its usual hyphenated form, any case.
UUID_PATTERN = r"[0-9a-fA-F]{8}(-[0-9a-fA-F]{4}){3}-[0-9a-fA-F]{12}"
