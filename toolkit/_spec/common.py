"""Facts shared by every family.

The shape of the GUIDs that name subscriptions, tenants, workspaces and items, and the header the
sandbox marks its answers with.

Data only (see :mod:`toolkit._spec`).
"""

from __future__ import annotations

__all__ = ["SANDBOX_HEADER", "UUID_PATTERN"]

#: A GUID in its usual hyphenated form, any case.
UUID_PATTERN = r"[0-9a-fA-F]{8}(-[0-9a-fA-F]{4}){3}-[0-9a-fA-F]{12}"

#: The response header every sandbox answer carries (value ``true``): the data is invented. The
#: client trusts it only to mark a frame as the sandbox's, never to mark one as real.
SANDBOX_HEADER = "x-toolkit-sandbox"
