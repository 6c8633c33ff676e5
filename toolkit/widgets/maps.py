"""Map widgets: an autocomplete search box and a route planner.

Both are thin ipywidgets views over plain objects that can be driven from code (which is how
tests and notebooks use them):

>>> box = toolkit.widgets.autocomplete_box(coordinates=(1.52, 42.51))      # doctest: +SKIP
>>> box.search("Can")          # the suggestions frame (the list in the widget follows)
>>> box.choose(0)              # the chosen place (a one-row GeoDataFrame)

>>> planner = toolkit.widgets.route_planner(places=stops)                   # doctest: +SKIP
>>> planner.plan("Andorra la Vella", "Canillo")   # routes frame; planner.incidents too
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import pandas as pd

from toolkit._core.errors import ToolkitError, ValidationError
from toolkit._core.text import html_text

if TYPE_CHECKING:
    import geopandas as gpd
    import ipywidgets

    from toolkit.connection import Connection

logger = logging.getLogger(__name__)

#: Height of the planner's map in pixels (explicit, so that it shows in JupyterLab's output
#: area).
MAP_HEIGHT = 420

__all__ = [
    "AutocompleteBox",
    "Debouncer",
    "RoutePlanner",
    "autocomplete_box",
    "route_planner",
    "suggestion_labels",
]


def suggestion_labels(df: pd.DataFrame) -> list[str]:
    """One readable line per suggestion: the name (or address line) and where it is."""
    labels = []
    for _, row in df.iterrows():
        name = row.get("name")
        if not isinstance(name, str) or not name:
            name = row.get("address.addressLine") or row.get("address.formattedAddress") or "?"
        where = row.get("address.locality")
        district = row.get("admin_district_1")
        extra = ", ".join(str(x) for x in dict.fromkeys((where, district))
                          if isinstance(x, str) and x and x != name)
        kind = row.get("type")
        labels.append(f"{name}" + (f" — {extra}" if extra else "") +
                      (f" ({kind})" if isinstance(kind, str) else ""))
    return labels


class Debouncer:
    """Calls ``func(value)`` once input has been quiet for ``wait`` seconds.

    With ``wait=0`` the call happens at once, in the caller's thread (tests, notebooks).
    """

    def __init__(self, func: Callable[[Any], Any], wait: float = 0.3) -> None:
        self.func = func
        self.wait = wait
        self.calls = 0
        self._timer: threading.Timer | None = None
        self._lock = threading.Lock()

    def __call__(self, value: Any) -> None:
        """Call ``func(value)`` once input has been quiet for ``wait`` seconds.

        A pending call is cancelled; with ``wait=0`` the call happens at once.
        """
        with self._lock:
            if self._timer is not None:
                self._timer.cancel()
                self._timer = None
            if self.wait <= 0:
                self.calls += 1
                run_now = True
            else:
                run_now = False
                self._timer = threading.Timer(self.wait, self._fire, args=(value,))
                self._timer.daemon = True
                self._timer.start()
        if run_now:
            self.func(value)

    def _fire(self, value: Any) -> None:
        with self._lock:
            self._timer = None
            self.calls += 1
        self.func(value)

    def flush(self, timeout: float = 5.0) -> None:
        """Wait for a pending call to finish (for code that typed into the box)."""
        deadline = time.monotonic() + timeout
        while True:
            with self._lock:
                timer = self._timer
            if timer is None:
                return
            timer.join(max(0.0, deadline - time.monotonic()))
            if time.monotonic() >= deadline:
                return


class AutocompleteBox:
    """A search box that suggests places as you type (debounced) and returns the chosen one.

    Parameters
    ----------
    coordinates, bbox, country_region, result_types, result_type_groups, language
        Passed to :func:`toolkit.autocomplete` with every query.
    top : int
        Suggestions shown.
    debounce : float
        Seconds of quiet typing before a query is sent (0 sends at once).
    min_chars : int
        Shortest text that is looked up.
    on_choose : callable, optional
        Called with the chosen place (a one-row GeoDataFrame).
    connection : Connection, optional
        Defaults to the default connection.

    Attributes
    ----------
    suggestions : GeoDataFrame
        The current suggestions.
    place : GeoDataFrame or None
        The chosen place (one row).
    """

    def __init__(self, *, coordinates: Any = None, bbox: Any = None, top: int = 5,
                 debounce: float = 0.3, min_chars: int = 2, description: str = "Search",
                 on_choose: Callable[[Any], Any] | None = None,
                 connection: Connection | None = None, **options: Any) -> None:
        if coordinates is None and bbox is None:
            raise ValidationError("coordinates", None, "an autocomplete box needs coordinates "
                                  "or bbox (the service needs one of them)")
        self.options = {"coordinates": coordinates, "bbox": bbox, "top": top, **options}
        self.connection = connection
        self.min_chars = min_chars
        self.description = description
        self.on_choose = on_choose
        self.suggestions: gpd.GeoDataFrame | None = None
        self.place: gpd.GeoDataFrame | None = None
        self.error: str | None = None
        self.queries: list[str] = []
        self._debouncer = Debouncer(self._lookup, debounce)
        self._widget: ipywidgets.VBox | None = None
        self._text: Any = None
        self._list: Any = None
        self._status: Any = None
        self._updating = False

    # ------------------------------------------------------------------ logic
    def search(self, text: str) -> gpd.GeoDataFrame:
        """Look ``text`` up at once; the suggestions frame."""
        from toolkit.maps.search import autocomplete

        self.queries.append(text)
        df = autocomplete(text, **self.options, connection=self.connection)
        self.suggestions = df
        self.error = None
        self._refresh()
        return df

    def _lookup(self, text: str) -> None:
        if len(text.strip()) < self.min_chars:
            self.suggestions = None
            self._refresh()
            return
        try:
            self.search(text)
        except ToolkitError as err:  # shown in the widget, not raised into the event loop
            self.error = str(err)
            logger.info("autocomplete box: %s", err)
            self._refresh()

    def type(self, text: str) -> None:
        """Type ``text`` into the box (debounced, like a user typing)."""
        if self._text is not None:
            self._text.value = text  # the observer looks it up
        else:
            self._debouncer(text)

    def flush(self) -> None:
        """Wait for a debounced lookup to finish."""
        self._debouncer.flush()

    def choose(self, index: int = 0) -> gpd.GeoDataFrame:
        """Choose a suggestion by position; the chosen place (one row)."""
        if self.suggestions is None or not 0 <= index < len(self.suggestions):
            n = 0 if self.suggestions is None else len(self.suggestions)
            raise ValidationError("index", index, f"must pick one of the {n} suggestions")
        self.place = self.suggestions.iloc[[index]].reset_index(drop=True)
        if self._list is not None and not self._updating:
            self._updating = True
            try:
                self._list.index = index
            finally:
                self._updating = False
        if self.on_choose is not None:
            self.on_choose(self.place)
        return self.place

    @property
    def label(self) -> str | None:
        """The chosen place's label."""
        return None if self.place is None else suggestion_labels(self.place)[0]

    # ------------------------------------------------------------------ view
    def _refresh(self) -> None:
        if self._list is None:
            return
        self._updating = True
        try:
            labels = [] if self.suggestions is None else suggestion_labels(self.suggestions)
            self._list.options = labels
            self._list.index = None
            self._status.value = (f"<span style='color:#c62828'>{html_text(self.error)}"
                                  "</span>" if self.error else
                                  f"{len(labels)} suggestion{'s' if len(labels) != 1 else ''}"
                                  if self.suggestions is not None else "")
        finally:
            self._updating = False

    @property
    def widget(self) -> ipywidgets.VBox:
        """The ipywidgets view (built on first use)."""
        if self._widget is None:
            import ipywidgets as w

            self._text = w.Text(placeholder="type a place or an address", description=
                                self.description)
            # a label of its own, so that the list is named wherever focus lands on it
            self._list = w.Select(options=[], rows=5, description="Suggestions",
                                  layout=w.Layout(width="95%"))
            self._status = w.HTML()

            def on_text(change: dict[str, Any]) -> None:
                self._debouncer(change["new"])

            def on_pick(change: dict[str, Any]) -> None:
                if not self._updating and change["new"] is not None:
                    self.choose(change["new"])

            self._text.observe(on_text, names="value")
            self._list.observe(on_pick, names="index")
            self._widget = w.VBox([self._text, self._list, self._status])
            self._refresh()
        return self._widget

    def static_html(self) -> str:
        """Render what the box shows as plain HTML (the view an HTML report keeps)."""
        labels = [] if self.suggestions is None else suggestion_labels(self.suggestions)
        items = "".join(f"<li>{'<b>' if label == self.label else ''}{html_text(label)}"
                        f"{'</b>' if label == self.label else ''}</li>" for label in labels)
        head = html_text(f"{self.description}: {self.queries[-1] if self.queries else ''}")
        status = (f"<p style='color:#c62828'>{html_text(self.error)}</p>" if self.error
                  else "")
        return f"<p>{head}</p><ul>{items}</ul>{status}"

    def _repr_mimebundle_(self, **kwargs: Any) -> dict[str, Any]:
        from toolkit.widgets._static import bundle

        return bundle(self.widget, self.static_html(), **kwargs)


def autocomplete_box(*, coordinates: Any = None, bbox: Any = None, top: int = 5,
                     debounce: float = 0.3, connection: Connection | None = None,
                     **options: Any) -> AutocompleteBox:
    """Make an :class:`AutocompleteBox` (see there for the parameters)."""
    return AutocompleteBox(coordinates=coordinates, bbox=bbox, top=top, debounce=debounce,
                           connection=connection, **options)


class RoutePlanner:
    """Routes between two chosen places, with the traffic incidents along them.

    Two :class:`AutocompleteBox` pick the origin and the destination; the planner asks
    :func:`toolkit.route_directions` (main route and alternatives) and
    :func:`toolkit.traffic_incidents` around them and draws both.

    Autocomplete answers carry no coordinates (the service sends ``geometry`` null), so a chosen
    place is located from its geometry when it has one, else by name in ``places``, else by
    :func:`toolkit.geocode` (its top match, High or Medium confidence).

    Parameters
    ----------
    places : GeoDataFrame, optional
        Known places, consulted before geocoding: a ``name`` column and Point geometries
        (EPSG:4326).
    coordinates, bbox
        Where the autocomplete boxes search.
    max_route_count : int
        Routes per plan (main plus alternatives).
    optimize_route : str
        As :func:`toolkit.route_directions`.
    depart_at : datetime or str, optional
        Departure time of the plans (as :func:`toolkit.route_directions`); now when omitted.
    debounce : float
        Typing debounce of the boxes.
    interactive : bool, optional
        Show the plan on an interactive map (:func:`toolkit.explore.routes`) instead of a
        picture; by default when the ``maps`` extra (folium) is installed.
    connection : Connection, optional
        Defaults to the default connection.

    Attributes
    ----------
    routes : GeoDataFrame or None
        The last plan's routes.
    incidents : GeoDataFrame or None
        The incidents within the last plan's routes' bounds.
    map : folium.Map or None
        The last plan on an interactive map (when ``interactive``).
    figure : matplotlib Figure or None
        The last picture (when not ``interactive``, once the widget is shown).
    error : str or None
        Why the last plan asked from the widget's button failed (shown as text under it).
    """

    def __init__(self, *, places: pd.DataFrame | None = None, coordinates: Any = None,
                 bbox: Any = None, max_route_count: int = 3,
                 optimize_route: str = "fastestWithTraffic", debounce: float = 0.3,
                 interactive: bool | None = None, depart_at: Any = None,
                 connection: Connection | None = None) -> None:
        if interactive is not None and not isinstance(interactive, bool):
            raise ValidationError("interactive", interactive, "must be True, False or None")
        self.interactive = _folium_installed() if interactive is None else interactive
        if places is not None and ("name" not in places.columns or "geometry" not in
                                   places.columns):
            raise ValidationError("places", list(places.columns)[:6],
                                  "needs a name column and Point geometries")
        self.places = places
        self.connection = connection
        self.max_route_count = max_route_count
        self.optimize_route = optimize_route
        self.depart_at = depart_at
        kw = {"coordinates": coordinates, "bbox": bbox, "debounce": debounce,
              "connection": connection}
        self.origin = AutocompleteBox(description="From", **kw)
        self.destination = AutocompleteBox(description="To", **kw)
        self.routes: gpd.GeoDataFrame | None = None
        self.incidents: gpd.GeoDataFrame | None = None
        self.figure: Any = None
        self.map: Any = None
        self.error: str | None = None
        self._widget: ipywidgets.VBox | None = None
        self._view: Any = None
        self._summary: Any = None

    def locate(self, place: pd.DataFrame | str) -> tuple[float, float]:
        """Give the ``(lon, lat)`` of a chosen place (a suggestion row) or a place name."""
        if isinstance(place, pd.DataFrame):
            geom = place.geometry.iloc[0] if "geometry" in place.columns else None
            if geom is not None and not geom.is_empty:
                return float(geom.x), float(geom.y)
            name = place["name"].iloc[0] if "name" in place.columns else None
            if not isinstance(name, str):
                name = place.get("address.formattedAddress", pd.Series([None])).iloc[0]
        else:
            name = place
        if isinstance(name, str) and self.places is not None:
            hit = self.places[self.places["name"].str.casefold() == name.casefold()]
            if len(hit):
                g = hit.geometry.iloc[0]
                return float(g.x), float(g.y)
        if not isinstance(name, str):
            raise ValidationError("place", name, "has no coordinates and no name to geocode")
        from toolkit.maps.search import Places

        match = Places("place", self.connection)([name])[name]
        return match.lon, match.lat

    def plan(self, origin: Any = None, destination: Any = None) -> gpd.GeoDataFrame:
        """Plan between two places (names, suggestion rows or (lon, lat)).

        By default, the places chosen in the boxes. Returns the routes frame.
        """
        from toolkit.maps.route import route_directions
        from toolkit.maps.traffic import traffic_incidents

        ends = []
        for value, box in ((origin, self.origin), (destination, self.destination)):
            if value is None:
                if box.place is None:
                    raise ValidationError(box.description.lower(), None,
                                          "choose a place first")
                value = box.place
            if isinstance(value, tuple | list) and len(value) == 2:
                ends.append((float(value[0]), float(value[1])))
            elif isinstance(value, str):
                try:
                    ends.append(self.locate(value))
                except ValidationError:
                    box.search(value)
                    ends.append(self.locate(box.choose(0)))
            else:
                ends.append(self.locate(value))
        routes = route_directions([{"origin": ends[0], "destination": ends[1]}],
                                  max_route_count=self.max_route_count,
                                  optimize_route=self.optimize_route,
                                  depart_at=self.depart_at, connection=self.connection)
        self.routes = routes
        self.error = None
        ok = routes[~routes.geometry.is_empty]
        self.incidents = None
        if len(ok):
            w, s, e, n = ok.total_bounds
            pad = 0.002
            self.incidents = traffic_incidents((w - pad, s - pad, e + pad, n + pad),
                                               connection=self.connection)
        self._draw()
        return routes

    def summary(self) -> pd.DataFrame:
        """Compare the last plan's routes side by side.

        Gives distance, time without and with traffic, and the incidents each passes.

        Returns
        -------
        DataFrame
            One row per route (empty before a plan): ``route_index``, ``km``, ``minutes``,
            ``minutes_in_traffic``, ``incidents_on_route``.
        """
        if self.routes is None:
            return pd.DataFrame()
        rows = []
        for _, r in self.routes.iterrows():
            near = 0
            if self.incidents is not None and not r.geometry.is_empty:
                near = int(sum(r.geometry.distance(p) < 0.0003 for p in self.incidents.geometry))
            rows.append({"route_index": r["route_index"],
                         "km": round(float(r["distanceInMeters"]) / 1000, 1),
                         "minutes": round(float(r["durationInSeconds"]) / 60, 1),
                         "minutes_in_traffic": round(float(r["durationTrafficInSeconds"]) / 60,
                                                     1),
                         "incidents_on_route": near})
        return pd.DataFrame(rows)

    def _draw(self) -> None:
        if self.interactive:
            self._draw_map()
            return
        if self._view is None or self.routes is None:
            return
        import io

        import matplotlib.pyplot as plt

        from toolkit.plot.description import describe
        from toolkit.plot.maps import routes as plot_routes
        from toolkit.widgets._static import png_tag

        with plt.ioff():
            fig, ax = plt.subplots(figsize=(7, 6))
            plot_routes(self.routes, ax=ax, incidents=self.incidents, title="Planned routes")
        self.figure = fig
        buffer = io.BytesIO()
        fig.savefig(buffer, format="png", dpi=80)
        plt.close(fig)
        # an HTML widget, not an Output: what it shows is its value, which every front end
        # (and nbclient without widget state) handles alike
        self._view.value = png_tag(buffer.getvalue(), describe(fig) or "planned routes")
        self._summary.value = self.summary().to_html(index=False)

    def _draw_map(self) -> None:
        from toolkit.explore import routes as explore_routes
        from toolkit.explore._common import has_geometry

        assert self.routes is not None
        if not has_geometry(self.routes.geometry).any():
            self.map = None
        else:
            self.map = explore_routes(self.routes, incidents=self.incidents, height=MAP_HEIGHT)
        if self._view is not None:
            from toolkit.widgets._static import map_iframe

            self._view.value = "" if self.map is None else map_iframe(self.map, MAP_HEIGHT)
            self._summary.value = self.summary().to_html(index=False)

    @property
    def widget(self) -> ipywidgets.VBox:
        """The ipywidgets view (built on first use)."""
        if self._widget is None:
            import ipywidgets as w

            button = w.Button(description="Plan route", button_style="primary")
            self._view = w.HTML(layout=w.Layout(width="100%", min_height=f"{MAP_HEIGHT}px"))
            self._summary = w.HTML()

            def on_click(_: Any) -> None:
                try:
                    self.plan()
                except ToolkitError as err:
                    self.error = str(err)
                    self._summary.value = (f"<span style='color:#c62828'>{html_text(err)}"
                                           "</span>")

            button.on_click(on_click)
            self._widget = w.VBox([w.HBox([self.origin.widget, self.destination.widget]),
                                   button, self._summary, self._view])
            if self.routes is not None:  # planned before the view was built: show that plan
                self._draw()
        return self._widget

    def static_html(self) -> str:
        """Render what the planner shows as plain HTML (the view an HTML report keeps).

        It holds the places, the summary and the map (or the picture).
        """
        ends = " → ".join(html_text(b.label or "?") for b in (self.origin, self.destination))
        failed = (f"<p style='color:#c62828'>{html_text(self.error)}</p>" if self.error
                  else "")
        if self.routes is None:
            return f"<p>route planner: {ends} (no plan yet)</p>{failed}"
        out = [f"<p><b>route planner</b>: {ends}</p>",
               self.summary().to_html(index=False)]
        if self.map is not None:
            from toolkit.widgets._static import map_iframe

            out.append(map_iframe(self.map, MAP_HEIGHT))
        elif self.figure is not None:
            import io

            from toolkit.plot.description import describe
            from toolkit.widgets._static import png_tag

            buffer = io.BytesIO()
            self.figure.savefig(buffer, format="png", dpi=80)
            out.append(png_tag(buffer.getvalue(), describe(self.figure) or "planned routes"))
        return "".join(out)

    def _repr_mimebundle_(self, **kwargs: Any) -> dict[str, Any]:
        from toolkit.widgets._static import bundle

        return bundle(self.widget, self.static_html(), **kwargs)


def route_planner(*, places: pd.DataFrame | None = None, coordinates: Any = None,
                  bbox: Any = None, max_route_count: int = 3,
                  optimize_route: str = "fastestWithTraffic", debounce: float = 0.3,
                  interactive: bool | None = None, depart_at: Any = None,
                  connection: Connection | None = None) -> RoutePlanner:
    """Make a :class:`RoutePlanner` (see there for the parameters)."""
    return RoutePlanner(places=places, coordinates=coordinates, bbox=bbox,
                        max_route_count=max_route_count, optimize_route=optimize_route,
                        debounce=debounce, interactive=interactive, depart_at=depart_at,
                        connection=connection)


def _folium_installed() -> bool:
    import importlib.util

    return importlib.util.find_spec("folium") is not None
