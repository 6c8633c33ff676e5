"""The embedded sandbox: a real HTTP server on 127.0.0.1 serving every operation of the toolkit.

``toolkit.connect()`` with nothing configured starts one; :func:`start` and :class:`Sandbox` give
one explicitly, and ``python -m toolkit.sandbox --port N`` serves one on its own. :func:`catalog`
lists what the sandbox world holds, so you know what to query.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd

    from toolkit.sandbox.server import Sandbox

__all__ = ["Sandbox", "catalog", "start"]


def __getattr__(name: str) -> Any:
    if name == "Sandbox":
        from toolkit.sandbox.server import Sandbox

        return Sandbox
    raise AttributeError(name)


def start(**kwargs: Any) -> Sandbox:
    """Start a sandbox in a background thread (see :class:`Sandbox` for the keywords)."""
    from toolkit.sandbox.server import Sandbox

    return Sandbox(**kwargs).start()


def catalog(sandbox: Sandbox | None = None, *, seed: int | None = None) -> pd.DataFrame:
    """List what the sandbox world holds: one row per subscription, resource group, gateway...

    Parameters
    ----------
    sandbox : Sandbox, optional
        The sandbox to describe; by default the one started last in this process that is still
        serving (the one ``toolkit.connect()`` started, with nothing configured), else the world
        of ``seed`` (default 7, as a new sandbox has). The catalogue starts nothing.

    Returns
    -------
    pandas.DataFrame
        Columns ``kind``, ``subscription_id``, ``resource_group``, ``name``, ``location``,
        ``detail`` (strings).
    """
    if sandbox is None and seed is None:
        from toolkit.sandbox.server import latest_running

        sandbox = latest_running()
    if sandbox is not None:
        return sandbox.catalog()
    from toolkit.sandbox.world import World

    return World(7 if seed is None else seed).catalog()
