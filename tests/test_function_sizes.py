"""Functions a reader can hold in mind: no public function past 80 lines of code, none in the
package past 120.

A function's lines of code are the lines of its body after the docstring that hold code: blank
lines and lines holding only a comment are not counted, the lines of the functions it nests
are. Public: what a user calls by a public name of the package, ``toolkit.<name>`` and the
public names of ``toolkit.plot``, ``toolkit.explore``, ``toolkit.widgets`` and
``toolkit.sandbox``, functions and the methods of classes alike. Measured with ``ast`` over the
source, so a long function is named with its file and line.
"""

from __future__ import annotations

import ast
import importlib
import inspect
from functools import cache
from pathlib import Path

import pytest

import toolkit

PACKAGE = Path(toolkit.__file__).parent
PUBLIC_LIMIT = 80
LIMIT = 120
PUBLIC_PACKAGES = ("toolkit", "toolkit.plot", "toolkit.explore", "toolkit.widgets",
                   "toolkit.sandbox")


def lines_of_code(node: ast.FunctionDef | ast.AsyncFunctionDef, source: list[str]) -> int:
    """The lines of ``node``'s body after its docstring that hold code."""
    body = node.body
    first = body[0]
    if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and \
            isinstance(first.value.value, str):
        body = body[1:]
    if not body:
        return 0
    assert node.end_lineno is not None
    lines = source[body[0].lineno - 1:node.end_lineno]
    return sum(1 for line in lines if line.strip() and not line.strip().startswith("#"))


@cache
def _functions(path: Path) -> dict[int, tuple[str, int]]:
    """``{first line (its first decorator's, if any): (name, lines of code)}`` of a file."""
    text = path.read_text(encoding="utf-8")
    source = text.splitlines()
    out = {}
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
            out[first] = (node.name, lines_of_code(node, source))
    return out


def every_function() -> list[tuple[str, int, str, int]]:
    """``(file, line, name, lines of code)`` of every function of the package."""
    return [(str(path.relative_to(PACKAGE.parent)), line, name, size)
            for path in sorted(PACKAGE.rglob("*.py"))
            for line, (name, size) in sorted(_functions(path).items())]


def public_functions() -> dict[str, object]:
    """The functions and methods a user reaches by a public name, by that name."""
    out: dict[str, object] = {}
    for package in PUBLIC_PACKAGES:
        module = importlib.import_module(package)
        for name in getattr(module, "__all__", None) or dir(module):
            if name.startswith("_"):
                continue
            try:
                obj = getattr(module, name)
            except AttributeError:  # pragma: no cover - a name that is no longer exported
                continue
            if inspect.isclass(obj) and obj.__module__.startswith("toolkit."):
                out.update({f"{package}.{name}.{m}": f for m, f in vars(obj).items()
                            if inspect.isfunction(f) and not m.startswith("_")})
            elif inspect.isfunction(obj) and obj.__module__.startswith("toolkit."):
                out[f"{package}.{name}"] = obj
    return out


def size_of(function: object) -> int:
    """The lines of code of a function object, measured in its source file."""
    code = inspect.unwrap(function).__code__  # type: ignore[call-overload]
    return _functions(Path(code.co_filename))[code.co_firstlineno][1]


def test_the_measure_counts_code_lines_only() -> None:
    source = '''
def f(x):
    """A docstring
    of three lines.
    """
    # a comment

    y = x + 1  # a comment after code

    def g():
        return y
    return g
'''.splitlines()
    node = ast.parse("\n".join(source)).body[0]
    assert isinstance(node, ast.FunctionDef)
    assert lines_of_code(node, source) == 4
    assert size_of(size_of) == 2


def test_no_function_of_the_package_is_past_the_limit() -> None:
    functions = every_function()
    assert len(functions) > 1000
    long = [f"{path}:{line} {name} ({size} lines)" for path, line, name, size in functions
            if size > LIMIT]
    assert long == [], f"split these into named steps (at most {LIMIT} lines of code)"


@pytest.mark.parametrize("name", ["connect", "policy_states", "route_directions"])
def test_the_entry_points_are_public_and_measured(name: str) -> None:
    public = public_functions()
    assert f"toolkit.{name}" in public
    assert 0 < size_of(public[f"toolkit.{name}"]) <= PUBLIC_LIMIT


def test_no_public_function_is_past_the_public_limit() -> None:
    public = public_functions()
    assert len(public) > 100
    long = {name: size_of(f) for name, f in public.items() if size_of(f) > PUBLIC_LIMIT}
    assert long == {}, f"split these into named steps (at most {PUBLIC_LIMIT} lines of code)"
