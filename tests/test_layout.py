"""``tests/`` mirrors ``toolkit/``: every module ``toolkit/X/Y.py`` has its own
``tests/X/test_Y.py`` (``tests/X/test_Y.py`` for a private ``toolkit/X/_Y.py`` too).

A package's ``__init__.py`` that holds logic is tested in ``tests/X/test_package.py`` and a
``__main__.py`` in ``tests/X/test_main.py``; an ``__init__.py`` that only names, documents or
lazily re-exports what its modules define holds nothing to test on its own. The folders
``conformance``, ``security``, ``reliability``, ``properties``, ``examples``, ``recordings`` and
``typecheck`` cut across modules and mirror nothing. Every other test file is a module's
mirror, or one of the checks of the whole package (its imports, this layout, its
documentation, its install), so a test is found beside its module.
"""

from __future__ import annotations

import ast
from pathlib import Path

import toolkit

ROOT = Path(toolkit.__file__).parent
TESTS = Path(__file__).parent

# Package files with no logic of their own: docstrings, ``__all__`` and the lazy ``__getattr__``
# that imports a name from its module on first use (tested in tests/_core/test_lazy.py).
NO_LOGIC = {
    "_core/__init__.py": "empty",
    "_data/__init__.py": "docstring of the bundled data",
    "_spec/__init__.py": "docstring and the list of the spec modules",
    "arm/__init__.py": "empty",
    "explore/__init__.py": "lazy re-exports of the explorers",
    "fabric/__init__.py": "docstring",
    "graph/__init__.py": "docstring",
    "maps/__init__.py": "docstring",
    "plot/__init__.py": "lazy re-exports of the plots",
    "report/__init__.py": "docstring of the report command",
    "widgets/__init__.py": "lazy re-exports of the widgets",
    "sandbox/arm/__init__.py": "empty",
    "sandbox/arm/policy/__init__.py": "docstring of the policy family",
    "sandbox/arm/resourcegraph/__init__.py": "docstring of the Resource Graph family",
    "sandbox/fabric/__init__.py": "docstring",
    "sandbox/graph/__init__.py": "docstring",
    "sandbox/maps/roads/__init__.py": "docstring of the road engine",
    "sandbox/maps/weather/__init__.py": "docstring of the weather model",
}

CROSS_CUTTING = {"conformance", "security", "reliability", "properties", "examples", "typecheck",
                 "notebooks", "recordings"}
# Checks of the whole package's house: its imports, this layout, its documentation site and
# its install from the built wheel.
HOUSE = {"test_imports.py", "test_layout.py", "test_docs.py", "test_operation_lists.py",
         "test_function_sizes.py", "test_install.py"}


def _mirror(module: Path) -> Path:
    rel = module.relative_to(ROOT)
    name = {"__init__.py": "test_package.py", "__main__.py": "test_main.py"}.get(
        rel.name, f"test_{rel.stem.lstrip('_')}.py")
    return TESTS / rel.parent / name


def _defines(module: Path) -> list[str]:
    """Functions and classes a module defines, other than a lazy ``__getattr__``/``__dir__``."""
    tree = ast.parse(module.read_text(encoding="utf-8"))
    return [node.name for node in tree.body
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
            and node.name not in ("__getattr__", "__dir__")]


def _modules() -> list[str]:
    return sorted(str(p.relative_to(ROOT)) for p in ROOT.rglob("*.py"))


def test_every_module_has_its_own_test_file() -> None:
    missing = [m for m in _modules() if m not in NO_LOGIC and not _mirror(ROOT / m).is_file()]
    assert missing == [], "modules without their tests/ mirror: " + ", ".join(
        f"{m} -> {_mirror(ROOT / m).relative_to(TESTS.parent)}" for m in missing)


def test_the_files_said_to_hold_no_logic_hold_none() -> None:
    modules = set(_modules())
    assert set(NO_LOGIC) <= modules, set(NO_LOGIC) - modules
    holding = {m: _defines(ROOT / m) for m in NO_LOGIC if _defines(ROOT / m)}
    assert holding == {}


def test_every_test_file_mirrors_a_module_or_cuts_across() -> None:
    mirrors = {_mirror(ROOT / m) for m in _modules() if m not in NO_LOGIC}
    stray = sorted(str(t.relative_to(TESTS.parent)) for t in TESTS.rglob("test_*.py")
                   if t.relative_to(TESTS).parts[0] not in CROSS_CUTTING
                   and not (t.parent == TESTS and t.name in HOUSE) and t not in mirrors)
    assert stray == [], "test files that mirror no module of toolkit/ (move each test to the " \
                        "mirror of the module it tests, or to a cross-cutting folder)"


def test_test_folders_are_packages_named_after_toolkit_or_cross_cutting() -> None:
    # (a folder of data only, such as the baseline images of the pictures, is no test folder)
    folders = {p.relative_to(TESTS) for p in TESTS.rglob("*") if p.is_dir()
               and p.name != "__pycache__" and p.relative_to(TESTS).parts[0] not in CROSS_CUTTING
               and any(p.glob("*.py"))}
    stray = sorted(str(f) for f in folders if not (ROOT / f).is_dir())
    assert stray == []
