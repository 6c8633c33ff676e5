"""The sandbox's Resource Graph: its tables of the world, their KQL engine, quota and route.

``tables`` (the world as ``resources``, ``resourcecontainers`` and ``policyresources``),
``engine`` (duckdb-kql on an embedded DuckDB, per scope), ``quota`` (the user quota) and
``handlers`` (the query route).
"""
