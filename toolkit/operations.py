"""Long-running operations that survive a restart: finishing one from its continuation token."""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal, overload

from toolkit._core.continuation import decode_token, resume_parser
from toolkit._core.errors import ValidationError
from toolkit._core.polling import Operation, restore_operation
from toolkit._core.validate import check_timeout
from toolkit.connection import get_connection

if TYPE_CHECKING:
    import pandas as pd

    from toolkit.connection import Connection

__all__ = ["resume_operation"]


@overload
def resume_operation(token: str, *, wait: Literal[True] = ..., timeout: float | None = ...,
                     connection: Connection | None = ...) -> pd.DataFrame: ...
@overload
def resume_operation(token: str, *, wait: Literal[False], timeout: float | None = ...,
                     connection: Connection | None = ...) -> Operation[pd.DataFrame]: ...
@overload
def resume_operation(token: str, *, wait: bool = ..., timeout: float | None = ...,
                     connection: Connection | None = ...
                     ) -> pd.DataFrame | Operation[pd.DataFrame]: ...
def resume_operation(token: str, *, wait: bool = True, timeout: float | None = None,
                     connection: Connection | None = None
                     ) -> pd.DataFrame | Operation[pd.DataFrame]:
    """Finish a long-running operation started elsewhere, from its continuation token.

    ``op.continuation_token`` of an operation started with ``wait=False`` (or carried by an
    :class:`~toolkit.OperationTimeoutError`) is a plain string: keep it in a file or a notebook
    cell, and in a new kernel ``toolkit.resume_operation(token)`` polls the operation to its end
    and returns its frame, as the function that started it would have.

    Parameters
    ----------
    token : str
        ``Operation.continuation_token``.
    wait : bool
        ``True`` waits for the end and returns the result; ``False`` returns the
        :class:`~toolkit.Operation` (or :class:`~toolkit.ItemOperation`) handle.
    timeout : float, optional
        Seconds to wait at most; then :class:`~toolkit.OperationTimeoutError`.
    connection : Connection, optional
        The connection to poll with (the default one when omitted). The token's URLs must be
        ones the connection trusts for the operation's service family.

    Returns
    -------
    pandas.DataFrame or Operation
        The frame of the function that started the operation (its columns are listed there).

    Raises
    ------
    ValidationError
        The token is not one, is damaged, or names an address the connection does not trust;
        nothing is sent.
    """
    state = decode_token(token)
    if not isinstance(wait, bool):
        raise ValidationError("wait", wait, "must be True or False")
    check_timeout(timeout)
    conn = get_connection(connection)
    factory = resume_parser(state)
    op: Operation[pd.DataFrame] = restore_operation(
        conn.pipeline(state["family"]), state,
        lambda operation: factory(conn, operation, **state["args"]))
    return op.result(timeout) if wait else op
