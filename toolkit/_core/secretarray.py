"""The ``secret`` column type, masked for every writer.

A pandas extension array of :class:`~toolkit._core.secrets.Secret` values that every writer sees
masked.

A frame's credential column (a kubeconfig, a password) has dtype ``secret``. Its cells are
``Secret`` values (``df["value"].iloc[0].reveal()`` gives one), shown as the mask. Arrow, and so
``df.to_parquet()``, ``pyarrow.Table.from_pandas`` and every library writing through Arrow, gets
the mask through ``__arrow_array__``: a plain export never holds a credential.
:func:`toolkit.to_parquet` writes the values only when asked (``reveal=True``).
"""

from __future__ import annotations

import builtins
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd
from pandas.api.extensions import ExtensionArray, ExtensionDtype, register_extension_dtype, take

from toolkit._core.secrets import MASK, Secret

__all__ = ["SecretArray", "SecretDtype", "secret_array"]


@register_extension_dtype
class SecretDtype(ExtensionDtype):
    """The dtype of a column of :class:`Secret` values (``"secret"``)."""

    name = "secret"
    type = Secret
    kind = "O"
    na_value = None

    def __repr__(self) -> str:
        return "SecretDtype()"

    @classmethod
    def construct_array_type(cls) -> builtins.type[SecretArray]:
        """Return the array type of this dtype."""
        return SecretArray


def _cell(value: Any, label: str | None) -> Secret | None:
    """Make a cell: a Secret or None.

    A string or bytes is wrapped only when a ``label`` is given (the toolkit building a column),
    never when pandas casts other values back.
    """
    if value is None or value is pd.NA or (isinstance(value, float) and value != value):
        return None
    if isinstance(value, Secret):
        return value
    if label is not None and isinstance(value, str | bytes):
        return Secret(value, label) if value else None
    raise TypeError(f"a secret column holds Secret values, not {type(value).__name__}")


class SecretArray(ExtensionArray):
    """An array of :class:`Secret` values (or ``None``), masked for every writer.

    Parameters
    ----------
    values : numpy.ndarray
        An object array of ``Secret`` values and ``None``.
    """

    def __init__(self, values: np.ndarray) -> None:
        self._data = values

    # -- construction
    @classmethod
    def _from_sequence(cls, scalars: Any, *, dtype: Any = None,
                       copy: bool = False) -> SecretArray:
        out = np.empty(len(scalars), dtype=object)
        out[:] = [_cell(v, None) for v in scalars]
        return cls(out)

    @classmethod
    def _from_factorized(cls, values: Any, original: SecretArray) -> SecretArray:
        return cls(np.asarray(values, dtype=object))

    @classmethod
    def _concat_same_type(cls, to_concat: Sequence[SecretArray]) -> SecretArray:
        return cls(np.concatenate([a._data for a in to_concat]))

    # -- the array protocol
    @property
    def dtype(self) -> SecretDtype:
        return SecretDtype()

    @property
    def nbytes(self) -> int:
        return int(self._data.nbytes)

    def __len__(self) -> int:
        return len(self._data)

    def __getitem__(self, item: Any) -> Any:
        if isinstance(item, int | np.integer):
            return self._data[item]
        item = pd.api.indexers.check_array_indexer(self, item)
        return type(self)(self._data[item])

    def __setitem__(self, key: Any, value: Any) -> None:
        if isinstance(value, SecretArray):
            value = value._data
        elif pd.api.types.is_list_like(value) and not isinstance(value, str | bytes):
            value = self._from_sequence(list(value))._data
        else:
            value = _cell(value, None)
        key = pd.api.indexers.check_array_indexer(self, key)
        self._data[key] = value

    def __eq__(self, other: Any) -> Any:
        values = other._data if isinstance(other, SecretArray) else other
        if pd.api.types.is_list_like(values) and not isinstance(values, str | bytes):
            return np.array([a == b for a, b in zip(self._data, values, strict=True)],
                            dtype=bool)
        return np.array([a == values for a in self._data], dtype=bool)

    def isna(self) -> np.ndarray:
        return np.array([v is None for v in self._data], dtype=bool)

    def take(self, indices: Any, *, allow_fill: bool = False,
             fill_value: Any = None) -> SecretArray:
        taken = take(self._data, indices, allow_fill=allow_fill, fill_value=None)
        return type(self)(np.asarray(taken, dtype=object))

    def copy(self) -> SecretArray:
        return type(self)(self._data.copy())

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        return self._data if dtype in (None, object) else self._data.astype(dtype)

    def _formatter(self, boxed: bool = False) -> Any:
        return str  # the mask, in every repr and HTML table

    def _values_for_json(self) -> np.ndarray:
        out = np.empty(len(self._data), dtype=object)
        out[:] = [None if v is None else MASK for v in self._data]
        return out

    # -- writers
    def __arrow_array__(self, type: Any = None) -> Any:
        """Give the mask for every value (Arrow, Parquet, and anything writing through them)."""
        import pyarrow as pa

        return pa.array([None if v is None else MASK for v in self._data], type=pa.string())


def secret_array(values: Sequence[Any], label: str = "secret") -> SecretArray:
    """Make a :class:`SecretArray` of ``values``.

    Strings or bytes are wrapped as ``Secret`` with ``label``; empty and missing values are
    ``None``.
    """
    out = np.empty(len(values), dtype=object)
    out[:] = [_cell(v, label) for v in values]
    return SecretArray(out)
