"""Pictures of resource-management frames."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

import pandas as pd

from toolkit._core.text import plot_text
from toolkit.arm._schemas import HEALTH_ORDER, SERVER_KEY_TYPES
from toolkit.plot._common import (
    HEALTH_COLORS,
    integer_ticks,
    marks_sandbox,
    new_axes,
    require_columns,
)
from toolkit.plot.description import counted, listed, sentences, set_description

if TYPE_CHECKING:  # matplotlib is imported when a helper draws, not with the package
    from matplotlib.axes import Axes

__all__ = ["backend_health"]


@marks_sandbox
def backend_health(df: pd.DataFrame, *, ax: Axes | None = None, title: str | None = None) -> Axes:
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
        ax.barh([plot_text(p) for p in counts.index], values, left=left,
                color=HEALTH_COLORS.get(state, "#6d4c41"), label=plot_text(state),
                edgecolor="white")
        for y, (v, x0) in enumerate(zip(values, left, strict=True)):
            if v:
                ax.text(x0 + v / 2, y, f"{int(v)}", ha="center", va="center", color="white",
                        fontsize=9, fontweight="bold")
        left = left + values
    ax.set_xlabel("backend servers (count, each at its worst health)")
    ax.set_ylabel("backend pool")
    ax.legend(title="health", loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)
    ax.set_title(plot_text(title) if title else "Backend health by pool")
    ax.spines[["top", "right"]].set_visible(False)
    set_description(ax, _health_text(ax.get_title(), counts.iloc[::-1], _gateway_of(df)))
    return ax


def _gateway_of(df: pd.DataFrame) -> str | None:
    """Give the gateway's name from the frame's provenance (the address it was read from)."""
    found = re.search(r"/applicationGateways/([^/]+)", str(df.attrs.get("endpoint") or ""),
                      re.IGNORECASE)
    return found.group(1) if found else None


def _health_text(title: str, counts: pd.DataFrame, gateway: str | None) -> str:
    """Describe the health chart: the servers in each health, in all and per pool."""
    def states(row: pd.Series) -> str:
        return ", ".join(f"{int(v):,} {str(s).lower()}" for s, v in row.items() if v) or "none"

    total = counts.sum(axis=0)
    pools = [f"{pool} {states(row)}" for pool, row in counts.iterrows()]
    head = f"{title} (gateway {gateway})" if gateway else title
    return sentences(f"{head}: {counted(total.sum(), 'backend server')}: {states(total)}",
                     f"Per pool: {listed(pools, 8, 'more pools')}")


#: Encryption posture of a server, from its protector, with the colour each is drawn in.
ENCRYPTION_POSTURES = {
    "service-managed key": "#9e9e9e",
    "vault key, pinned version": "#ef6c00",
    "vault key, versionless": "#1e88e5",
    "vault key, auto-rotated": "#2e7d32",
}


def encryption_posture_of(df: pd.DataFrame) -> pd.Series:
    """Classify each protector row's posture (the keys of :data:`ENCRYPTION_POSTURES`).

    The result is an ordered category.
    """
    require_columns(df, ["serverKeyType", "serverKeyName", "autoRotationEnabled"],
                    "plot.encryption_posture")
    names = list(ENCRYPTION_POSTURES)
    out = []
    for key_type, key_name, auto in zip(df["serverKeyType"].astype("string"),
                                        df["serverKeyName"].astype("string"),
                                        df["autoRotationEnabled"], strict=True):
        if not isinstance(key_type, str) or key_type not in SERVER_KEY_TYPES[1:]:
            out.append(names[0])
        elif auto is True or (auto is not pd.NA and bool(auto)):
            out.append(names[3])
        elif isinstance(key_name, str) and key_name.count("_") >= 2:
            out.append(names[1])
        else:
            out.append(names[2])
    return pd.Series(pd.Categorical(out, categories=names, ordered=True), index=df.index,
                     name="posture")


@marks_sandbox
def encryption_posture(df: pd.DataFrame, *, by: str = "resource_group", ax: Axes | None = None,
                       title: str | None = None) -> Axes:
    """Servers by encryption posture: stacked bars per resource group (or another column).

    Parameters
    ----------
    df : pandas.DataFrame
        Protector rows of :func:`toolkit.encryption_protector` /
        :func:`toolkit.update_encryption_protector` (several servers concatenated); needs
        ``id``, ``serverKeyType``, ``serverKeyName``, ``autoRotationEnabled``.
    by : str
        ``"resource_group"`` (read from ``id``) or a column of ``df`` to group the bars by.
    ax : matplotlib Axes, optional
        Where to draw; a new figure when omitted.
    title : str, optional
        Axes title.

    Returns
    -------
    matplotlib.axes.Axes
    """
    require_columns(df, ["id"] + ([] if by == "resource_group" else [by]),
                    "plot.encryption_posture")
    posture = encryption_posture_of(df)
    if by == "resource_group":
        groups = df["id"].astype("string").str.extract(r"/resourceGroups/([^/]+)/",
                                                       expand=False)
    else:
        groups = df[by].astype("string")
    counts = (pd.DataFrame({"group": groups, "posture": posture})
              .groupby(["group", "posture"], observed=False).size()
              .unstack("posture", fill_value=0))
    order = list(dict.fromkeys(groups.dropna()))
    counts = counts.reindex(order[::-1]).fillna(0)
    ax = new_axes(ax, figsize=(8, max(2.5, 0.45 * len(order) + 1.5)))
    left = pd.Series(0.0, index=counts.index)
    for state in counts.columns:
        values = counts[state]
        if not values.any():
            continue
        ax.barh([plot_text(g) for g in counts.index], values, left=left,
                color=ENCRYPTION_POSTURES[str(state)], label=str(state), edgecolor="white")
        left = left + values
    ax.set_xlabel("servers (count)")
    ax.set_ylabel(plot_text(by.replace("_", " ")))
    integer_ticks(ax.xaxis)
    ax.legend(title="encryption protector", loc="upper left", bbox_to_anchor=(1.01, 1.0),
              frameon=False)
    ax.set_title(plot_text(title) if title else "Encryption protector posture")
    ax.spines[["top", "right"]].set_visible(False)
    set_description(ax, _posture_text(ax.get_title(), counts.iloc[::-1], by))
    return ax


def _posture_text(title: str, counts: pd.DataFrame, by: str) -> str:
    """Describe the posture chart: the servers in each posture, in all and per group."""
    def postures(row: pd.Series) -> str:
        return ", ".join(f"{int(v):,} {s}" for s, v in row.items() if v) or "none"

    total = counts.sum(axis=0)
    groups = [f"{group} {postures(row)}" for group, row in counts.iterrows()]
    return sentences(f"{title}: {counted(total.sum(), 'server')} in "
                     f"{counted(len(counts), by.replace('_', ' '))}: {postures(total)}",
                     f"Per {by.replace('_', ' ')}: {listed(groups, 8)}")
