"""A griffe extension for the API reference: the docstrings' Sphinx roles (``:func:`x```,
``:class:`~toolkit.Operation```) become inline code (``x``, ``Operation``), as a reader of the
source sees them, instead of showing the role's markup."""

from __future__ import annotations

import re
from typing import Any

import griffe

ROLE = re.compile(r":(?:py:)?(?:func|class|meth|attr|mod|data|exc|obj):"
                  r"`(~?)([^`<]*?)\s*(?:<([^`>]+)>)?`")


def _replace(match: re.Match[str]) -> str:
    short, text, target = match.groups()
    name = text or target or ""
    if short:
        name = name.rsplit(".", 1)[-1]
    return f"`{name}`"


class SphinxRoles(griffe.Extension):
    """Rewrites the roles in every docstring the loader reads."""

    def on_object(self, *, obj: griffe.Object, **kwargs: Any) -> None:
        if obj.docstring is not None:
            obj.docstring.value = ROLE.sub(_replace, obj.docstring.value)
