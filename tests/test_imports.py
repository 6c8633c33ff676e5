"""The shape of the package: no import cycle among toolkit's modules, at import time or at any
depth (an import in a function body or a type-checking block names a module all the same), the
layers of DESIGN.md §2 (``_spec`` imports nothing of the toolkit, ``_core`` nothing above it), and
nothing outside the sandbox imports it or reaches into it but ``connection.py``, which starts it."""

from __future__ import annotations

import ast
from pathlib import Path

import toolkit

PACKAGE = Path(toolkit.__file__).parent
#: The one module outside the sandbox allowed to import it: ``connect()`` starts it.
SANDBOX_STARTER = "toolkit.connection"


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {_module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or \
        (isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _from_base(node: ast.ImportFrom, package: str) -> str:
    """The module a ``from ... import`` statement reads from, relative levels resolved."""
    base = node.module or ""
    if node.level:
        anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
        base = ".".join([*anchor, base] if base else anchor)
    return base


def _imports(module: str, *, at_import_time: bool) -> set[str]:
    """Modules of toolkit that ``module`` imports: at import time only (module level, outside
    ``if TYPE_CHECKING``), or anywhere (function bodies and type-checking blocks too)."""
    path = MODULES[module]
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found: set[str] = set()

    def visit(nodes: list[ast.stmt]) -> None:
        for node in nodes:
            if isinstance(node, ast.Import):
                found.update(a.name for a in node.names)
            elif isinstance(node, ast.ImportFrom):
                base = _from_base(node, package)
                found.add(base)
                found.update(f"{base}.{a.name}" for a in node.names)
            elif isinstance(node, ast.If) and at_import_time and _is_type_checking(node):
                visit(node.orelse)
            elif at_import_time and isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef |
                                               ast.Lambda):
                continue
            elif at_import_time:
                for field in ("body", "orelse", "handlers", "finalbody"):
                    visit([n for n in getattr(node, field, []) if isinstance(n, ast.stmt)])
            else:
                visit([n for n in ast.walk(node) if isinstance(n, ast.stmt) and n is not node])

    visit(tree.body)
    out = set()
    for name in found:
        if name in MODULES and name != module:
            out.add(name)
            # importing a.b.c runs the packages a and a.b first
            parts = name.split(".")
            out.update(".".join(parts[:i]) for i in range(1, len(parts))
                       if ".".join(parts[:i]) in MODULES and ".".join(parts[:i]) != module)
    return out


def _named(module: str) -> set[str]:
    """Modules of toolkit that an import statement of ``module`` names, at any depth.

    Every ``import`` and ``from ... import`` counts, in function bodies and ``if TYPE_CHECKING``
    blocks too; ``from a import b`` names the module ``a.b`` when there is one, else ``a``.
    The packages Python runs first (importing ``a.b`` runs ``a``) are the import system's, not
    an edge of the module's own.
    """
    path = MODULES[module]
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = _from_base(node, package)
            found.update(f"{base}.{a.name}" if f"{base}.{a.name}" in MODULES else base
                         for a in node.names)
    return {name for name in found if name in MODULES and name != module}


#: What each low layer may import of the toolkit (DESIGN.md §2): the facts of the services import
#: nothing of it; the core imports only itself, the facts, the shipped data and the version.
LAYERS = {
    "toolkit._spec": ("toolkit._spec",),
    "toolkit._version": (),
    "toolkit._core": ("toolkit._core", "toolkit._spec", "toolkit._data", "toolkit._version"),
}


def _in(module: str, prefix: str) -> bool:
    return module == prefix or module.startswith(prefix + ".")


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[list[str]] = []
    counter = [0]

    def strong(v: str) -> None:
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in graph[v]:
            if w not in index:
                strong(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                out.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            strong(v)
    return out


def test_the_walk_sees_the_package() -> None:
    assert {"toolkit.connection", "toolkit._core.pipeline", "toolkit.sandbox.server",
            "toolkit._spec.maps", "toolkit.sandbox.maps.roads.routing"} <= set(MODULES)
    assert "toolkit._core.errors" in _imports("toolkit._core.paging", at_import_time=True)


def test_no_import_cycle() -> None:
    graph = {m: _imports(m, at_import_time=True) for m in MODULES}
    assert _cycles(graph) == []


def test_no_import_cycle_at_any_depth() -> None:
    graph = {m: _named(m) for m in MODULES}
    assert _cycles(graph) == []


def test_the_walk_sees_imports_at_any_depth() -> None:
    # a function-level import and a type-checking one count; a package run first does not
    assert "toolkit.connection" in _named("toolkit.arm.policy")
    assert "toolkit.sandbox.server" in _named("toolkit.sandbox")
    assert "toolkit.plot._common" in _named("toolkit.plot.arm")
    assert "toolkit.plot" not in _named("toolkit.plot.arm")


def test_each_low_layer_imports_only_what_is_below_it() -> None:
    offenders = {}
    for layer, allowed in LAYERS.items():
        for module in (m for m in MODULES if _in(m, layer)):
            bad = sorted(i for i in _named(module) if not any(_in(i, a) for a in allowed))
            if bad:
                offenders[module] = bad
    assert offenders == {}


def test_the_cycle_finder_finds_cycles() -> None:
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []


def test_only_the_connection_imports_the_sandbox() -> None:
    outside = [m for m in MODULES if not m.startswith("toolkit.sandbox")]
    offenders = {m: sorted(i for i in _named(m) | _imports(m, at_import_time=False)
                           if _in(i, "toolkit.sandbox"))
                 for m in outside if m != SANDBOX_STARTER}
    assert {m: i for m, i in offenders.items() if i} == {}
    assert any(_in(i, "toolkit.sandbox") for i in _named(SANDBOX_STARTER))


def test_nothing_outside_the_sandbox_reaches_into_a_running_one() -> None:
    """``connection.sandbox`` is the connection's business: plots, widgets and functions work
    against any service, so they never call into the sandbox a connection may hold."""
    reaching = []
    for module, path in MODULES.items():
        if module.startswith("toolkit.sandbox") or module == SANDBOX_STARTER:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Attribute) and \
                    node.value.attr == "sandbox":
                reaching.append(f"{module}:{node.lineno} .sandbox.{node.attr}")
    assert reaching == []
