"""An air-quality explorer: pick a place by name (through autocomplete) or by coordinates and see
the current air, the week ahead and any severe weather alerts.

The logic is in plain functions (:func:`find_places`, :func:`place_weather`) that the widget
calls; :class:`AirQualityExplorer` can be driven without a browser (``explorer.select("Ordino")``
or ``explorer.select((42.556, 1.533))`` returns the :class:`PlaceWeather` it shows), which is how
notebooks under test and the tests use it.

Autocomplete answers carry no coordinates (the service sends a null geometry), so a suggestion
is placed with a *gazetteer*: a frame of ``name``, ``lat``, ``lon``. By default it is the towns
and villages of Andorra the toolkit ships (``toolkit._data``, the same map the sandbox serves),
whatever the connection; pass ``places=`` for anywhere else (or type coordinates). A street
address is placed at the centre of its locality when the gazetteer knows the locality, and says
so. Nothing here looks inside the sandbox: the widget works the same against a real service.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import pandas as pd

from toolkit._core.errors import ToolkitError, ValidationError
from toolkit._core.geo import to_lonlat

if TYPE_CHECKING:
    import geopandas as gpd

    from toolkit.connection import Connection

logger = logging.getLogger(__name__)

__all__ = ["AirQualityExplorer", "PlaceWeather", "air_quality_explorer", "find_places", "gazetteer",
           "place_weather"]

#: Where suggestions are ranked from when nothing else is known (Andorra la Vella).
DEFAULT_NEAR = (42.5069, 1.5212)


def gazetteer() -> pd.DataFrame:
    """The default known places: the towns and villages of Andorra the toolkit ships.

    Returns
    -------
    pandas.DataFrame
        ``name`` (string), ``lat``, ``lon`` (float), one row per town or village.
    """
    from toolkit._data.andorra import towns

    return towns()


def find_places(text: str, *, near: Any = DEFAULT_NEAR, places: pd.DataFrame | None = None,
                top: int = 5, language: str | None = None,
                connection: Connection | None = None) -> pd.DataFrame:
    """Autocomplete suggestions for ``text``, with coordinates where they can be known.

    Parameters
    ----------
    text : str
        What the user typed (a prefix).
    near : (lat, lon), optional
        Ranks suggestions by distance from here.
    places : DataFrame, optional
        The gazetteer (``name``, ``lat``, ``lon``); default :func:`gazetteer`.
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
        address), ``type`` (the suggestion's type), ``lat``, ``lon`` (floats, NaN when unknown),
        ``placed_by`` (string: ``service`` when the answer had a geometry, ``gazetteer``,
        ``locality`` for an address placed at its town centre, or ``unknown``).
    """
    from toolkit.maps.search import autocomplete

    lon, lat = to_lonlat(near, "near", order="latlon")[0]
    found = autocomplete(text, coordinates=(lon, lat), top=top, language=language,
                         connection=connection)
    known = gazetteer() if places is None else places
    by_name = {str(n).casefold(): (float(a), float(o)) for n, a, o in
               zip(known["name"], known["lat"], known["lon"], strict=True)}
    rows = []
    for _, s in found.iterrows():
        name = s.get("name")
        label = name if isinstance(name, str) else s.get("address.formattedAddress")
        geom = s.get("geometry")
        if geom is not None and not pd.isna(geom) and not geom.is_empty:
            c = geom.centroid
            rows.append((label, s["type"], c.y, c.x, "service"))
        elif isinstance(name, str) and name.casefold() in by_name:
            rows.append((label, s["type"], *by_name[name.casefold()], "gazetteer"))
        elif isinstance(s.get("address.locality"), str) and \
                s["address.locality"].casefold() in by_name:
            rows.append((label, s["type"], *by_name[s["address.locality"].casefold()],
                         "locality"))
        else:
            rows.append((label, s["type"], float("nan"), float("nan"), "unknown"))
    out = pd.DataFrame(rows, columns=["label", "type", "lat", "lon", "placed_by"])
    return out.astype({"label": "string", "type": "string", "lat": float, "lon": float,
                       "placed_by": "string"})


@dataclass
class PlaceWeather:
    """Everything the explorer shows for one place."""

    label: str
    lat: float
    lon: float
    current: gpd.GeoDataFrame
    pollutants: pd.DataFrame
    forecast: gpd.GeoDataFrame
    alerts: gpd.GeoDataFrame
    notes: list[str] = field(default_factory=list)

    def summary(self) -> pd.DataFrame:
        """One row per day: the forecast category and index, the dominant pollutant and the
        alerts in force that day (today's row also has the current reading)."""
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
        """The static picture: pollutants now, the week ahead, the alert timeline."""
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


def place_weather(lat: float, lon: float, *, label: str | None = None, duration: int = 7,
                  language: str | None = None,
                  connection: Connection | None = None) -> PlaceWeather:
    """Current air, the daily forecast and the alerts at one place.

    Parameters
    ----------
    lat, lon : float
        The place (checked like every weather function's ``locations``).
    label : str, optional
        Its name (default: the coordinates).
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

    point = (lat, lon)
    current = air_quality(point, language=language, connection=connection)
    forecast = air_quality_forecast(point, duration=duration, language=language,
                                    connection=connection)
    alerts = severe_weather_alerts(point, language=language, connection=connection)
    return PlaceWeather(label or f"{lat:.4f}, {lon:.4f}", float(lat), float(lon), current,
                        air_quality_pollutants(current), forecast, alerts)


class AirQualityExplorer:
    """Pick a place (by name through autocomplete, or by coordinates); see the air now, the week
    ahead and the alerts.

    Parameters
    ----------
    near : (lat, lon)
        Where suggestions are ranked from, and the starting coordinates.
    places : DataFrame, optional
        The gazetteer used to place suggestions (default :func:`gazetteer`).
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
    >>> report = explorer.select("Ordino")                  # or explorer.select((42.55, 1.53))
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
        lon, lat = to_lonlat(near, "near", order="latlon")[0]
        self.near = (float(lat), float(lon))
        self.duration = duration
        self.language = language
        self.connection = connection
        self._places = places
        self.suggestions = pd.DataFrame()
        self.result: PlaceWeather | None = None
        self.error: str | None = None
        self.name_box = w.Text(placeholder="a town or street, e.g. Ordino", description="Place")
        self.find_button = w.Button(description="Find", icon="search")
        self.choices = w.Dropdown(options=[], description="Pick")
        self.lat_box = w.FloatText(value=self.near[0], description="Latitude")
        self.lon_box = w.FloatText(value=self.near[1], description="Longitude")
        self.show_button = w.Button(description="Show", button_style="primary")
        self.message = w.HTML("")
        self.table = w.HTML("")
        self.picture = w.Image(format="png")
        self.map_view = w.HTML("")
        self.find_button.on_click(lambda _b: self._safely(self.search, self.name_box.value))
        self.name_box.continuous_update = False  # searched on Enter, not on every key
        self.name_box.observe(lambda ch: self._safely(self.search, ch["new"]) if ch["new"]
                              else None, names="value")
        self.choices.observe(self._on_choice, names="value")
        self.show_button.on_click(lambda _b: self._safely(
            self.select, (self.lat_box.value, self.lon_box.value)))
        self.widget = w.VBox([
            w.HBox([self.name_box, self.find_button, self.choices]),
            w.HBox([self.lat_box, self.lon_box, self.show_button]),
            self.message,
            self.table,
            w.HBox([self.picture, self.map_view]) if self.interactive else self.picture,
        ])

    @property
    def places(self) -> pd.DataFrame:
        """The gazetteer (built on first use)."""
        if self._places is None:
            self._places = gazetteer()
        return self._places

    def _safely(self, func: Any, *args: Any) -> None:
        try:
            func(*args)
        except ToolkitError as err:
            self._show_error(str(err))

    def _show_error(self, text: str) -> None:
        import html

        self.error = text
        self.message.value = f"<b style='color:#c62828'>{html.escape(text)}</b>"

    def _on_choice(self, change: dict[str, Any]) -> None:
        label = change.get("new")
        if label:
            self._safely(self.select, label)

    def search(self, text: str) -> pd.DataFrame:
        """Ask autocomplete for ``text``; fill the suggestion list; return the suggestions."""
        if not isinstance(text, str) or not text.strip():
            raise ValidationError("text", text, "type the beginning of a place name")
        self.suggestions = find_places(text, near=self.near, places=self.places,
                                       language=self.language, connection=self.connection)
        labels = [str(x) for x in self.suggestions["label"]]
        with self.choices.hold_trait_notifications():
            self.choices.unobserve(self._on_choice, names="value")
            self.choices.options = labels
            self.choices.value = None
            self.choices.observe(self._on_choice, names="value")
        return self.suggestions

    def select(self, place: Any) -> PlaceWeather:
        """Show a place: a name (searched and placed as :func:`find_places` does) or
        ``(lat, lon)``; returns what is shown."""
        notes: list[str] = []
        if isinstance(place, str):
            hits = self.suggestions
            for query in dict.fromkeys((place, place.split(",")[0].strip())):
                if not hits.empty and place in set(hits["label"]):
                    break
                hits = find_places(query, near=self.near, places=self.places,
                                   language=self.language, connection=self.connection)
            exact = hits[hits["label"].str.casefold() == place.casefold()]
            best = (exact if len(exact) else hits).head(1)
            if best.empty:
                raise ValidationError("place", place, "no place of that name was suggested")
            row = best.iloc[0]
            if pd.isna(row["lat"]):
                raise ValidationError("place", place, "the service gave no coordinates for this "
                                      "suggestion and the gazetteer does not know it; enter "
                                      "latitude and longitude instead")
            if row["placed_by"] == "locality":
                notes.append(f"{row['label']} is placed at the centre of its town")
            label, lat, lon = str(row["label"]), float(row["lat"]), float(row["lon"])
        else:
            lon, lat = to_lonlat(place, "place", order="latlon")[0]
            label = f"{lat:.4f}, {lon:.4f}"
        result = place_weather(lat, lon, label=label, duration=self.duration,
                               language=self.language, connection=self.connection)
        result.notes = notes
        self.result = result
        self.error = None
        self.lat_box.value, self.lon_box.value = float(lat), float(lon)
        self._render(result)
        return result

    def _render(self, result: PlaceWeather) -> None:
        import html
        import io

        import matplotlib.pyplot as plt

        self.message.value = "<br>".join(html.escape(n) for n in result.notes)
        self.table.value = result.summary().to_html(index=False, na_rep="")
        fig = result.figure()
        buffer = io.BytesIO()
        fig.savefig(buffer, format="png", dpi=80)
        plt.close(fig)
        self.picture.value = buffer.getvalue()
        if self.interactive:
            from toolkit.explore import air_quality as explore_air_quality

            self.map = explore_air_quality(result.current, alerts=result.alerts, height=360)
            self.map_view.value = self.map._repr_html_()

    def _ipython_display_(self) -> None:
        from IPython.display import display

        display(self.widget)


def air_quality_explorer(*, near: Any = DEFAULT_NEAR, places: pd.DataFrame | None = None,
                         duration: int = 7, language: str | None = None,
                         interactive: bool | None = None,
                         connection: Connection | None = None) -> AirQualityExplorer:
    """An :class:`AirQualityExplorer` (the same parameters)."""
    return AirQualityExplorer(near=near, places=places, duration=duration, language=language,
                              interactive=interactive, connection=connection)
