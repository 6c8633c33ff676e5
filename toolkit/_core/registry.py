"""Keep one record per public operation, declared by the operation's own module.

A record says what the core needs to know about an operation: the schema of its frame, how long
the response cache keeps its answers, which :mod:`toolkit.plot` and :mod:`toolkit.explore`
helpers draw its frame (``df.toolkit``), and how to rebuild its result parser from a
continuation token. The module that defines the function declares the record beside it::

    BACKEND_HEALTH_RECORD = register(OperationRecord(
        "backend_health", schema=BACKEND_HEALTH, plot="backend_health", resume=_resume_parser))

so the record exists once the module is imported, and the core never names a module above it.
Some lookups happen before the operation's module has been imported (the accessor on a frame
read back from a file, a continuation token resumed in a new kernel): the package installs a
loader with :func:`install` that imports the modules defining the operations, and
:func:`record` and :func:`records` call it once when a name is not yet known.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from toolkit._core.schemas import Schema

logger = logging.getLogger(__name__)

__all__ = ["OperationRecord", "UnknownOperationError", "find", "helper", "install", "record",
           "records", "register", "requesting", "schema_for"]

#: The kinds of helper a record can name, as :func:`helper` resolves them.
HELPER_KINDS = ("plot", "explore")


@dataclass(frozen=True)
class OperationRecord:
    """What the core knows about one operation.

    Parameters
    ----------
    name : str
        The operation, as the public function is named and ``df.attrs["operation"]`` says.
    schema : Schema, optional
        The declared columns of the operation's frame (:func:`schema_for`).
    lifetime : int, optional
        Seconds the response cache keeps an answer of this read; ``None`` never caches it
        (credentials, creations and updates).
    plot : str, optional
        The name of the :mod:`toolkit.plot` helper that draws the frame (``df.toolkit.plot()``).
    explore : str, optional
        The name of the :mod:`toolkit.explore` helper that maps the frame
        (``df.toolkit.explore()``).
    input_first : bool
        Whether those helpers take the operation's input before the frame
        (``snapped_trace(raw, snapped)``).
    resume : callable, optional
        ``resume(connection, operation, **args) -> parse``: the result parser of a long-running
        operation resumed from its continuation token.
    derived_from : str, optional
        The operation whose frame this one is made from, without a request of its own
        (``compliance_summary`` from ``policy_states``); ``None`` for an operation that asks a
        service (:func:`requesting`).
    """

    name: str
    schema: Schema | None = None
    lifetime: int | None = None
    plot: str | None = None
    explore: str | None = None
    input_first: bool = False
    resume: Callable[..., Any] | None = None
    derived_from: str | None = None

    def __post_init__(self) -> None:
        if not self.name.isidentifier():
            raise ValueError(f"an operation's name is a function name, not {self.name!r}")
        if self.derived_from is not None and (not self.derived_from.isidentifier()
                                              or self.derived_from == self.name):
            raise ValueError(f"{self.name}: derived_from names another operation, not "
                             f"{self.derived_from!r}")
        if self.lifetime is not None and (isinstance(self.lifetime, bool) or
                                          not isinstance(self.lifetime, int) or
                                          self.lifetime <= 0):
            raise ValueError(f"{self.name}: lifetime must be a positive number of seconds or "
                             f"None, not {self.lifetime!r}")


class UnknownOperationError(KeyError):
    """No operation of that name is declared (a ``KeyError`` whose message lists the known ones).

    Parameters
    ----------
    name : str
        The name asked for.
    known : iterable of str
        The names that are declared.
    """

    def __init__(self, name: object, known: Iterable[str]) -> None:
        self.name = name
        super().__init__(f"no operation named {name!r} is declared; the operations are "
                         f"{', '.join(sorted(known)) or 'none'}")

    def __str__(self) -> str:
        return str(self.args[0])


_records: dict[str, OperationRecord] = {}
_lock = threading.Lock()
#: Held while the loader imports the modules, so that a lookup in another thread waits for them
#: (re-entrant: the thread loading may look up a record meanwhile).
_load_lock = threading.RLock()
_loader: Callable[[], object] | None = None
_helpers: Callable[[str, str], Callable[..., Any]] | None = None
_loaded = False
_loading = False


def register(record: OperationRecord) -> OperationRecord:
    """Declare an operation's record; the module defining the function calls it at import.

    Parameters
    ----------
    record : OperationRecord
        The record. Declaring the same record again is harmless.

    Returns
    -------
    OperationRecord
        ``record``, so that the module can keep it under a name.

    Raises
    ------
    ValueError
        Another record of the same name is declared already.
    """
    with _lock:
        known = _records.get(record.name)
        if known is not None and known != record:
            raise ValueError(f"operation {record.name!r} is declared twice, with different "
                             "records; each operation has one record, beside its function")
        _records[record.name] = record
    return record


def install(load: Callable[[], object], helpers: Callable[[str, str], Callable[..., Any]]
            ) -> None:
    """Give the registry the package's ways to find what the core may not name.

    Parameters
    ----------
    load : callable
        ``load()`` imports every module that declares operations (called at most once, when a
        lookup meets a name not yet declared).
    helpers : callable
        ``helpers(kind, name)``: the helper ``name`` of the package ``kind`` (``"plot"`` or
        ``"explore"``).
    """
    global _loader, _helpers
    _loader, _helpers = load, helpers


def _load() -> None:
    global _loaded, _loading
    if _loaded or _loader is None:
        return
    with _load_lock:
        if _loaded or _loading:
            return
        _loading = True
        try:
            logger.debug("importing the modules that declare operations")
            _loader()
            _loaded = True
        finally:
            _loading = False


def find(name: str | None) -> OperationRecord | None:
    """Return the record of an operation whose module is imported, or ``None``.

    Parameters
    ----------
    name : str or None
        The operation. A request is sent only by its operation's function, whose module has
        declared the record already, so this lookup never imports anything.

    Returns
    -------
    OperationRecord or None
        Its record, or ``None`` when no record of that name is declared.
    """
    return _records.get(name) if isinstance(name, str) else None


def record(name: str) -> OperationRecord:
    """Return the record of an operation, importing the operations' modules if need be.

    Parameters
    ----------
    name : str
        The operation.

    Returns
    -------
    OperationRecord
        Its record.

    Raises
    ------
    UnknownOperationError
        No operation of that name is declared (a ``KeyError``).
    """
    found = find(name)
    if found is None:
        _load()
        found = find(name)
    if found is None:
        raise UnknownOperationError(name, _records)
    return found


def records() -> Mapping[str, OperationRecord]:
    """Return every declared record, after importing the operations' modules.

    Returns
    -------
    Mapping
        A read-only ``{name: OperationRecord}``, sorted by name.
    """
    _load()
    with _lock:
        return MappingProxyType(dict(sorted(_records.items())))


def requesting() -> Mapping[str, OperationRecord]:
    """Return the records of the operations that send requests (not derived from another's frame).

    Every list of operations that ask a service (the sandbox's routes, the test campaigns, the
    reference's tables) is this one, or is checked against it.

    Returns
    -------
    Mapping
        A read-only ``{name: OperationRecord}``, sorted by name.
    """
    return MappingProxyType({name: rec for name, rec in records().items()
                             if rec.derived_from is None})


def helper(kind: str, name: str) -> Callable[..., Any]:
    """Return the helper a record names, from the package that holds it.

    Parameters
    ----------
    kind : str
        ``"plot"`` or ``"explore"``.
    name : str
        The helper's public name in that package.

    Returns
    -------
    callable
        The helper.

    Raises
    ------
    LookupError
        ``kind`` is not a kind of helper, or no package installed a way to find helpers.
    """
    if kind not in HELPER_KINDS:
        raise LookupError(f"a helper is one of {', '.join(HELPER_KINDS)}, not {kind!r}")
    if _helpers is None:
        raise LookupError("no package installed its helpers (toolkit installs them on import)")
    return _helpers(kind, name)


def schema_for(function: str) -> Schema:
    """Return the declared schema of a public function's frame.

    Parameters
    ----------
    function : str
        The function (the operation's name).

    Returns
    -------
    Schema
        The schema its operation's record declares.

    Raises
    ------
    KeyError
        No operation of that name, or it declares no schema.
    """
    schema = record(function).schema
    if schema is None:
        raise KeyError(f"operation {function!r} declares no schema")
    return schema
