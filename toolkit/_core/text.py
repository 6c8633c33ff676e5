r"""Text from a service, a file or a caller is data: how it is written wherever it is shown.

One rule for every place the toolkit shows a string it did not write itself (a layer named
after an alert's category, a legend entry, a title, a widget's status line, a plot label):

- in HTML, :func:`html_text` escapes it (``<``, ``>``, ``&`` and both quotes), so it reads as
  text in an element and in an attribute alike, never as markup;
- inside a page's ``<script>``, :func:`script_json` writes it as JSON that cannot end the
  script or open a comment, and holds no ``<`` at all (``\u003c``): nothing in it looks like a
  tag to the HTML parser or to any text search over the page;
- in a matplotlib label, :func:`plot_text` escapes ``$``, so it is drawn as written and never
  parsed as mathtext (an unbalanced ``$\frac{$`` would stop the figure from drawing);
- as a colour, :func:`css_color` keeps only a hexadecimal colour (``#rgb``, ``#rrggbb`` and
  their alpha forms), which CSS and matplotlib read alike; anything else gives the fallback.
"""

from __future__ import annotations

import html
import json
import re
from typing import Any

__all__ = ["css_color", "html_text", "plot_text", "script_json"]

_HEX_COLOR = re.compile(r"#(?:[0-9a-fA-F]{3,4}|[0-9a-fA-F]{6}|[0-9a-fA-F]{8})")
#: Characters JSON may hold as they are that a page's script must not: ``<`` (``</script``,
#: ``<!--``, ``<script``), ``>`` and ``&`` (for a reader that takes the script for HTML), and
#: the two line separators JavaScript before ES2019 ended a string at.
_SCRIPT_UNSAFE = str.maketrans({"<": "\\u003c", ">": "\\u003e", "&": "\\u0026",
                                "\u2028": "\\u2028", "\u2029": "\\u2029"})


def html_text(value: Any) -> str:
    """Write a value as text for HTML, in an element or a quoted attribute.

    Parameters
    ----------
    value : object
        Anything; shown as its ``str``.

    Returns
    -------
    str
        The text with ``&``, ``<``, ``>``, ``"`` and ``'`` escaped.
    """
    return html.escape(str(value), quote=True)


def script_json(value: Any) -> str:
    r"""Write a value as JSON to place inside a page's ``<script>`` element.

    Parameters
    ----------
    value : object
        Anything :func:`json.dumps` writes.

    Returns
    -------
    str
        Compact JSON with ``<``, ``>``, ``&``, U+2028 and U+2029 as ``\u`` escapes (they occur
        only inside JSON strings, where the escape means the same character).
    """
    text = json.dumps(value, separators=(",", ":"), ensure_ascii=False)
    return text.translate(_SCRIPT_UNSAFE)


def plot_text(value: Any) -> str:
    r"""Write a value as a label matplotlib draws literally.

    Parameters
    ----------
    value : object
        Anything; drawn as its ``str``.

    Returns
    -------
    str
        The text with every ``$`` escaped (``\$``): no mathtext is parsed, and matplotlib
        draws each ``\$`` as ``$``.
    """
    return str(value).replace("$", r"\$")


def css_color(value: Any, fallback: str) -> str:
    """Keep a colour only when it is a hexadecimal colour.

    Parameters
    ----------
    value : object
        A colour from a service (``categoryColor``) or a caller.
    fallback : str
        The colour to use instead.

    Returns
    -------
    str
        ``value`` when it is ``#`` and 3, 4, 6 or 8 hexadecimal digits, else ``fallback``.
    """
    if isinstance(value, str) and _HEX_COLOR.fullmatch(value.strip()):
        return value.strip()
    return fallback
