"""One list of operations: the registry. Every other list that names operations is checked
against it here, and a failure says which operation lacks what, and where to add it.

The registry (``toolkit._core.registry.records()``) holds one record per public operation;
``requesting()`` the operations that send requests (a record with ``derived_from`` is made from
another operation's frame). The lists checked:

- ``tests/frames_of_every_function.py`` ``CALLS``: one call of every operation;
- ``tests/properties/test_bad_input.py`` ``VALID`` and ``RULES``: a valid call and the argument
  rules of every operation that sends requests;
- ``tests/properties/test_hostile_responses.py`` ``SCENARIOS`` (or ``ELSEWHERE``, with why);
- ``tests/reliability/cases.py`` ``CASES``: the fault campaign;
- the sandbox: every route an operation's call uses is served, described from a specification
  excerpt (``toolkit/sandbox/openapi.py`` ``_SOURCES``) or named in ``WITHOUT_EXCERPT``, with
  example path values that exist and an example body;
- the pinned api-version of every operation: the newest of a tuple in its family's
  ``toolkit/_spec`` module;
- the documentation: the table of ``docs/operations.md`` and the README's table.
"""

from __future__ import annotations

import importlib
import inspect
import re
from pathlib import Path
from typing import Any

import pytest

import toolkit
from toolkit._core.registry import records, requesting

ROOT = Path(__file__).resolve().parents[1]


def _missing(names: set[str], where: str, what: str) -> str:
    return (f"{', '.join(sorted(names))}: no entry in {where}; add {what} there, keyed by the "
            "operation's name")


def _extra(names: set[str], where: str) -> str:
    return (f"{', '.join(sorted(names))}: in {where}, but no operation of that name is in the "
            "registry (a renamed or removed operation? its record is declared beside its "
            "function with register(OperationRecord(...)))")


def _agree(listed: set[str], expected: set[str], where: str, what: str) -> None:
    assert not expected - listed, _missing(expected - listed, where, what)
    assert not listed - expected, _extra(listed - expected, where)


def test_the_registry_is_the_packages_operations() -> None:
    # the check of every other list rests on this one: tests/_core/test_registry.py holds the
    # full check (one record per public function of a family, beside its function)
    assert len(requesting()) >= 29 and set(requesting()) < set(records())
    assert all(callable(getattr(toolkit, name)) for name in records())


def test_every_operation_has_a_call_for_the_frames_of_every_function() -> None:
    from tests.frames_of_every_function import CALLS

    _agree(set(CALLS), set(records()), "CALLS of tests/frames_of_every_function.py",
           "one call in the sandbox world, `name: lambda w: toolkit.name(..., **w.kw)`")


def test_every_requesting_operation_has_a_valid_call_and_argument_rules() -> None:
    from tests.properties.test_bad_input import RULES, VALID

    _agree(set(VALID), set(requesting()), "VALID of tests/properties/test_bad_input.py",
           "a valid call's keyword arguments")
    _agree({r.function for r in RULES}, set(requesting()),
           "RULES of tests/properties/test_bad_input.py",
           "a Rule(name, parameter, bad values) for each argument rule (at least api_version's)")


def test_every_requesting_operation_meets_hostile_answers() -> None:
    from tests.properties.test_hostile_responses import ELSEWHERE, SCENARIOS

    assert not set(ELSEWHERE) & {s.operation for s in SCENARIOS}
    _agree({s.operation for s in SCENARIOS} | set(ELSEWHERE), set(requesting()),
           "SCENARIOS of tests/properties/test_hostile_responses.py",
           "a Scenario(name, method, path, real answer, call, schema) replaying its real example")


def test_every_requesting_operation_is_in_the_reliability_campaign() -> None:
    from tests.reliability.cases import CASES

    _agree(set(CASES), set(requesting()), "CASES of tests/reliability/cases.py",
           "a Case(name, path regex, call) and its traits (paged, lro, idempotent, key)")


@pytest.fixture(scope="module")
def used_routes(sandbox: Any) -> dict[str, set[str]]:
    """The sandbox routes each operation's call of CALLS uses."""
    import tempfile

    from tests.frames_of_every_function import CALLS, World

    conn = toolkit.connect(sandbox=sandbox, progress=False)
    conn.sleep = lambda seconds: None
    out: dict[str, set[str]] = {}
    try:
        with tempfile.TemporaryDirectory(prefix="operation-lists-") as store:
            world = World(sandbox, conn, store)
            for name in requesting():
                with sandbox.recording() as log:
                    CALLS[name](world)
                out[name] = {r.route for r in log if r.route}
    finally:
        conn.close()
    return out


def test_every_requesting_operation_is_served_and_described_by_the_sandbox(
        sandbox: Any, used_routes: dict[str, set[str]]) -> None:
    from toolkit.sandbox.openapi import _SOURCES, WITHOUT_EXCERPT, build_document

    unserved = {name for name, routes in used_routes.items() if not routes}
    assert not unserved, (f"{', '.join(sorted(unserved))}: no sandbox route answered its call; "
                          "register the route in its family's toolkit/sandbox/<family>/ module")
    used = set().union(*used_routes.values())
    users = {r: ", ".join(sorted(n for n, rs in used_routes.items() if r in rs)) for r in used}
    undescribed = {f"{r} (used by {users[r]})" for r in used - set(_SOURCES) - set(WITHOUT_EXCERPT)}
    assert not undescribed, (
        f"{'; '.join(sorted(undescribed))}: add the route's specification excerpt to "
        "toolkit/sandbox/openapi_data/ and a _Source in _SOURCES of toolkit/sandbox/openapi.py, "
        "or name the route in WITHOUT_EXCERPT there with the reason")
    assert not set(_SOURCES) & set(WITHOUT_EXCERPT)
    doc = build_document(sandbox)
    routes = {r.name: r for r in sandbox.router.routes}
    for name in sorted(used):
        route = routes[name]
        if route.api_versions is None:
            continue  # an operation URL the service hands out: no value exists beforehand
        op = doc["paths"][route.pattern][route.method.lower()]
        bare = [p["name"] for p in op["parameters"] if p["in"] == "path" and "example" not in p]
        assert not bare, (f"route {name}: path parameters {bare} have no example; add values "
                          "that exist in the sandbox's world to _examples() of "
                          "toolkit/sandbox/openapi.py")
        body = op.get("requestBody", {}).get("content", {})
        assert all("example" in media for media in body.values()), (
            f"route {name}: its request body has no example; add one the sandbox accepts to "
            "_body_examples() of toolkit/sandbox/openapi.py")


def test_every_requesting_operation_pins_the_newest_version_its_spec_module_holds() -> None:
    wrong = {}
    for name in requesting():
        function = getattr(toolkit, name)
        parameter = inspect.signature(function).parameters.get("api_version")
        if parameter is None:
            continue  # it reads through another operation (snapshot_policy_states)
        family = function.__module__.split(".")[1]
        spec = importlib.import_module(f"toolkit._spec.{family}")
        newest = {getattr(spec, k)[0] for k in getattr(spec, "__all__", ())
                  if k.endswith("API_VERSIONS")}
        if parameter.default not in newest:
            wrong[name] = parameter.default
    assert wrong == {}, (
        f"{wrong}: api_version= defaults to the newest version of its service, the first of a "
        "*_API_VERSIONS tuple in toolkit/_spec/<family>.py (add the tuple there, newest first, "
        "and check it against the specification in tests/_spec/test_<family>.py)")


def _table_names(text: str, header: str, pattern: str) -> set[str]:
    """The function names ``pattern`` finds in the markdown table under the row ``header``."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(header))
    rows = []
    for line in lines[start + 2:]:
        if not line.startswith("|"):
            break
        rows.append(line)
    return set(re.findall(pattern, "\n".join(rows)))


def test_the_documentation_tables_name_every_operation() -> None:
    operations = set(records())
    page = _table_names((ROOT / "docs" / "operations.md").read_text("utf-8"),
                        "| family | function |", r"`(\w+)\(")
    not_operations = {"write_kubeconfig"}  # a public function that makes no frame
    _agree(page - not_operations, operations, "the table of docs/operations.md",
           "a row with the signature as the code has it and what one row of its frame is")
    readme = _table_names((ROOT / "README.md").read_text("utf-8"), "| family | functions |",
                          r"`(\w+)`")
    assert not operations - readme, _missing(operations - readme, "the README's table",
                                             "the function in its family's row")


def test_every_requesting_operation_keeps_the_signature_order() -> None:
    """Identifiers positional (required, or ``None`` for an optional scope), everything else
    keyword-only, ``api_version=`` the last but one and ``connection=None`` last."""
    wrong = {}
    for name in requesting():
        params = list(inspect.signature(getattr(toolkit, name)).parameters.values())
        problems = []
        last = params[-1]
        if last.name != "connection" or last.kind is not last.KEYWORD_ONLY or \
                last.default is not None:
            problems.append("connection=None, keyword-only, comes last")
        names = [p.name for p in params]
        if "api_version" in names and names.index("api_version") != len(names) - 2:
            problems.append("api_version= comes just before connection=")
        for p in params:
            if p.kind is p.POSITIONAL_OR_KEYWORD and p.default not in (p.empty, None):
                problems.append(f"{p.name} has a default: keyword-only (after *)")
            if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD, p.POSITIONAL_ONLY):
                problems.append(f"{p.name}: no *args, **kwargs or positional-only parameters")
        if problems:
            wrong[name] = problems
    assert wrong == {}
