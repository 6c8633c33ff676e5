"""Reading the text of OData expressions the toolkit sends (``$apply`` steps, ``$expand`` options).

Splitting at a separator that stands outside parentheses and quoted strings.

The service evaluates the expressions; the client only needs to find their top-level parts, to
check them before a request and to type the columns an ``$apply`` answers with.
"""

from __future__ import annotations

__all__ = ["split_top_level"]


def split_top_level(text: str, sep: str) -> list[str]:
    """Split ``text`` at the ``sep`` characters outside parentheses and single-quoted strings.

    The parts are stripped of surrounding white space.

    Raises
    ------
    ValueError
        When the parentheses or quotes do not balance.
    """
    parts, depth, quoted, start = [], 0, False, 0
    for i, ch in enumerate(text):
        if ch == "'":
            quoted = not quoted
        elif not quoted and ch == "(":
            depth += 1
        elif not quoted and ch == ")":
            depth -= 1
            if depth < 0:
                raise ValueError("unbalanced parentheses")
        elif not quoted and depth == 0 and ch == sep:
            parts.append(text[start:i])
            start = i + 1
    if depth or quoted:
        raise ValueError("unbalanced parentheses or quotes")
    parts.append(text[start:])
    return [p.strip() for p in parts]
