"""One declared schema per public function: columns, dtypes, categories.

Column names are the service's field names, nested objects flattened with ``.`` and the resource
envelope's ``properties.`` prefix dropped; columns the toolkit adds are snake_case. Code builds
frames from these schemas and tests check frames against them. Each operation declares its
schema in its own family (beside the function, or in the family's ``_schemas`` module when
several of its modules share it) and names it in its record (:mod:`toolkit._core.registry`).

Column kinds: ``string``, ``category`` (documented values first, undocumented ones kept after
them), ``datetime`` (UTC), ``Int64``, ``exactint`` (64-bit identifiers, never floats), ``float``,
``boolean``, ``timedelta`` (seconds in the body), ``list``, ``object`` (nested JSON kept as is),
``secret`` (masked :class:`~toolkit._core.secrets.Secret`), ``geometry``.
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd
from pandas.api.extensions import ExtensionDtype

from toolkit._core.secretarray import SecretDtype

__all__ = ["Col", "Schema"]


@dataclass(frozen=True)
class Col:
    """A declared column.

    Parameters
    ----------
    name : str
        Column name in the frame.
    kind : str
        One of the kinds listed in the module docstring.
    path : str, optional
        Dotted path of the field in a record, when it differs from ``name``.
    categories : tuple of str
        The documented values of a ``category`` column, in order.
    ordered : bool
        Whether the categories have an order.
    secret_label : str
        What a ``secret`` column holds.
    """

    name: str
    kind: str
    path: str | None = None
    categories: tuple[str, ...] = ()
    ordered: bool = False
    secret_label: str = "secret"

    @property
    def source(self) -> tuple[str, ...]:
        """The path of keys to the value inside a record."""
        return tuple((self.path or self.name).split("."))

    def dtype(self) -> ExtensionDtype | str:
        """Return the pandas dtype this column has in a frame."""
        dtypes: dict[str, ExtensionDtype | str] = {
            "string": pd.StringDtype(),
            "category": pd.CategoricalDtype(list(self.categories), ordered=self.ordered),
            "datetime": pd.DatetimeTZDtype("ns", "UTC"),
            "Int64": pd.Int64Dtype(),
            "exactint": pd.Int64Dtype(),
            "float": "float64",
            "boolean": pd.BooleanDtype(),
            "timedelta": "timedelta64[ns]",
            "secret": SecretDtype(),
        }
        return dtypes.get(self.kind, "object")


@dataclass(frozen=True)
class Schema:
    """The columns of one function's frame."""

    name: str
    columns: tuple[Col, ...]
    geometry: str | None = None

    @property
    def names(self) -> list[str]:
        """Column names in order."""
        return [c.name for c in self.columns]

    def __getitem__(self, name: str) -> Col:
        for c in self.columns:
            if c.name == name:
                return c
        raise KeyError(name)
