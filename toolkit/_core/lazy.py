"""Lazy exports: a package's public names load their module on first use.

A package that re-exports names (``toolkit``, ``toolkit.plot``, ``toolkit.widgets``) lists them
once, as ``from module import name as name`` lines under ``if TYPE_CHECKING:`` in its
``__init__.py``. Type checkers and editors read those lines; at run time :func:`attach` reads the
very same block (parsed from the package's source on the first attribute asked for, never at
import) to learn which module defines a name. So the list exists once and cannot drift, and
``import toolkit`` stays cheap: matplotlib, ipywidgets and the HTTP stack load only when a
function that needs them is first touched.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Iterable
from functools import cache
from typing import Any

__all__ = ["attach", "exports_of"]


@cache
def exports_of(init_file: str) -> dict[str, str]:
    """Read the names imported under ``if TYPE_CHECKING:`` in a module's source: name -> module."""
    import ast  # only when a name is first asked for: ``import toolkit`` stays cheap

    with open(init_file, encoding="utf-8") as f:
        tree = ast.parse(f.read(), filename=init_file)
    out: dict[str, str] = {}
    for node in tree.body:
        if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and \
                node.test.id == "TYPE_CHECKING":
            for stmt in node.body:
                if isinstance(stmt, ast.ImportFrom) and stmt.module:
                    for alias in stmt.names:
                        out[alias.asname or alias.name] = stmt.module
    return out


def attach(package: str, init_file: str, submodules: Iterable[str] = ()
           ) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """Make the ``__getattr__`` and ``__dir__`` of a package with lazy exports.

    Parameters
    ----------
    package : str
        The package's ``__name__``.
    init_file : str
        Its ``__file__`` (whose ``TYPE_CHECKING`` imports are the export list).
    submodules : iterable of str
        Subpackages reachable as attributes (``toolkit.plot``), imported on first use.

    Returns
    -------
    tuple of callables
        ``(__getattr__, __dir__)`` to assign in the package; ``__all__`` is answered by
        ``__getattr__`` (the exported names, sorted).
    """
    subs = frozenset(submodules)

    def __getattr__(name: str) -> Any:
        if name == "__all__":
            return sorted(exports_of(init_file))
        if name in subs:
            return importlib.import_module(f"{package}.{name}")
        module = exports_of(init_file).get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        vars(sys.modules[package])[name] = value
        return value

    def __dir__() -> list[str]:
        # the public names only: the exports, the subpackages and the module's dunders
        # (not the helpers its source imports, such as TYPE_CHECKING or attach)
        dunders = {n for n in vars(sys.modules[package]) if n.startswith("__")}
        return sorted(dunders | set(exports_of(init_file)) | subs)

    return __getattr__, __dir__
