"""Where the tests of ``toolkit._spec`` read the facts from: the specification's three documents
(``tests/conformance/spec``), the services' schemas the sandbox ships (``openapi_data``) and the
real example payloads (``tests/examples``); and the scans that keep each fact in one home."""

from __future__ import annotations

import ast
import json
import re
from functools import cache
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

import toolkit

PACKAGE = Path(toolkit.__file__).parent
SPEC = Path(__file__).parents[1] / "conformance" / "spec"
SCHEMAS = PACKAGE / "sandbox" / "openapi_data"


# ------------------------------------------------------------------------------ the documents
@cache
def spec_text(number: int) -> str:
    """The text of spec document ``number`` (1, 2 or 3)."""
    (path,) = SPEC.glob(f"{number}-*.md")
    return path.read_text(encoding="utf-8")


def spec_section(number: int, heading: str) -> str:
    """The body of the section of document ``number`` whose heading starts with ``heading``
    (``"## 8."``, ``"### 2.5"``), up to the next heading of the same or a higher level."""
    text = spec_text(number)
    level = heading.split(" ", 1)[0]
    start = text.index("\n" + heading) + 1
    ends = [m.start() for m in re.finditer(rf"\n#{{1,{len(level)}}} ", text[start:])]
    return text[start:start + ends[0]] if ends else text[start:]


def spec_list(text: str, after: str) -> list[str]:
    """The comma-separated values written after ``after`` up to the end of its sentence, each
    without a parenthesised remark (``AirflowJob (brand word removed)`` -> ``AirflowJob``)."""
    rest = re.sub(r"\s*\([^)]*\)", "", text[text.index(after) + len(after):])
    sentence = re.split(r"\.(?:\s|$)", rest, maxsplit=1)[0]
    return [v.strip() for v in sentence.split(",") if v.strip()]


def spec_versions(number: int) -> dict[str, str]:
    """Section 9 of document ``number``: operation words -> the api-version the spec uses."""
    text = spec_section(number, "## 9.")
    out = {}
    for version, operations in re.findall(r"(\d{4}-\d\d-\d\d|\d+\.\d+) \(([^)]*)\)", text):
        for operation in re.split(r",\s*", operations):
            out[operation.strip()] = version
    return out


@cache
def schema(name: str) -> dict[str, Any]:
    """The schema excerpt ``name`` (``"05-policy-states"``) the sandbox ships."""
    return json.loads((SCHEMAS / f"{name}.json").read_text(encoding="utf-8"))


def schema_enum(name: str, definition: str) -> list[Any]:
    """The ``enum`` of ``definitions/<definition>`` in the schema ``name`` (of its items, for
    an array)."""
    declared = schema(name)["definitions"][definition]
    return list(declared["enum"] if "enum" in declared else declared["items"]["enum"])


def schema_parameter(name: str, parameter: str) -> dict[str, Any]:
    """The declaration of the path or query ``parameter`` of the first operation that has it."""
    for operations in schema(name)["paths"].values():
        for operation in operations.values():
            for p in operation.get("parameters", []):
                if p.get("name") == parameter:
                    return dict(p)
    raise KeyError(parameter)


# ------------------------------------------------------------------------------ one home
def facts_of(module: ModuleType) -> dict[str, Any]:
    """The facts of a spec module worth finding copies of: 'module.NAME' -> value (containers
    of two or more and patterns)."""
    out: dict[str, Any] = {}
    for name in module.__all__:
        value = getattr(module, name)
        container = isinstance(value, tuple | frozenset | dict) and len(value) >= 2
        if container or (isinstance(value, str) and name.endswith("PATTERN")):
            out[f"{module.__name__}.{name}"] = value
    return out


def _literal(node: ast.AST) -> Any:
    try:
        value = ast.literal_eval(node)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return None
    return value


def _same(value: Any, fact: Any) -> bool:
    if isinstance(fact, frozenset):
        return isinstance(value, set | frozenset) and set(value) == fact
    if isinstance(fact, str):
        return isinstance(value, str) and value == fact
    return type(value) is type(fact) and value == fact


@pytest.fixture(scope="session")
def package_literals() -> list[tuple[str, Any]]:
    """Every literal of the package outside ``_spec`` that could be a copy of a fact:
    tuples, sets, dicts, strings of 8 characters or more, and the first argument of a call
    (``set('...')``, ``frozenset({...})``, ``re.compile(r'...')``), with where it is written."""
    out = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if "_spec" in path.parts:
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if not isinstance(node, ast.Tuple | ast.Set | ast.Dict | ast.Constant | ast.Call):
                continue
            if isinstance(node, ast.Call):
                if not node.args:
                    continue
                value = _literal(node.args[0])
                if isinstance(node.func, ast.Name) and node.func.id in ("set", "frozenset") \
                        and isinstance(value, str):
                    value = set(value)
            else:
                value = _literal(node)
            if value is None or (isinstance(value, str) and len(value) < 8):
                continue
            out.append((f"{path.relative_to(PACKAGE.parent)}:{node.lineno}", value))
    return out


def copies_of(module: ModuleType, literals: list[tuple[str, Any]]) -> list[str]:
    """Where the package writes one of ``module``'s facts again instead of importing it."""
    facts = facts_of(module)
    assert facts, f"{module.__name__} holds no fact to look for"
    return [f"{where} copies {name}" for where, value in literals
            for name, fact in facts.items() if _same(value, fact)]


def imports_beyond_spec(module: ModuleType) -> list[str]:
    """The package modules a spec module imports that are not spec modules."""
    tree = ast.parse(Path(str(module.__file__)).read_text(encoding="utf-8"))
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            roots = [node.module or ""]
        elif isinstance(node, ast.Import):
            roots = [alias.name for alias in node.names]
        else:
            continue
        out += [r for r in roots if r.startswith("toolkit") and not r.startswith("toolkit._spec")]
    return out


def top_level_statements(module: ModuleType) -> list[str]:
    """The kinds of the statements a spec module runs at import beyond assignments, imports,
    docstrings and ``__all__``: a data-only module has none."""
    tree = ast.parse(Path(str(module.__file__)).read_text(encoding="utf-8"))
    allowed = (ast.Assign, ast.AnnAssign, ast.Import, ast.ImportFrom, ast.Expr)
    return [type(node).__name__ for node in tree.body if not isinstance(node, allowed)
            or (isinstance(node, ast.Expr) and not isinstance(node.value, ast.Constant))]
