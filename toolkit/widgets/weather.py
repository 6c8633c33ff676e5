"""An air-quality explorer: pick a place, see the current air, the week ahead and the alerts.

The place is picked by name (through autocomplete) or by coordinates; the explorer shows the current
air, the week ahead and any severe weather alerts.

The logic is in plain functions (:func:`find_places`, :func:`place_weather`) that the widget
calls; :class:`AirQualityExplorer` can be driven without a browser (``explorer.select("Ordino")``
or ``explorer.select((1.533, 42.556))``, longitude first as everywhere in the toolkit, returns
the :class:`PlaceWeather` it shows), which is how notebooks under test and the tests use it.

Autocomplete answers carry no coordinates (the service sends a null geometry), so a suggestion
is placed by :func:`toolkit.geocode` (the service's geocoding: the top match of the suggestion's
name or formatted address, near where the explorer looks), or by a gazetteer the caller gives
(``places=``: ``name``, ``lon``, ``lat``). Nothing here looks inside the sandbox: the widget works
the same against a real service.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import pandas as pd

from toolkit._core.errors import ToolkitError, ValidationError
from toolkit._core.geo import to_point
from toolkit._core.text import html_text

if TYPE_CHECKING:
    import geopandas as gpd

    from toolkit.connection import Connection

logger = logging.getLogger(__name__)

__all__ = ["AirQualityExplorer", "PlaceWeather", "air_quality_explorer", "find_places",
           "place_weather"]

#: Where suggestions are ranked from when nothing else is known (Andorra la Vella), (lon, lat).
DEFAULT_NEAR = (1.5212, 42.5069)
#: Height of the explorer's map in pixels (explicit, so that it shows in JupyterLab's output
#: area whatever the width of the box around it).
MAP_HEIGHT = 380


def _known(places: pd.DataFrame | None) -> dict[str, tuple[float, float]]:
    """Index a caller's gazetteer by lower-cased name: ``(lon, lat)``."""
    if places is None:
        return {}
    return {str(n).casefold(): (float(o), float(a)) for n, o, a in
            zip(places["name"], places["lon"], places["lat"], strict=True)}


def find_places(text: str, *, near: Any = DEFAULT_NEAR, places: pd.DataFrame | None = None,
                top: int = 5, language: str | None = None,
                connection: Connection | None = None) -> pd.DataFrame:
    """Autocomplete suggestions for ``text``, with coordinates where they can be known.

    Parameters
    ----------
    text : str
        What the user typed (a prefix).
    near : (lon, lat) or Point, optional
        Ranks suggestions (and their geocoding) by distance from here.
    places : DataFrame, optional
        A gazetteer (``name``, ``lon``, ``lat``) consulted before geocoding.
    top : int
        Suggestions wanted, 1 to 20.
    language : str, optional
        Language of the suggestions.
    connection : Connection, optional
        Defaults to the default connection.

    Returns
    -------
    pandas.DataFrame
        One row per suggestion in rank order: ``label`` (string: the name, or the formatted
        address), ``type`` (the suggestion's type), ``lon``, ``lat`` (floats, NaN when unknown),
        ``placed_by`` (string: ``service`` when the answer had a geometry, ``gazetteer``,
        ``geocode`` (its top match of the label, High or Medium confidence), or ``unknown``).
    """
    from toolkit.maps.search import RESOLVED_CONFIDENCE, autocomplete, geocode

    point = to_point(near, "near")
    found = autocomplete(text, coordinates=point, top=top, language=language,
                         connection=connection)
    known = _known(places)
    labels: list[str] = []
    for _, s in found.iterrows():
        name = s.get("name")
        labels.append(str(name if isinstance(name, str) else s.get("address.formattedAddress")))
    unplaced = [label for label, (_, s) in zip(labels, found.iterrows(), strict=True)
                if (s.get("geometry") is None or pd.isna(s.get("geometry"))
                    or s["geometry"].is_empty) and label.casefold() not in known]
    located: dict[str, tuple[float, float]] = {}
    if unplaced:
        hits = geocode(list(dict.fromkeys(unplaced)), coordinates=point, top=1,
                       language=language, connection=connection)
        for _, h in hits.iterrows():
            if str(h["confidence"]) in RESOLVED_CONFIDENCE and h["geometry"] is not None:
                located[str(h["query"])] = (float(h["geometry"].x), float(h["geometry"].y))
    rows = []
    for label, (_, s) in zip(labels, found.iterrows(), strict=True):
        geom = s.get("geometry")
        if geom is not None and not pd.isna(geom) and not geom.is_empty:
            c = geom.centroid
            rows.append((label, s["type"], c.x, c.y, "service"))
        elif label.casefold() in known:
            rows.append((label, s["type"], *known[label.casefold()], "gazetteer"))
        elif label in located:
            rows.append((label, s["type"], *located[label], "geocode"))
        else:
            rows.append((label, s["type"], float("nan"), float("nan"), "unknown"))
    out = pd.DataFrame(rows, columns=["label", "type", "lon", "lat", "placed_by"])
    return out.astype({"label": "string", "type": "string", "lon": float, "lat": float,
                       "placed_by": "string"})


@dataclass
class PlaceWeather:
    """Everything the explorer shows for one place."""

    label: str
    lon: float
    lat: float
    current: gpd.GeoDataFrame
    pollutants: pd.DataFrame
    forecast: gpd.GeoDataFrame
    alerts: gpd.GeoDataFrame
    notes: list[str] = field(default_factory=list)

    def summary(self) -> pd.DataFrame:
        """Tabulate a row per day: forecast category and index, dominant pollutant, alerts in force.

        Today's row also has the current reading.
        """
        f = self.forecast
        days = (f["dateTime"] + pd.Timedelta(hours=12)).dt.strftime("%a %d %b")
        out = pd.DataFrame({
            "day": days.to_numpy(),
            "category": f["category"].astype("string").to_numpy(),
            "globalIndex": f["globalIndex"].to_numpy(),
            "dominantPollutant": f["dominantPollutant"].astype("string").to_numpy(),
        })
        alerts = []
        for start in f["dateTime"]:
            end = start + pd.Timedelta(days=1)
            a = self.alerts.dropna(subset=["startTime"])
            on = a[(a["startTime"] < end) & (a["endTime"] > start)]
            alerts.append(", ".join(dict.fromkeys(on["description.english"].dropna())) or "")
        out["alerts"] = pd.array(alerts, dtype="string")
        now = self.current.iloc[0] if len(self.current) else None
        out["now"] = pd.array([None] * len(out), dtype="string")
        if now is not None and len(out) and pd.notna(now["globalIndex"]):
            out.loc[0, "now"] = f"{now['category']} {now['globalIndex']:.0f} " \
                                f"({now['dateTime']:%H:%M} UTC)"
        return out

    def figure(self) -> Any:
        """Draw the static picture: pollutants now, the week ahead, the alert timeline."""
        import matplotlib.pyplot as plt

        from toolkit import plot

        has_alerts = bool(self.alerts["alertId"].notna().any())
        fig, axes = plt.subplots(1, 3 if has_alerts else 2, figsize=(17 if has_alerts else 12,
                                                                     4.2))
        if len(self.pollutants):
            plot.pollutants(self.pollutants, ax=axes[0],
                            title=f"{self.label}: pollutants now")
        else:
            axes[0].text(0.5, 0.5, "no pollutant details", ha="center", va="center")
            axes[0].set_axis_off()
        plot.air_quality_forecast(self.forecast, ax=axes[1], labels=[self.label],
                                  title=f"{self.label}: the week ahead")
        if has_alerts:
            now = self.current["dateTime"].iloc[0] if len(self.current) else None
            plot.alert_timeline(self.alerts, ax=axes[2], now=now,
                                title=f"{self.label}: alerts")
        fig.tight_layout()
        return fig


def place_weather(location: Any, *, label: str | None = None, duration: int = 7,
                  language: str | None = None,
                  connection: Connection | None = None) -> PlaceWeather:
    """Read the current air, the daily forecast and the alerts at one place.

    Parameters
    ----------
    location : (lon, lat), Point or str
        The place, as every weather function takes one location: ``(longitude, latitude)``, a
        shapely Point, or a place name (resolved through :func:`toolkit.geocode`).
    label : str, optional
        Its name (default: the name given, else the coordinates).
    duration : int
        Forecast days, 1 to 7.
    language : str, optional
        Language of the texts.
    connection : Connection, optional
        Defaults to the default connection.
    """
    from toolkit.maps.weather import (
        air_quality,
        air_quality_forecast,
        air_quality_pollutants,
        severe_weather_alerts,
    )

    current = air_quality(location, language=language, connection=connection)
    lon, lat = to_point(current.geometry.iloc[0], "location")
    forecast = air_quality_forecast((lon, lat), duration=duration, language=language,
                                    connection=connection)
    alerts = severe_weather_alerts((lon, lat), language=language, connection=connection)
    if label is None:
        label = location if isinstance(location, str) else f"{lon:.4f}, {lat:.4f}"
    return PlaceWeather(label, lon, lat, current, air_quality_pollutants(current), forecast,
                        alerts)


class AirQualityExplorer:
    """Pick a place (by name through autocomplete, or by coordinates); see air, week ahead, alerts.

    The explorer shows the air now, the week ahead and the alerts.

    Parameters
    ----------
    near : (lon, lat) or Point
        Where suggestions are ranked from, and the starting coordinates.
    places : DataFrame, optional
        A gazetteer (``name``, ``lon``, ``lat``) consulted before :func:`toolkit.geocode` to
        place suggestions.
    duration : int
        Forecast days, 1 to 7.
    language : str, optional
        Language of the texts.
    interactive : bool, optional
        Show the place on an interactive map (its air quality and alerts,
        :func:`toolkit.explore.air_quality`) beside the pictures; by default when the ``maps``
        extra (folium) is installed.
    connection : Connection, optional
        Defaults to the default connection.

    Attributes
    ----------
    map : folium.Map or None
        The last place shown on the interactive map.

    Examples
    --------
    >>> explorer = AirQualityExplorer()                     # doctest: +SKIP
    >>> explorer                                            # the widget, in a notebook
    >>> report = explorer.select("Ordino")                  # or explorer.select((1.53, 42.55))
    >>> report.forecast                                     # the frames it shows
    """

    def __init__(self, *, near: Any = DEFAULT_NEAR, places: pd.DataFrame | None = None,
                 duration: int = 7, language: str | None = None,
                 interactive: bool | None = None,
                 connection: Connection | None = None) -> None:
        import importlib.util

        import ipywidgets as w

        from toolkit._core.validate import check_int

        check_int(duration, "duration", minimum=1, maximum=7)
        if interactive is not None and not isinstance(interactive, bool):
            raise ValidationError("interactive", interactive, "must be True, False or None")
        self.interactive = (importlib.util.find_spec("folium") is not None
                            if interactive is None else interactive)
        self.map: Any = None
        self.near = to_point(near, "near")
        self.duration = duration
        self.language = language
        self.connection = connection
        self._places = places
        self.suggestions = pd.DataFrame()
        self._quiet = False
        self.result: PlaceWeather | None = None
        self.error: str | None = None
        self.name_box = w.Text(placeholder="a town or street, e.g. Ordino", description="Place")
        self.find_button = w.Button(description="Find", icon="search")
        self.choices = w.Dropdown(options=[], description="Pick")
        self.lon_box = w.FloatText(value=self.near[0], description="Longitude")
        self.lat_box = w.FloatText(value=self.near[1], description="Latitude")
        self.show_button = w.Button(description="Show", button_style="primary")
        self.title = w.HTML("")
        self.message = w.HTML("")
        self.table = w.HTML("")
        # the pictures as an <img> with their description as alt text (an Image widget has
        # no alt); empty until a place is shown
        self.picture = w.HTML("")
        #: The pictures shown, as PNG bytes, and their description.
        self.picture_png, self.picture_description = b"", ""
        self.map_view = w.HTML("", layout=w.Layout(width="100%", height=f"{MAP_HEIGHT + 10}px"))
        self.find_button.on_click(lambda _b: self._safely(self.find, self.name_box.value))
        self.name_box.continuous_update = False  # searched on Enter, not on every key
        self.name_box.observe(lambda ch: self._safely(self.find, ch["new"]) if ch["new"]
                              else None, names="value")
        self.choices.observe(self._on_choice, names="value")
        self.show_button.on_click(lambda _b: self._safely(self.show_coordinates))
        self.widget = w.VBox([
            w.HBox([self.name_box, self.find_button, self.choices]),
            w.HBox([self.lon_box, self.lat_box, self.show_button]),
            self.title,
            self.message,
            self.table,
            self.picture,
            *([self.map_view] if self.interactive else []),
        ])

    @property
    def places(self) -> pd.DataFrame | None:
        """The caller's gazetteer, if any."""
        return self._places

    def _safely(self, func: Any, *args: Any) -> None:
        try:
            func(*args)
        except ToolkitError as err:
            self._show_error(str(err))

    def _show_error(self, text: str) -> None:
        self.error = text
        self.message.value = f"<b style='color:#c62828'>{html_text(text)}</b>"

    def _on_choice(self, change: dict[str, Any]) -> None:
        if self._quiet:
            return
        label = change.get("new")
        if label:
            self._safely(self.select, label)

    def search(self, text: str) -> pd.DataFrame:
        """Ask autocomplete for ``text``; fill the suggestion list; return the suggestions."""
        if not isinstance(text, str) or not text.strip():
            raise ValidationError("text", text, "type the beginning of a place name")
        self._fill(find_places(text, near=self.near, places=self.places,
                               language=self.language, connection=self.connection))
        return self.suggestions

    def _fill(self, suggestions: pd.DataFrame) -> None:
        """Hold ``suggestions`` and list their labels, none chosen (filling is no choice)."""
        self.suggestions = suggestions
        self._quiet = True
        try:
            self.choices.options = [str(x) for x in suggestions["label"]]
            self.choices.value = None
        finally:
            self._quiet = False

    def find(self, text: str) -> PlaceWeather | None:
        """Do what the Find button does: ask autocomplete for ``text`` and show the best placed one.

        The suggestion list is filled; ``None`` when no suggestion could be placed.
        """
        found = self.search(text)
        placed = found[found["lon"].notna()]
        if placed.empty:
            self._show_error(f"no place found for {text!r}")
            return None
        label = str(placed.iloc[0]["label"])
        self._pick(label)
        return self.select(label)

    def _pick(self, label: str | None) -> None:
        """Set the suggestion list's choice without showing it again."""
        self._quiet = True
        try:
            if label is None or label in self.choices.options:
                self.choices.value = label
        finally:
            self._quiet = False

    def show_coordinates(self) -> PlaceWeather:
        """Do what the Show button does: show the place at the longitude and latitude boxes.

        The place shown keeps its name when the boxes still hold its coordinates.
        """
        lon, lat = float(self.lon_box.value), float(self.lat_box.value)
        current = self.result
        if current is not None and (lon, lat) == (current.lon, current.lat):
            shown = self.select((lon, lat), label=current.label)
            self._pick(current.label)  # still the place listed
            return shown
        return self.select((lon, lat))

    def select(self, place: Any, *, label: str | None = None) -> PlaceWeather:
        """Show a place, and return what is shown.

        The place is a name (a suggestion's label, placed as :func:`find_places` does, or any name
        :func:`toolkit.geocode` finds) or ``(lon, lat)`` (named ``label``, else by its coordinates).
        The place shown is the one source of the boxes, the titles and the map.
        """
        location: Any = place
        listed: str | None = None
        if isinstance(place, str):
            hits = self.suggestions
            if hits.empty or place not in set(hits["label"]):
                hits = find_places(place, near=self.near, places=self.places,
                                   language=self.language, connection=self.connection)
                self._fill(hits)
            exact = hits[hits["label"].str.casefold() == place.casefold()]
            best = (exact if len(exact) else hits).head(1)
            if best.empty or pd.isna(best.iloc[0]["lon"]):
                label = place  # not suggested, or not placed: geocoded by the weather call
            else:
                row = best.iloc[0]
                label, location = str(row["label"]), (float(row["lon"]), float(row["lat"]))
                listed = label
        else:
            location = to_point(place, "place")
        result = place_weather(location, label=label, duration=self.duration,
                               language=self.language, connection=self.connection)
        self.result = result
        self.error = None
        self._pick(listed)  # the list shows the place shown (nothing for coordinates)
        self.lon_box.value, self.lat_box.value = result.lon, result.lat
        self._render(result)
        logger.debug("air-quality explorer shows %s", result.label)
        return result

    def _render(self, result: PlaceWeather) -> None:
        import io

        import matplotlib.pyplot as plt

        from toolkit.plot.description import describe
        from toolkit.widgets._static import png_tag

        # a second-level heading: under a dashboard's title, beside a notebook's sections, so
        # that no level is skipped in either; at the size of the text around it
        self.title.value = (f"<h2 style='margin:4px 0;font-size:1em'>{html_text(result.label)} "
                            f"<small>({result.lon:.4f}, {result.lat:.4f})</small></h2>")
        self.message.value = "<br>".join(html_text(n) for n in result.notes)
        self.table.value = result.summary().astype(object).fillna("").to_html(index=False)
        fig = result.figure()
        buffer = io.BytesIO()
        fig.savefig(buffer, format="png", dpi=80)
        plt.close(fig)
        self.picture_png = buffer.getvalue()
        self.picture_description = describe(fig) or f"{result.label}: air quality"
        self.picture.value = png_tag(self.picture_png, self.picture_description)
        if self.interactive:
            from toolkit.explore import air_quality as explore_air_quality
            from toolkit.widgets._static import map_iframe

            current = result.current.copy()
            current["place"] = result.label
            self.map = explore_air_quality(current, alerts=result.alerts, height=MAP_HEIGHT)
            self.map_view.value = map_iframe(self.map, MAP_HEIGHT)

    def static_html(self) -> str:
        """Render what the explorer shows as plain HTML: place, table, pictures and map.

        This is the view an HTML report keeps.
        """
        if self.result is None:
            return "<p>air-quality explorer: no place chosen yet</p>"
        return "".join([self.title.value, self.message.value, self.table.value,
                        self.picture.value,
                        self.map_view.value if self.interactive else ""])

    def _repr_mimebundle_(self, **kwargs: Any) -> dict[str, Any]:
        from toolkit.widgets._static import bundle

        return bundle(self.widget, self.static_html(), **kwargs)


def air_quality_explorer(*, near: Any = DEFAULT_NEAR, places: pd.DataFrame | None = None,
                         duration: int = 7, language: str | None = None,
                         interactive: bool | None = None,
                         connection: Connection | None = None) -> AirQualityExplorer:
    """Create an :class:`AirQualityExplorer` (the same parameters)."""
    return AirQualityExplorer(near=near, places=places, duration=duration, language=language,
                              interactive=interactive, connection=connection)
