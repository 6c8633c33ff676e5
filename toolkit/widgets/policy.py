"""A compliance explorer: choose a scope, a window, a state and a grouping; see table and chart.

The scope is a subscription and resource group, the window a time window, the state a compliance
state; the explorer shows the summary table and the chart.

It works against any connection: the scopes to offer come from the caller (``scopes=``: pairs
of subscription id and resource group, or a frame of them), and the end of the window defaults
to the newest evaluation the service holds for the scope (asked through
:func:`toolkit.policy_states` itself), so nothing depends on what kind of service answers.

The logic is the plain function :func:`compliance_view` (one query, one summary);
:class:`ComplianceExplorer` calls it and can be driven without a browser
(``explorer.select(window_days=7, state="NonCompliant", by="resourceType")`` returns the
:class:`ComplianceView` it shows), which is how notebooks under test and the tests use it.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import timedelta
from typing import TYPE_CHECKING, Any

import pandas as pd

from toolkit._core.errors import ValidationError
from toolkit._core.text import html_text
from toolkit._spec.arm import COMPLIANCE_STATES

if TYPE_CHECKING:
    from toolkit.connection import Connection

logger = logging.getLogger(__name__)

__all__ = ["GROUPINGS", "ComplianceExplorer", "ComplianceView", "compliance_explorer",
           "compliance_view", "newest_evaluation", "scope_table"]

#: What the explorer can group by: label -> column.
GROUPINGS = {
    "assignment": "policyAssignmentName",
    "definition": "policyDefinitionName",
    "resource type": "resourceType",
    "location": "resourceLocation",
    "category": "policyDefinitionCategory",
}
WINDOWS = (1, 7, 30, 60)
#: The state dropdown's value for "all states" (a dropdown whose value is None shows no label).
ALL_STATES = "all"


@dataclass
class ComplianceView:
    """What the explorer shows: the records it read and their summary."""

    subscription_id: str
    resource_group: str
    window_days: int
    state: str | None
    by: str
    records: pd.DataFrame
    summary: pd.DataFrame


def scope_table(scopes: Any = None) -> pd.DataFrame:
    """Build the scopes to offer, as a frame.

    Parameters
    ----------
    scopes : DataFrame or sequence of (str, str), optional
        A frame with ``subscription_id`` and ``resource_group`` columns (and optionally
        ``label``), or pairs of subscription id and resource group.

    Returns
    -------
    pandas.DataFrame
        ``label`` (string: the given label, else ``subscription / resource group``),
        ``subscription_id``, ``resource_group`` (string), one row per distinct scope.
    """
    cols = ["label", "subscription_id", "resource_group"]
    if scopes is None:
        return pd.DataFrame({c: pd.Series(dtype="string") for c in cols})
    if isinstance(scopes, pd.DataFrame):
        missing = [c for c in ("subscription_id", "resource_group") if c not in scopes.columns]
        if missing:
            raise ValidationError("scopes", list(scopes.columns)[:6],
                                  f"a frame of scopes needs the columns {', '.join(missing)}")
        pairs = list(zip(scopes["subscription_id"], scopes["resource_group"], strict=True))
        labels = (list(scopes["label"]) if "label" in scopes.columns
                  else [f"{s} / {g}" for s, g in pairs])
    else:
        try:
            pairs = [(s, g) for s, g in scopes]
        except (TypeError, ValueError):
            raise ValidationError("scopes", scopes, "must be a frame or pairs of subscription "
                                                    "id and resource group") from None
        labels = [f"{s} / {g}" for s, g in pairs]
    for i, (s, g) in enumerate(pairs):
        if not isinstance(s, str) or not isinstance(g, str):
            raise ValidationError(f"scopes[{i}]", (s, g), "must be two strings: a subscription "
                                                          "id and a resource group")
    out = pd.DataFrame({"label": labels, "subscription_id": [s for s, _ in pairs],
                        "resource_group": [g for _, g in pairs]}).astype("string")
    return out.drop_duplicates(["subscription_id", "resource_group"]).reset_index(drop=True)


def newest_evaluation(subscription_id: str, resource_group: str, *,
                      connection: Connection | None = None) -> pd.Timestamp:
    """Find the time of the newest evaluation the service holds for a scope.

    Over its default window (the last day by its own clock): its "now" as far as the data go (this
    machine's current time when the window holds none).

    Returns
    -------
    pandas.Timestamp
        Timezone-aware (UTC).
    """
    from toolkit.arm.policy import policy_states

    found = policy_states(subscription_id, resource_group,  # the service's default last day
                          apply="aggregate(timestamp with max as newest)",
                          connection=connection)
    value = found["newest"].iloc[0] if len(found) and "newest" in found.columns else None
    newest = pd.Timestamp(value) if value is not None and not pd.isna(value) else None
    if newest is None:
        return pd.Timestamp.now(tz="UTC")
    return newest.tz_localize("UTC") if newest.tz is None else newest.tz_convert("UTC")


def compliance_view(subscription_id: str, resource_group: str, *, window_days: int = 1,
                    state: str | None = None, by: str = "assignment", end: Any = None,
                    connection: Connection | None = None) -> ComplianceView:
    """Summarise the newest states of a resource group in a window by a grouping.

    Parameters
    ----------
    subscription_id, resource_group : str
        The scope.
    window_days : int
        The window: this many days before ``end`` (1 to 60).
    state : str, optional
        Keep only records in this compliance state (filtered by the service).
    by : str
        A key of :data:`GROUPINGS` or a column name.
    end : datetime-like, optional
        End of the window (default: :func:`newest_evaluation` of the scope).
    connection : Connection, optional
        Defaults to the default connection.

    Returns
    -------
    ComplianceView
        ``records`` (the :func:`toolkit.policy_states` frame) and ``summary`` (the
        :func:`toolkit.compliance_summary` frame for the grouping).
    """
    from toolkit.arm.compliance import compliance_summary
    from toolkit.arm.policy import policy_states
    from toolkit.connection import get_connection

    if isinstance(window_days, bool) or not isinstance(window_days, int) or \
            not 1 <= window_days <= 60:
        raise ValidationError("window_days", window_days, "must be a whole number of days from "
                                                          "1 to 60")
    if state is not None and state not in COMPLIANCE_STATES:
        raise ValidationError("state", state, f"must be one of {', '.join(COMPLIANCE_STATES)}")
    column = GROUPINGS.get(by, by)
    if column not in GROUPINGS.values():
        raise ValidationError("by", by, f"must be one of {', '.join(GROUPINGS)}")
    conn = get_connection(connection)
    if end is None:
        end = newest_evaluation(subscription_id, resource_group, connection=conn)
    end = pd.Timestamp(end)
    end = end.tz_localize("UTC") if end.tz is None else end
    records = policy_states(subscription_id, resource_group, start=end - timedelta(
        days=window_days), end=end, filter=f"complianceState eq '{state}'" if state else None,
        connection=conn)
    summary = compliance_summary(records, by=column)
    return ComplianceView(subscription_id, resource_group, window_days, state, column, records,
                          summary)


class ComplianceExplorer:
    """The explorer widget (``.widget`` to display; ``.select(...)`` to drive it).

    Parameters
    ----------
    subscription_id, resource_group : str, optional
        The first scope shown (default: the first of ``scopes``).
    scopes : DataFrame or sequence of (str, str), optional
        The scopes to offer (see :func:`scope_table`); the first scope is offered in any case.
    end : datetime-like, optional
        End of the time window (default: the newest evaluation of the scope, at each refresh).
    connection : Connection, optional
        Defaults to the default connection.
    """

    def __init__(self, subscription_id: str | None = None, resource_group: str | None = None,
                 *, scopes: Any = None, end: Any = None,
                 connection: Connection | None = None) -> None:
        import ipywidgets as w

        from toolkit.connection import get_connection

        self._held = False
        self.connection = get_connection(connection)
        self.end = end
        self.scopes = scope_table(scopes)
        options = [(row.label, (row.subscription_id, row.resource_group))
                   for row in self.scopes.itertuples()]
        if subscription_id and resource_group:
            pair = (subscription_id, resource_group)
            if pair not in [o[1] for o in options]:
                options.insert(0, (f"{subscription_id} / {resource_group}", pair))
        if not options:
            raise ValidationError("scopes", scopes, "give the scopes to offer, or "
                                                    "subscription_id and resource_group")
        first = (subscription_id, resource_group) if subscription_id and resource_group else \
            options[0][1]
        self._scope = w.Dropdown(options=options, value=first, description="scope")
        self._window = w.Dropdown(options=[(f"{d} day{'s' if d > 1 else ''}", d)
                                           for d in WINDOWS], value=1, description="window")
        self._state = w.Dropdown(options=[("all states", ALL_STATES)] +
                                 [(s, s) for s in reversed(COMPLIANCE_STATES)],
                                 value=ALL_STATES, description="state")
        self._by = w.Dropdown(options=list(GROUPINGS), value="assignment",
                              description="group by")
        self._table = w.HTML()
        # the chart as an <img> with its description as alt text (an Image widget has no alt)
        self._chart = w.HTML()
        #: The chart shown, as PNG bytes, and its description.
        self.chart_png, self.chart_description = b"", ""
        self._status = w.HTML()
        for control in (self._scope, self._window, self._state, self._by):
            control.observe(lambda _change: self._refresh(), names="value")
        self.widget = w.VBox([w.HBox([self._scope, self._window]),
                              w.HBox([self._state, self._by]), self._status, self._table,
                              self._chart])
        self.view: ComplianceView | None = None
        self._refresh()

    def select(self, *, scope: tuple[str, str] | None = None, window_days: int | None = None,
               state: Any = ..., by: str | None = None) -> ComplianceView:
        """Change the choices (those given) and return the view shown."""
        with self._hold():
            if scope is not None:
                if scope not in [o[1] for o in self._scope.options]:
                    self._scope.options = [*self._scope.options, (f"{scope[0]} / {scope[1]}",
                                                                  scope)]
                self._scope.value = scope
            if window_days is not None:
                if window_days not in WINDOWS:
                    raise ValidationError("window_days", window_days,
                                          f"must be one of {WINDOWS}")
                self._window.value = window_days
            if state is not ...:
                self._state.value = ALL_STATES if state is None else state
            if by is not None:
                self._by.value = by
        self._refresh()
        assert self.view is not None
        return self.view

    @property
    def frame(self) -> pd.DataFrame:
        """The summary shown."""
        return self.view.summary if self.view is not None else pd.DataFrame()

    @contextmanager
    def _hold(self) -> Iterator[None]:
        """Change several controls with one refresh (after the block), not one per change."""
        self._held = True
        try:
            yield
        finally:
            self._held = False

    def _refresh(self) -> None:
        if self._held:
            return
        sub, rg = self._scope.value
        try:
            state = None if self._state.value == ALL_STATES else self._state.value
            view = compliance_view(sub, rg, window_days=self._window.value,
                                   state=state, by=self._by.value,
                                   end=self.end, connection=self.connection)
        except Exception as err:  # shown in the widget, not raised into the event loop
            self._status.value = html_text(f"error: {type(err).__name__}: {err}")
            logger.info("compliance explorer: %s", err)
            return
        self.view = view
        self._status.value = (f"{len(view.records):,} records, "
                              f"{view.records['resourceId'].nunique():,} resources")
        self._show(view)

    def _show(self, view: ComplianceView) -> None:
        import io

        import matplotlib.pyplot as plt

        from toolkit.plot._common import root_figure
        from toolkit.plot.description import describe
        from toolkit.plot.policy import compliance_by
        from toolkit.widgets._static import png_tag

        self._table.value = view.summary.to_html(index=False, na_rep="")
        if not len(view.summary):
            self.chart_png, self.chart_description = b"", ""
            self._chart.value = ""  # no picture without a chart
            return
        ax = compliance_by(view.summary, by=view.by, limit=15)
        buffer = io.BytesIO()
        figure = root_figure(ax)
        figure.savefig(buffer, format="png", dpi=80)
        plt.close(figure)
        self.chart_png, self.chart_description = buffer.getvalue(), describe(figure)
        self._chart.value = png_tag(self.chart_png, self.chart_description)

    def labels(self) -> dict[str, str]:
        """Give the label each dropdown shows now (what a reader sees in the controls)."""
        return {name: str(control.label) for name, control in (
            ("scope", self._scope), ("window", self._window), ("state", self._state),
            ("group by", self._by))}

    def static_html(self) -> str:
        """Render what the explorer shows as plain HTML: choices, counts, table and chart.

        This is the view an HTML report keeps.
        """
        choices = ", ".join(f"{k}: {html_text(v)}" for k, v in self.labels().items())
        return "".join([f"<p><b>compliance explorer</b> ({choices})</p>",
                        f"<p>{self._status.value}</p>", self._table.value,
                        self._chart.value])

    def _repr_mimebundle_(self, **kwargs: Any) -> dict[str, Any]:
        from toolkit.widgets._static import bundle

        return bundle(self.widget, self.static_html(), **kwargs)


def compliance_explorer(subscription_id: str | None = None, resource_group: str | None = None,
                        *, scopes: Any = None, end: Any = None,
                        connection: Connection | None = None) -> ComplianceExplorer:
    """Create a :class:`ComplianceExplorer` (display it, or drive it with ``.select``)."""
    return ComplianceExplorer(subscription_id, resource_group, scopes=scopes, end=end,
                              connection=connection)
