"""Run Resource Graph's KQL over the sandbox world: duckdb-kql on an embedded DuckDB.

The world's tables (:mod:`~toolkit.sandbox.arm.resourcegraph.tables`) are loaded once into a
DuckDB database of the sandbox's own, in the schema ``world`` (as ``all_<table>``, names no
query sees); ``all_policyresources`` is a view
that builds each policy state's ``properties`` from columns of codes joined to the fields of its
resource and policy. A query runs on a cursor of its own, where temporary views named after the
tables hold only the rows of the query's scope (its subscriptions, or those below its management
groups), so the query sees what the service would show that caller. duckdb-kql translates the
KQL into DuckDB's SQL: the operators and functions it covers are the sandbox's (its support
matrix; the documentation's sample queries of inventory and compliance among them); what it
does not cover is refused with its reason, as the service refuses what it cannot run. External
access (files, URLs) is off for the database.

duckdb-kql (with DuckDB) is an optional dependency (``pip install "cloudops-frames[kql]"``);
without it the route answers that it is missing. A result is kept as the Arrow table DuckDB
gives (DuckDB's rows where pyarrow is missing), and only the page asked for becomes Python
values.
"""

from __future__ import annotations

import datetime as dt
import decimal
import re
import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import orjson

from toolkit._spec.arm import POLICY_FIELDS, RESOURCE_FIELDS, RESOURCE_GRAPH_TABLES
from toolkit.sandbox.arm.resourcegraph.tables import DYNAMIC, STATE_WEIGHTS, Tables

if TYPE_CHECKING:
    import duckdb

__all__ = ["Engine", "KqlFailure", "Result", "available"]

#: A query that names no table reads ``resources`` (as the service's first versions did).
_OPERATOR_FIRST = re.compile(
    r"^\s*(where|project|project-away|extend|summarize|order|sort|take|limit|top|count|"
    r"distinct|mv-expand|mvexpand|join|parse)\b", re.IGNORECASE)


#: The tables' names outside quoted text, in any case (the service's are case-insensitive;
#: duckdb-kql's schema lookup for ``join`` is not).
_TABLE_NAME = re.compile(
    r"('(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\")|\b(?:" + "|".join(RESOURCE_GRAPH_TABLES)
    + r")\b", re.IGNORECASE)


class KqlFailure(Exception):
    """A query the engine cannot run: its kind (``ParserFailure``...) and the engine's words."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind
        self.message = message


@dataclass
class Result:
    """A query's result: the service's column descriptors, and its rows.

    The rows are kept as DuckDB gave them (an Arrow table), made JSON-ready a page at a time.
    """

    columns: list[dict[str, str]]
    table: Any  # pyarrow.Table; or a list of tuples where pyarrow is missing; None: no columns

    @property
    def total(self) -> int:
        """Count the result's rows."""
        if self.table is None:
            return 0
        return len(self.table) if isinstance(self.table, list) else int(self.table.num_rows)

    def page(self, offset: int, size: int) -> list[list[Any]]:
        """Give the rows ``offset`` to ``offset + size``, as the service writes them."""
        if self.table is None or offset >= self.total:
            return []
        kinds = [c["type"] for c in self.columns]
        if isinstance(self.table, list):
            return [[_plain(v, k) for v, k in zip(row, kinds, strict=True)]
                    for row in self.table[offset:offset + size]]
        part = self.table.slice(offset, size)
        values = [[_plain(v, k) for v in part.column(i).to_pylist()]
                  for i, k in enumerate(kinds)]
        return [list(row) for row in zip(*values, strict=True)]

    @property
    def rows(self) -> list[list[Any]]:
        """Give every row (for small results: facets, tests)."""
        return self.page(0, self.total)


def available() -> bool:
    """Tell whether duckdb-kql (and DuckDB) can be imported."""
    try:
        import duckdb  # noqa: F401
        import duckdb_kql  # noqa: F401
    except ImportError:
        return False
    return True


def _column_type(duck_type: str) -> str:
    """Give the service's column type of a DuckDB type."""
    t = duck_type.upper()
    if t == "VARCHAR":
        return "string"
    if t in ("BOOLEAN",):
        return "boolean"
    if re.fullmatch(r"U?(TINYINT|SMALLINT|INTEGER|BIGINT|HUGEINT)", t):
        return "integer"
    if t in ("DOUBLE", "FLOAT", "REAL") or t.startswith("DECIMAL"):
        return "number"
    if t.startswith(("TIMESTAMP", "DATE")):
        return "datetime"
    if t == "JSON" or t.startswith(("STRUCT", "MAP")) or t.endswith("]"):
        return "object"
    return "string"


def _plain(value: Any, kind: str) -> Any:
    """Write a DuckDB value as the service writes it in JSON."""
    if value is None:
        return None
    if kind == "object":
        if isinstance(value, str):
            try:
                return orjson.loads(value)
            except orjson.JSONDecodeError:
                return value
        return _nested(value)
    if kind == "datetime" and isinstance(value, dt.datetime | dt.date):
        if isinstance(value, dt.datetime):
            value = value if value.tzinfo is None else value.astimezone(dt.UTC).replace(
                tzinfo=None)
            return value.isoformat(timespec="milliseconds") + "Z"
        return value.isoformat() + "T00:00:00.000Z"
    if isinstance(value, decimal.Decimal):
        return float(value)
    if isinstance(value, dt.timedelta):
        return str(value)
    return value


def _fetch(relation: Any) -> Any:
    """Run a relation into an Arrow table (a list of tuples where pyarrow is missing)."""
    try:
        import pyarrow  # noqa: F401
    except ImportError:
        return relation.fetchall()
    table = relation.arrow()
    return table.read_all() if hasattr(table, "read_all") else table


def _nested(value: Any) -> Any:
    if isinstance(value, dict):
        return {str(k): _nested(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_nested(v) for v in value]
    if isinstance(value, dt.datetime):
        return value.isoformat() + ("Z" if value.tzinfo is None else "")
    if isinstance(value, decimal.Decimal):
        return float(value)
    return value


def _json_frame(frame: Any) -> Any:
    """Write a table's dynamic columns as JSON text, for DuckDB to read as ``JSON``."""
    out = frame.copy()
    for col in DYNAMIC:
        out[col] = [None if v is None else orjson.dumps(v).decode() for v in out[col]]
    return out


class Engine:
    """The sandbox's Resource Graph database: its tables loaded, queries run per scope.

    Parameters
    ----------
    tables : Tables
        The world's tables.
    """

    def __init__(self, tables: Tables) -> None:
        import duckdb_kql

        self.tables = tables
        self._lock = threading.Lock()
        con = duckdb_kql.connect()
        con.execute("CREATE SCHEMA world")
        dynamic = ", ".join(f'CAST("{c}" AS JSON) AS "{c}"' for c in DYNAMIC)
        for name, frame in (("resources", tables.resources),
                            ("resourcecontainers", tables.containers)):
            con.register("incoming", _json_frame(frame))
            con.execute(f"CREATE TABLE world.all_{name} AS SELECT * EXCLUDE "
                        f"({', '.join(DYNAMIC)}), {dynamic} FROM incoming")
            con.unregister("incoming")
        states = tables.states
        con.register("incoming", states)
        con.execute("CREATE TABLE world.states AS SELECT * FROM incoming")
        con.unregister("incoming")
        res = tables.resource_fields.copy()
        res.insert(0, "idx", range(len(res)))
        con.register("incoming", res)
        con.execute("CREATE TABLE world.res AS SELECT * FROM incoming")
        con.unregister("incoming")
        pol = tables.policy_fields.copy()
        pol.insert(0, "idx", range(len(pol)))
        con.register("incoming", pol)
        con.execute("CREATE TABLE world.pol AS SELECT * FROM incoming")
        con.unregister("incoming")
        weights = " ".join(f"WHEN '{k}' THEN {v}" for k, v in STATE_WEIGHTS.items())
        fields = ["timestamp := s.timestamp",
                  *[f'"{f}" := r."{f}"' for f in RESOURCE_FIELDS],
                  *[f'"{f}" := p."{f}"' for f in POLICY_FIELDS],
                  "complianceState := s.complianceState",
                  f"stateWeight := CASE s.complianceState {weights} ELSE 0 END"]
        con.execute(f"""
            CREATE VIEW world.all_policyresources AS
            SELECT s.id, s.name, s.type, s.tenantId, '' AS kind, '' AS location,
                   s.resourceGroup, s.subscriptionId, '' AS managedBy,
                   CAST(NULL AS JSON) AS sku, CAST(NULL AS JSON) AS plan,
                   struct_pack({', '.join(fields)}) AS properties,
                   CAST(NULL AS JSON) AS tags, CAST(NULL AS JSON) AS identity,
                   CAST(NULL AS JSON) AS zones, CAST(NULL AS JSON) AS extendedLocation
            FROM world.states s JOIN world.res r ON r.idx = s.res
                 JOIN world.pol p ON p.idx = s.pol""")
        # the columns of each table, as the queries see them (``join`` and ``union`` need them)
        self._schema: dict[str, list[str]] = {}
        for table in RESOURCE_GRAPH_TABLES:
            names = [r[0] for r in con.execute(
                "SELECT column_name FROM information_schema.columns WHERE table_schema = 'world' "
                "AND table_name = ? ORDER BY ordinal_position", [f"all_{table}"]).fetchall()]
            self._schema[table] = names
        # KQL that reads files or URLs (externaldata) stays inside the sandbox's own world
        con.execute("SET enable_external_access = false")
        self._con: duckdb.DuckDBPyConnection = con

    def run(self, query: str, subscriptions: list[str] | None,
            groups: list[str] | None) -> Result:
        """Run ``query`` over the rows of a scope.

        Parameters
        ----------
        query : str
            The KQL.
        subscriptions : list of str, optional
            The subscriptions whose rows the query sees; ``None``: every subscription.
        groups : list of str, optional
            The management groups (and their subscriptions) the query sees, when the scope is
            one or more groups; ``None`` otherwise.

        Returns
        -------
        Result
            Columns and rows.

        Raises
        ------
        KqlFailure
            A query the engine cannot parse, bind or run.
        """
        import duckdb
        import duckdb_kql

        with self._lock:
            cursor = self._con.cursor()
        try:
            for table in RESOURCE_GRAPH_TABLES:
                where = self._where(table, subscriptions, groups) or "TRUE"
                cursor.execute(f"CREATE TEMP VIEW {table} AS SELECT * FROM world.all_{table} "
                               f"WHERE {where}")
            text = f"resources | {query}" if _OPERATOR_FIRST.match(query) else query
            text = _TABLE_NAME.sub(lambda m: m.group(0) if m.group(1) else m.group(0).lower(),
                                   text)
            try:
                sql = duckdb_kql.to_sql(text, schema=self._schema, allow_write=False)
                cursor.execute("SET TimeZone='UTC'")
                relation = cursor.sql(str(sql))
                if relation is None:
                    return Result([], None)
                kinds = [_column_type(str(t)) for t in relation.types]
                table = _fetch(relation)
            except duckdb_kql.KqlSyntaxError as err:
                raise KqlFailure("ParserFailure", str(err)) from None
            except duckdb_kql.KqlUnsupportedError as err:
                raise KqlFailure("UnsupportedOperator", str(err)) from None
            except duckdb_kql.KqlError as err:
                raise KqlFailure("InvalidQuery", str(err)) from None
            except duckdb.Error as err:
                message = str(err).split("\n")[0]
                raise KqlFailure("InvalidQuery", message) from None
            columns = [{"name": n, "type": k} for n, k in zip(relation.columns, kinds,
                                                                strict=True)]
            return Result(columns, table)
        finally:
            cursor.close()

    def _where(self, table: str, subscriptions: list[str] | None,
               groups: list[str] | None) -> str:
        """Give the condition that keeps a table's rows of the scope (empty: every row)."""
        if subscriptions is None and groups is None:
            return ""
        subs = subscriptions or []
        if groups is not None:
            low = {g.lower() for g in groups}
            subs = [s for s, above in self.tables.ancestors.items()
                    if low & {a.lower() for a in above}]
        listed = ", ".join("'" + s.lower().replace("'", "''") + "'" for s in subs) or "NULL"
        condition = f"lower(subscriptionId) IN ({listed})"
        if table == "resourcecontainers" and groups is not None:
            # the groups asked and every group below them
            asked = {g.lower() for g in groups}
            below = set()
            for name in self.tables.parents:
                step: str | None = name
                while step is not None:
                    if step in asked:
                        below.add(name)
                        break
                    step = self.tables.parents.get(step)
            names = ", ".join("'" + n.replace("'", "''") + "'" for n in sorted(below))
            condition += f" OR (subscriptionId = '' AND lower(name) IN ({names}))"
        return condition
