"""Pictures of resource-management frames."""

from __future__ import annotations

from typing import Any

import pandas as pd

from toolkit._core.schemas import HEALTH_ORDER
from toolkit.plot._common import HEALTH_COLORS, new_axes, require_columns

__all__ = ["backend_health"]


def backend_health(df: pd.DataFrame, *, ax: Any = None, title: str | None = None) -> Any:
    """Backend servers by pool, as stacked bars coloured by health.

    Parameters
    ----------
    df : pandas.DataFrame
        The frame :func:`toolkit.backend_health` returns (columns ``backendAddressPool.name``,
        ``address``, ``health``). A server checked through several HTTP settings counts once,
        with its worst health.
    ax : matplotlib Axes, optional
        Where to draw; a new figure when omitted.
    title : str, optional
        Axes title.

    Returns
    -------
    matplotlib.axes.Axes
    """
    require_columns(df, ["backendAddressPool.name", "address", "health"], "plot.backend_health")
    health = df["health"].astype(pd.CategoricalDtype(
        list(HEALTH_ORDER) + [c for c in df["health"].cat.categories if c not in HEALTH_ORDER]
        if isinstance(df["health"].dtype, pd.CategoricalDtype) else list(HEALTH_ORDER),
        ordered=True))
    servers = pd.DataFrame({"pool": df["backendAddressPool.name"].astype("string"),
                            "address": df["address"], "health": health})
    worst = servers.groupby(["pool", "address"], observed=True, sort=False)["health"].max()
    counts = (worst.reset_index().groupby(["pool", "health"], observed=False).size()
              .unstack("health", fill_value=0))
    pools = list(dict.fromkeys(servers["pool"].dropna()))
    counts = counts.reindex(pools[::-1]).fillna(0)
    ax = new_axes(ax, figsize=(8, max(2.5, 0.5 * len(pools) + 1.5)))
    left = pd.Series(0.0, index=counts.index)
    for state in counts.columns:
        values = counts[state]
        if not values.any():
            continue
        ax.barh(counts.index, values, left=left, color=HEALTH_COLORS.get(state, "#6d4c41"),
                label=str(state), edgecolor="white")
        for y, (v, x0) in enumerate(zip(values, left, strict=True)):
            if v:
                ax.text(x0 + v / 2, y, f"{int(v)}", ha="center", va="center", color="white",
                        fontsize=9, fontweight="bold")
        left = left + values
    ax.set_xlabel("backend servers")
    ax.set_ylabel("backend pool")
    ax.legend(title="health", loc="lower right", frameon=False)
    ax.set_title(title or "Backend health by pool")
    ax.spines[["top", "right"]].set_visible(False)
    return ax
