"""The weather world: the air-quality field, the ten-day cycles and the severe alerts.

The air-quality field over space and time, the ten-day cycles with their stagnation episodes, and
the severe alerts of the national provider (see the package docstring).

No HTTP here: every function answers from the seed, the place and the instant, so the handlers
(:mod:`.handlers`) and the tests ask the same questions.
"""


from __future__ import annotations

import gzip
import hashlib
import math
import random
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta, timezone, tzinfo
from functools import lru_cache
from importlib import resources
from typing import TYPE_CHECKING, Any
from zoneinfo import ZoneInfo

import numpy as np
import orjson

from toolkit._core.geo import LocalProjection, haversine_m
from toolkit._spec.maps import (
    AIR_QUALITY_BANDS,
    AIR_QUALITY_CATEGORIES,
    AIR_QUALITY_COLORS,
    ALERT_STATUSES,
    WEATHER_API_VERSIONS,
)
from toolkit.sandbox.world import DEFAULT_EPOCH

if TYPE_CHECKING:
    from toolkit.sandbox.world import World

__all__ = [
    "ALERT_STATUSES",
    "API_VERSIONS",
    "CATEGORY_COLORS",
    "COVERAGE_M",
    "POLLUTANTS",
    "WEATHER_QPS",
    "WeatherWorld",
    "alert_record",
    "alerts_at",
    "build_world",
    "catalog_rows",
    "category_of",
    "covered",
    "daily_forecast",
    "hourly_forecast",
    "hourly_reading",
    "language_of",
]

API_VERSIONS = WEATHER_API_VERSIONS
#: Requests per second the real service allows one account for weather.
WEATHER_QPS = 50
LOCAL = ZoneInfo("Europe/Andorra")
#: How far out at sea the service still answers (about 50 nautical miles).
COVERAGE_M = 50 * 1852.0
#: The instant the cycles are counted from: the default epoch, fixed (not a sandbox's own epoch) so
#: that a sandbox started at another instant sees the same weather at the same time.
ANCHOR = DEFAULT_EPOCH
CYCLE = timedelta(days=10)
GRID_M = 100.0
#: Relative size of the towns (their heating and streets), the biggest first.
TOWN_WEIGHTS = {"Andorra la Vella": 1.0, "les Escaldes": 1.0, "Encamp": 0.55,
                "Sant Julià de Lòria": 0.5, "La Massana": 0.4, "Santa Coloma": 0.3,
                "Ordino": 0.22, "Canillo": 0.22, "Soldeu": 0.15}

CATEGORY_COLORS = AIR_QUALITY_COLORS

#: Category names and descriptions per language (English is the default and the fallback).
CATEGORY_TEXT: dict[str, dict[str, tuple[str, str]]] = {
    "en": {
        "Excellent": ("Excellent", "The air quality is ideal for most individuals; enjoy your "
                      "normal outdoor activities."),
        "Fair": ("Fair", "The air quality is generally acceptable for most individuals. However, "
                 "sensitive groups may experience minor to moderate symptoms from long-term "
                 "exposure."),
        "Poor": ("Poor", "The air has reached a high level of pollution and is unhealthy for "
                 "sensitive groups. Reduce time spent outside if you are feeling symptoms such "
                 "as difficulty breathing or throat irritation."),
        "Unhealthy": ("Unhealthy", "Health effects can be immediately felt by sensitive groups. "
                      "Healthy individuals may experience difficulty breathing and throat "
                      "irritation with prolonged exposure. Limit outdoor activity."),
        "Very unhealthy": ("Very unhealthy", "Health effects will be immediately felt by "
                           "sensitive groups and should avoid outdoor activity. Healthy "
                           "individuals are likely to experience difficulty breathing and "
                           "throat irritation; consider staying indoors and rescheduling "
                           "outdoor activities."),
        "Dangerous": ("Dangerous", "Any exposure to the air, even for a few minutes, can lead to "
                      "serious health effects on everybody. Avoid outdoor activities."),
    },
    "ca": {
        "Excellent": ("Excel·lent", "La qualitat de l'aire és ideal per a la majoria de "
                      "persones; gaudiu de les activitats a l'aire lliure."),
        "Fair": ("Acceptable", "La qualitat de l'aire és en general acceptable. Els grups "
                 "sensibles poden notar símptomes lleus o moderats amb una exposició llarga."),
        "Poor": ("Dolenta", "L'aire té un nivell alt de contaminació i és perjudicial per als "
                 "grups sensibles. Reduïu el temps a l'exterior si teniu símptomes."),
        "Unhealthy": ("Perjudicial", "Els grups sensibles en noten els efectes immediatament. "
                      "Limiteu l'activitat a l'aire lliure."),
        "Very unhealthy": ("Molt perjudicial", "Tothom pot notar-ne els efectes. Eviteu "
                           "l'activitat a l'aire lliure."),
        "Dangerous": ("Perillosa", "Qualsevol exposició pot tenir efectes greus per a la salut. "
                      "Quedeu-vos a l'interior."),
    },
    "fr": {
        "Excellent": ("Excellent", "La qualité de l'air est idéale pour la plupart des "
                      "personnes ; profitez de vos activités de plein air."),
        "Fair": ("Correct", "La qualité de l'air est généralement acceptable. Les personnes "
                 "sensibles peuvent ressentir des symptômes légers à modérés en cas "
                 "d'exposition prolongée."),
        "Poor": ("Médiocre", "L'air est fortement pollué et nocif pour les personnes "
                 "sensibles. Réduisez le temps passé dehors en cas de symptômes."),
        "Unhealthy": ("Mauvais", "Les personnes sensibles en ressentent immédiatement les "
                      "effets. Limitez les activités de plein air."),
        "Very unhealthy": ("Très mauvais", "Tout le monde peut en ressentir les effets. Évitez "
                           "les activités de plein air."),
        "Dangerous": ("Dangereux", "Toute exposition peut avoir des effets graves sur la santé. "
                      "Restez à l'intérieur."),
    },
    "es": {
        "Excellent": ("Excelente", "La calidad del aire es ideal para la mayoría de las "
                      "personas; disfrute de sus actividades al aire libre."),
        "Fair": ("Aceptable", "La calidad del aire es en general aceptable. Los grupos "
                 "sensibles pueden notar síntomas leves o moderados con una exposición larga."),
        "Poor": ("Mala", "El aire tiene un nivel alto de contaminación y es perjudicial para los "
                 "grupos sensibles. Reduzca el tiempo al aire libre si nota síntomas."),
        "Unhealthy": ("Insalubre", "Los grupos sensibles notan los efectos de inmediato. "
                      "Limite la actividad al aire libre."),
        "Very unhealthy": ("Muy insalubre", "Todo el mundo puede notar los efectos. Evite la "
                           "actividad al aire libre."),
        "Dangerous": ("Peligrosa", "Cualquier exposición puede tener efectos graves para la "
                      "salud. Quédese en el interior."),
    },
}


@dataclass(frozen=True)
class Pollutant:
    """A pollutant: its type code, English name, global-index breakpoints and local scale."""

    type: str
    name: str
    breakpoints: tuple[float, ...]  # concentrations (µg/m³) at global index 0, 20, 50, 100, ...
    local: float  # local-regulator index per global index point


_INDEX_POINTS = (0.0, 20.0, 50.0, 100.0, 150.0, 250.0, 400.0)
#: Order is the tie-break for the dominant pollutant.
POLLUTANTS = (
    Pollutant("PM2.5", "Particulate Matter 2.5", (0, 10, 20, 25, 50, 75, 800), 1.9),
    Pollutant("PM10", "Particulate Matter 10", (0, 20, 40, 50, 100, 150, 1200), 0.93),
    Pollutant("NO2", "Nitrogen Dioxide", (0, 40, 90, 120, 230, 340, 1000), 1.0),
    Pollutant("O3", "Ozone", (0, 50, 100, 130, 240, 380, 800), 0.98),
    Pollutant("SO2", "Sulfur Dioxide", (0, 100, 200, 350, 500, 750, 1250), 0.55),
    Pollutant("CO", "Carbon Monoxide", (0, 4000, 8000, 10000, 17000, 34000, 60000), 2.0),
)
UNIT = "µg/m³"
UNIT_TYPE = 31

STATUS_TEXT = {
    "ca": {"New": "Nou", "Update": "Actualització", "Continue": "Continua", "Extend": "Ampliació",
           "Upgrade": "Augment", "Correct": "Correcció", "Cancel": "Cancel·lació",
           "Expire": "Finalitzat"},
    "fr": {"New": "Nouveau", "Update": "Mise à jour", "Continue": "Maintien",
           "Extend": "Prolongation", "Upgrade": "Aggravation", "Correct": "Correction",
           "Cancel": "Annulation", "Expire": "Expiré"},
    "es": {"New": "Nuevo", "Update": "Actualización", "Continue": "Continúa",
           "Extend": "Ampliación", "Upgrade": "Agravamiento", "Correct": "Corrección",
           "Cancel": "Cancelación", "Expire": "Expirado"},
}
ALERT_LINGER = timedelta(hours=2)
SOURCE = "Meteo Andorra"
SOURCE_ID = 47


# ------------------------------------------------------------------------------ indices


def global_index(pollutant: Pollutant, concentration: Any) -> Any:
    """Compute a concentration's global index (piecewise linear, extrapolated past the top band)."""
    c = np.asarray(concentration, dtype=float)
    bp = np.asarray(pollutant.breakpoints, dtype=float)
    pts = np.asarray(_INDEX_POINTS)
    out = np.interp(c, bp, pts)
    slope = (pts[-1] - pts[-2]) / (bp[-1] - bp[-2])
    return np.where(c > bp[-1], pts[-1] + (c - bp[-1]) * slope, out)


def category_of(value: float) -> str:
    """Give the category of a global index by the bands of spec 2 §2.5 (upper limits inclusive)."""
    for limit, name in zip(AIR_QUALITY_BANDS, AIR_QUALITY_CATEGORIES, strict=False):
        if value <= limit:
            return name
    return AIR_QUALITY_CATEGORIES[-1]


def language_of(language: str | None) -> str:
    """Read a tag's primary language when the category texts have it, else ``en``."""
    if not language:
        return "en"
    primary = language.strip().split("-")[0].split("_")[0].lower()
    return primary if primary in CATEGORY_TEXT else "en"


# ------------------------------------------------------------------------------ coverage


@lru_cache(maxsize=1)
def _land() -> tuple[Any, Any]:
    import shapely

    raw = resources.files("toolkit.sandbox.maps").joinpath("data/land_110m.json.gz")
    with raw.open("rb") as fh:
        data = orjson.loads(gzip.decompress(fh.read()))
    polys = np.array([shapely.polygons(r) for r in data["rings"]], dtype=object)
    return polys, shapely.STRtree(polys)


def covered(lon: float, lat: float) -> bool:
    """Tell whether the service answers for a point: land, inland seas, or ~50 nmi off a coast."""
    import shapely

    polys, tree = _land()
    point = shapely.points(lon, lat)
    if len(tree.query(point, predicate="intersects")):
        return True
    dlat = COVERAGE_M / 111_000 + 0.1
    dlon = min(180.0, dlat / max(math.cos(math.radians(lat)), 0.05))
    near = tree.query(shapely.box(lon - dlon, lat - dlat, lon + dlon, lat + dlat))
    if not len(near):
        return False
    proj = LocalProjection(lon, lat)
    for i in near:
        coords = shapely.get_coordinates(polys[i].exterior)
        ring = shapely.linearrings(proj.forward(coords))
        if shapely.distance(ring, shapely.points(0.0, 0.0)) <= COVERAGE_M:
            return True
    return False


# ------------------------------------------------------------------------------ the world


@dataclass
class Episode:
    """A stagnation episode: emissions in the valleys multiplied by up to ``strength``."""

    start: datetime
    end: datetime
    strength: float

    def factor(self, t: np.ndarray) -> np.ndarray:
        """Give the multiplier at epoch seconds ``t`` (1 outside, ``strength`` on the plateau)."""
        s, e = self.start.timestamp(), self.end.timestamp()
        ramp = 0.22 * (e - s)
        up = np.clip((t - s) / ramp, 0, 1)
        down = np.clip((e - t) / ramp, 0, 1)
        shape = np.minimum(up, down)
        shape = 0.5 - 0.5 * np.cos(np.pi * shape)
        return 1.0 + (self.strength - 1.0) * shape


@dataclass
class AlertArea:
    """One area of an alert: its parish and its status timeline."""

    name: str
    start: datetime
    end: datetime
    events: list[tuple[datetime, str]]

    def status_at(self, t: datetime) -> str | None:
        """Give the latest status at ``t``, or None when not issued yet or no longer listed."""
        current = None
        for when, status in self.events:
            if when <= t:
                current = status
        if current is None:
            return None
        last_when, last = self.events[-1]
        if last in ("Expire", "Cancel") and t >= last_when + ALERT_LINGER:
            return None
        return current

    def end_at(self, t: datetime) -> datetime:
        """Give the end time as known at ``t`` (an Extend pushes it later)."""
        end = self.end
        for when, status in self.events:
            if status == "Extend" and when <= t:
                end = end + timedelta(hours=12)
        return end


@dataclass
class Alert:
    """A severe weather alert of the national provider."""

    alert_id: int
    kind: str
    category: str
    priority: int
    levels: tuple[str, str]
    areas: list[AlertArea]
    issued: datetime
    cls: str | None = None
    details_ca: str = ""
    disclaimer: str | None = None


@dataclass
class WeatherWorld:
    """The weather section of the sandbox world (see the module docstring)."""

    seed: int
    proj: LocalProjection
    origin: tuple[float, float]  # metres of the grid's (0, 0) cell centre
    shape: tuple[int, int]
    urban: np.ndarray  # 0..1, rows = north-south (y), columns = east-west (x)
    places: list[tuple[str, str, float, float]]  # name, parish, lon, lat
    bounds: tuple[float, float, float, float]
    _cycles: dict[int, tuple[Episode, list[Alert]]] = field(default_factory=dict)

    # ---------------------------------------------------------------- space
    def urban_at(self, lon: float, lat: float) -> float:
        """Bilinear value of the urban/road intensity at a point (0 outside the grid)."""
        x, y = self.proj.forward(np.array([[lon, lat]]))[0]
        fx = (x - self.origin[0]) / GRID_M
        fy = (y - self.origin[1]) / GRID_M
        ny, nx = self.shape
        if not (0 <= fx <= nx - 1 and 0 <= fy <= ny - 1):
            return 0.0
        x0, y0 = int(fx), int(fy)
        x1, y1 = min(x0 + 1, nx - 1), min(y0 + 1, ny - 1)
        ax, ay = fx - x0, fy - y0
        g = self.urban
        top = g[y0, x0] * (1 - ax) + g[y0, x1] * ax
        bottom = g[y1, x0] * (1 - ax) + g[y1, x1] * ax
        return float(top * (1 - ay) + bottom * ay)

    def parish_at(self, lon: float, lat: float) -> str | None:
        """Find the parish of the nearest place within 5 km, else None (outside the world)."""
        best, parish = 5000.0, None
        for _name, p, plon, plat in self.places:
            d = float(haversine_m(lon, lat, plon, plat))
            if d < best and p:
                best, parish = d, p
        return parish

    def timezone_at(self, lon: float, lat: float) -> tzinfo:
        """Europe/Andorra in and around the world; elsewhere the nearest whole-hour offset."""
        w, s, e, n = self.bounds
        if w - 2 <= lon <= e + 2 and s - 2 <= lat <= n + 2:
            return LOCAL
        return timezone(timedelta(hours=round(lon / 15)))

    # ---------------------------------------------------------------- time
    def cycle(self, k: int) -> tuple[Episode, list[Alert]]:
        """Give the episode and alerts of the k-th ten-day cycle after the anchor."""
        if k not in self._cycles:
            self._cycles[k] = _make_cycle(self, k)
        return self._cycles[k]

    def cycle_index(self, t: datetime) -> int:
        """Give the number of the ten-day cycle ``t`` falls in, counted from the anchor."""
        return math.floor((t - ANCHOR) / CYCLE)

    def episodes_near(self, t0: float, t1: float) -> list[Episode]:
        """List the episodes of the cycles from ``t0`` to ``t1`` (epoch seconds), padded by one."""
        k0 = self.cycle_index(datetime.fromtimestamp(t0, UTC)) - 1
        k1 = self.cycle_index(datetime.fromtimestamp(t1, UTC)) + 1
        return [self.cycle(k)[0] for k in range(k0, k1 + 1)]

    def day_weather(self, t: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Day-to-day dispersion and sunshine factors, smooth in time."""
        days = t / 86400.0 - 0.5
        d0 = np.floor(days)
        frac = days - d0

        def value(day: np.ndarray, salt: str, lo: float, hi: float) -> np.ndarray:
            out = np.empty(day.shape)
            for i, d in enumerate(day.ravel()):
                h = hashlib.sha256(f"{self.seed}:{salt}:{int(d)}".encode()).digest()
                out.ravel()[i] = lo + (hi - lo) * int.from_bytes(h[:4], "big") / 2**32
            return out

        disp = value(d0, "disp", 0.8, 1.2) * (1 - frac) + value(d0 + 1, "disp", 0.8, 1.2) * frac
        sun = value(d0, "sun", 0.55, 1.0) * (1 - frac) + value(d0 + 1, "sun", 0.55, 1.0) * frac
        return disp, sun


def _smooth_box(h: np.ndarray, a: float, b: float, ramp: float = 0.5) -> np.ndarray:
    up = np.clip((h - a + ramp / 2) / ramp, 0, 1)
    down = np.clip((b - h + ramp / 2) / ramp, 0, 1)
    return np.minimum(up, down)


def _bump(h: np.ndarray, centre: float, width: float) -> np.ndarray:
    return np.exp(-(((h - centre) / width) ** 2))


def concentrations(ww: WeatherWorld, lon: float, lat: float,
                   times: list[datetime]) -> dict[str, np.ndarray]:
    """Pollutant concentrations (µg/m³) at a point for each of ``times``."""
    from toolkit.sandbox.maps.traffic import RUSH

    tz = ww.timezone_at(lon, lat)
    t = np.array([x.timestamp() for x in times], dtype=float)
    local = [x.astimezone(tz) for x in times]
    h = np.array([x.hour + x.minute / 60 for x in local], dtype=float)
    wd = [x.weekday() for x in local]
    rush = np.array([max((float(_smooth_box(np.array(hh), a, b)) for a, b in RUSH[d]),
                         default=0.0) for hh, d in zip(h, wd, strict=True)])
    daytime = _smooth_box(h, 6.5, 21.5, 1.5)
    traffic = 0.12 + 0.33 * daytime + 0.55 * rush
    heating = 0.35 + 0.65 * np.maximum(_bump(h, 8.0, 1.5), _bump(h, 20.0, 2.5))
    sun = _bump(h, 15.0, 3.0) * (h > 7.5) * (h < 18.5)
    episode = np.ones_like(t)
    for ep in ww.episodes_near(float(t.min()), float(t.max())):
        episode = np.maximum(episode, ep.factor(t))
    disp, sunny = ww.day_weather(t)
    u = ww.urban_at(lon, lat)
    stag = episode / disp
    no2 = 6.0 * disp + 52.0 * u * traffic * stag
    pm25 = 3.5 * disp + (6.0 * u * traffic + 6.5 * u * heating) * stag
    pm10 = 1.45 * pm25 + 3.0 + 6.0 * u * traffic
    co = 180.0 + 750.0 * u * traffic * stag
    so2 = 1.2 + 2.5 * u * stag
    o3 = (30.0 + 52.0 * sun * sunny) * (1 - 0.5 * u * traffic) / np.sqrt(episode) + 6.0 * (1 - u)
    return {"PM2.5": pm25, "PM10": pm10, "NO2": no2, "O3": o3, "SO2": so2, "CO": co}


def _pollutant_indices(conc: dict[str, np.ndarray]) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Round (concentration, global index) per pollutant."""
    out = {}
    for p in POLLUTANTS:
        c = np.round(conc[p.type], 1)
        out[p.type] = (c, np.round(global_index(p, c), 1))
    return out


def _reading(values: dict[str, tuple[float, float]], lang: str,
             with_pollutants: bool) -> dict[str, Any]:
    """Build the AirQuality fields from each pollutant's (concentration, global index)."""
    dominant = max(POLLUTANTS, key=lambda p: (values[p.type][1], -POLLUTANTS.index(p)))
    gi = float(values[dominant.type][1])
    cat = category_of(gi)
    name, text = CATEGORY_TEXT[lang][cat]
    out: dict[str, Any] = {
        "index": round(gi * dominant.local, 1),
        "globalIndex": gi,
        "dominantPollutant": dominant.name,
        "category": name,
        "categoryColor": CATEGORY_COLORS[cat],
        "description": text,
    }
    if with_pollutants:
        out["pollutants"] = [
            {"type": p.type, "name": p.name, "index": round(values[p.type][1] * p.local, 1),
             "globalIndex": float(values[p.type][1]),
             "concentration": {"value": float(values[p.type][0]), "unit": UNIT,
                               "unitType": UNIT_TYPE}}
            for p in sorted(POLLUTANTS, key=lambda p: ("NO2", "O3", "PM10", "PM2.5", "CO",
                                                       "SO2").index(p.type))
        ]
    return out


def _iso(t: datetime) -> str:
    return t.isoformat(timespec="seconds")


def hourly_reading(ww: WeatherWorld, lon: float, lat: float, at: datetime, *,
                   language: str | None = None, pollutants: bool = True) -> dict[str, Any]:
    """Build the AirQuality record at the top of the hour of ``at``."""
    hour = at.astimezone(UTC).replace(minute=0, second=0, microsecond=0)
    idx = _pollutant_indices(concentrations(ww, lon, lat, [hour]))
    values = {k: (float(c[0]), float(g[0])) for k, (c, g) in idx.items()}
    return {"dateTime": _iso(hour), **_reading(values, language_of(language), pollutants)}


def daily_forecast(ww: WeatherWorld, lon: float, lat: float, at: datetime, duration: int, *,
                   language: str | None = None) -> list[dict[str, Any]]:
    """Build DailyAirQuality records from the local day of ``at`` on.

    Per pollutant the day's highest hourly index.
    """
    tz = ww.timezone_at(lon, lat)
    today: date = at.astimezone(tz).date()
    out = []
    lang = language_of(language)
    for d in range(duration):
        day = today + timedelta(days=d)
        start = datetime(day.year, day.month, day.day, tzinfo=tz)
        hours = [(start + timedelta(hours=k)).astimezone(UTC) for k in range(25)]
        hours = [x for x in hours if x.astimezone(tz).date() == day]
        idx = _pollutant_indices(concentrations(ww, lon, lat, hours))
        values = {}
        for k, (c, g) in idx.items():
            j = int(np.argmax(g))
            values[k] = (float(c[j]), float(g[j]))
        rec = _reading(values, lang, with_pollutants=False)
        out.append({"dateTime": _iso(start.astimezone(UTC)), **rec})
    return out


def hourly_forecast(ww: WeatherWorld, lon: float, lat: float, at: datetime, duration: int, *,
                    language: str | None = None, pollutants: bool = True
                    ) -> list[dict[str, Any]]:
    """Build AirQuality records of ``duration`` hours from the top of the hour of ``at`` on.

    The field at each hour, as :func:`hourly_reading` reads it: the first record is the current
    reading, and each hour's pollutants are at most their day's in :func:`daily_forecast`.
    """
    first = at.astimezone(UTC).replace(minute=0, second=0, microsecond=0)
    hours = [first + timedelta(hours=k) for k in range(duration)]
    idx = _pollutant_indices(concentrations(ww, lon, lat, hours))
    lang = language_of(language)
    out = []
    for k, hour in enumerate(hours):
        values = {p: (float(c[k]), float(g[k])) for p, (c, g) in idx.items()}
        out.append({"dateTime": _iso(hour), **_reading(values, lang, pollutants)})
    return out


# ------------------------------------------------------------------------------ alerts

_ALERT_TEXT = {
    "snow": {"en": "Snow Warning", "ca": "Avís per neu", "fr": "Avertissement de neige",
             "es": "Aviso por nieve"},
    "wind": {"en": "Wind Warning", "ca": "Avís per vent", "fr": "Avertissement de vent",
             "es": "Aviso por viento"},
    "air": {"en": "Air Quality Alert", "ca": "Alerta per qualitat de l'aire",
            "fr": "Alerte qualité de l'air", "es": "Alerta por calidad del aire"},
    "ice": {"en": "Black Ice Advisory", "ca": "Avís per gel a la calçada",
            "fr": "Avis de verglas", "es": "Aviso por hielo en la calzada"},
}
_DETAILS_CA = {
    "snow": ("Nevades a partir de 1.600 m amb acumulacions de 20 a 40 cm a les cotes altes. "
             "Cal portar cadenes al Port d'Envalira i a la carretera d'Arcalís."),
    "wind": ("Ràfegues de vent del nord de 80 a 100 km/h a les crestes i de 60 km/h a les "
             "valls altes. Precaució amb els remuntadors i les activitats de muntanya."),
    "air": ("Situació d'inversió tèrmica persistent: els nivells de diòxid de nitrogen i de "
            "partícules als fons de vall poden superar els llindars d'informació. Es recomana "
            "reduir l'ús del vehicle privat i l'activitat física intensa a l'exterior."),
    "ice": ("Temperatures negatives a la matinada amb risc de gel a la calçada, sobretot a les "
            "carreteres generals CG-2 i CG-3 a partir de 1.300 m."),
}
_SUMMARY = {
    "en": "{kind} in effect until {until}. Source: {source}",
    "ca": "{kind} vigent fins {until}. Font: {source}",
    "fr": "{kind} en vigueur jusqu'à {until}. Source : {source}",
    "es": "{kind} vigente hasta {until}. Fuente: {source}",
}


def _alert_id(seed: int, k: int, j: int) -> int:
    h = hashlib.sha256(f"{seed}:alert:{k}:{j}".encode()).digest()
    return 200_000 + int.from_bytes(h[:4], "big") % 700_000


def _make_cycle(ww: WeatherWorld, k: int) -> tuple[Episode, list[Alert]]:
    rng = random.Random(f"{ww.seed}:weather-cycle:{k}")
    c0 = ANCHOR + k * CYCLE
    hours = lambda x: timedelta(hours=x)  # noqa: E731
    ep_start = c0 + hours(rng.randint(30, 38))
    episode = Episode(ep_start, ep_start + hours(rng.randint(62, 74)),
                      round(rng.uniform(2.3, 2.7), 2))

    def area(name: str, start: datetime, end: datetime, issued: datetime,
             steps: list[tuple[datetime, str]]) -> AlertArea:
        return AlertArea(name, start, end, [(issued, "New"), *steps])

    alerts: list[Alert] = []
    # snow: already running at the start of the cycle
    issued = c0 - hours(20 + rng.randint(0, 2))
    start, end = c0 - hours(14), c0 + hours(15 + rng.randint(0, 3))
    snow = Alert(_alert_id(ww.seed, k, 0), "snow", "WINTER", 12, ("Moderate", "Moderate"),
                 [area(p, start, end, issued, [(c0 - hours(6), "Correct"),
                                                (c0 + hours(3), "Continue"), (end, "Expire")])
                  for p in ("Canillo", "Encamp", "Ordino")], issued, "Snow", _DETAILS_CA["snow"])
    alerts.append(snow)
    # wind: issued just before the cycle, cancelled early in the high valleys
    issued = c0 - hours(3)
    start, end = c0 + hours(4), c0 + hours(20)
    wind = Alert(_alert_id(ww.seed, k, 1), "wind", "WIND", 17, ("Moderate", "Moderate"),
                 [area("Canillo", start, end, issued, [(c0 + hours(2), "Update"),
                                                       (c0 + hours(10), "Cancel")]),
                  area("Ordino", start, end, issued, [(c0 + hours(2), "Update"),
                                                      (c0 + hours(10), "Cancel")]),
                  area("La Massana", start, end, issued, [(c0 + hours(2), "Update"),
                                                          (end, "Expire")])],
                 issued, "Wind", _DETAILS_CA["wind"])
    alerts.append(wind)
    # air quality: announced ahead of the episode over the valley parishes
    issued = episode.start - hours(40)
    peak = episode.start + hours(22)
    valley = ("Andorra la Vella", "Escaldes-Engordany", "Sant Julià de Lòria", "Encamp",
              "La Massana")
    areas = []
    for p in valley:
        steps: list[tuple[datetime, str]] = [(episode.start, "Update")]
        if p in ("Andorra la Vella", "Escaldes-Engordany"):
            steps += [(peak, "Upgrade"), (episode.end - hours(14), "Extend"),
                      (episode.end + hours(12), "Expire")]
        elif p == "La Massana":
            steps += [(peak + hours(8), "Cancel")]
        else:
            steps += [(peak, "Continue"), (episode.end, "Expire")]
        areas.append(area(p, episode.start, episode.end, issued, steps))
    alerts.append(Alert(_alert_id(ww.seed, k, 2), "air", "NON-PRECIPITATION", 21,
                        ("Moderate", "High"), areas, issued, None, _DETAILS_CA["air"],
                        "Levels come from the national air-quality monitoring network and may "
                        "change quickly; the alert follows the forecast of the episode."))
    # black ice after the episode clears
    issued = episode.end + hours(6)
    start, end = issued + hours(2), issued + hours(20)
    alerts.append(Alert(_alert_id(ww.seed, k, 3), "ice", "WINTER", 25, ("Minor", "Minor"),
                        [area(p, start, end, issued, [(start + hours(8), "Extend"),
                                                      (end + hours(12), "Expire")])
                         for p in ("Encamp", "Canillo", "Escaldes-Engordany")],
                        issued, "Ice", _DETAILS_CA["ice"]))
    return episode, alerts


def alerts_at(ww: WeatherWorld, parish: str | None, at: datetime) -> list[tuple[Alert,
                                                                               list[tuple[
                                                                                   AlertArea,
                                                                                   str]]]]:
    """List the alerts listed at ``at`` for a location in ``parish``, highest priority first.

    Each with its listed areas and their statuses; highest priority is the lowest number.
    """
    if parish is None:
        return []
    k = ww.cycle_index(at)
    found = []
    for kk in (k - 1, k, k + 1):
        for alert in ww.cycle(kk)[1]:
            listed = [(a, s) for a in alert.areas if (s := a.status_at(at)) is not None]
            if any(a.name == parish for a, _ in listed):
                found.append((alert, listed))
    found.sort(key=lambda x: (x[0].priority, x[0].alert_id))
    return found


def alert_record(alert: Alert, listed: list[tuple[AlertArea, str]], at: datetime, tz: tzinfo,
                  lang: str, details: bool) -> dict[str, Any]:
    """Build the service's alert record of an alert and its listed areas, in ``lang``."""
    title = _ALERT_TEXT[alert.kind]
    upgraded = any(s == "Upgrade" or any(st == "Upgrade" and w <= at for w, st in a.events)
                   for a, s in listed)
    rec: dict[str, Any] = {
        "countryCode": "AD",
        "alertId": alert.alert_id,
        "description": {"localized": title.get(lang, title["en"]), "english": title["en"]},
        "category": alert.category,
        "priority": alert.priority,
        "level": alert.levels[1] if upgraded else alert.levels[0],
        "source": SOURCE,
        "sourceId": SOURCE_ID,
    }
    if alert.cls:
        rec["class"] = alert.cls
    if alert.disclaimer:
        rec["disclaimer"] = alert.disclaimer
    areas = []
    for a, status in listed:
        end = a.end_at(at)
        local_end = end.astimezone(tz)
        until = local_end.strftime("%A %H:%M %Z")
        summary = _SUMMARY.get(lang, _SUMMARY["en"]).format(
            kind=title.get(lang, title["en"]), until=until, source=SOURCE)
        item: dict[str, Any] = {
            "name": a.name,
            "summary": summary,
            "startTime": _iso(a.start.astimezone(tz)),
            "endTime": _iso(local_end),
            "latestStatus": {"localized": STATUS_TEXT.get(lang, {}).get(status, status),
                             "english": status},
        }
        if details:
            item["alertDetails"] = alert.details_ca
            item["alertDetailsLanguageCode"] = "ca-AD"
        areas.append(item)
    rec["alertAreas"] = areas
    return rec


# ------------------------------------------------------------------------------ building


def build_world(world: World) -> WeatherWorld:
    """Build the weather section: the urban/road intensity grid and the places of the maps world."""
    proj, origin, shape, urban, places, bounds = _ground()
    return WeatherWorld(world.seed, proj, origin, shape, urban, list(places), bounds)


@lru_cache(maxsize=1)
def _ground() -> tuple[LocalProjection, tuple[float, float], tuple[int, int], np.ndarray,
                     list[tuple[str, str, float, float]], tuple[float, float, float, float]]:
    """Build, once a process, the ground every world's weather stands on.

    It is the same whatever the seed: the projection, the grid (origin, shape and the urban/road
    intensity, read-only) and the places.
    """
    from toolkit.sandbox.maps.roads.network import network
    from toolkit.sandbox.maps.search import entities

    net = network()
    places = [(e.name, e.parish or "", e.lon, e.lat) for e in entities()
              if e.type == "PopulatedPlace" and e.weight <= 2]
    lon0, lat0 = float(net.lonlat[:, 0].mean()), float(net.lonlat[:, 1].mean())
    proj = LocalProjection(lon0, lat0)
    w, s = net.lonlat.min(axis=0) - 0.03
    e, n = net.lonlat.max(axis=0) + 0.03
    (x0, y0), (x1, y1) = proj.forward(np.array([[w, s], [e, n]]))
    nx, ny = int((x1 - x0) / GRID_M) + 1, int((y1 - y0) / GRID_M) + 1
    road_w = {"trunk": 1.0, "primary": 1.0, "primary_link": 0.5, "trunk_link": 0.5,
              "secondary": 0.4, "secondary_link": 0.3, "tertiary": 0.3, "unclassified": 0.08,
              "residential": 0.1, "road": 0.08, "service": 0.03, "living_street": 0.03}
    roads = np.zeros((ny, nx))
    for edge in range(net.n_edges):
        weight = road_w.get(net.highway[edge], 0.05)
        ref = net.way_of(edge).get("ref")
        if ref in ("CG-1", "CG-2"):
            weight *= 1.6
        xy = proj.forward(net.edge_coords[edge])
        seg = np.hypot(*np.diff(xy, axis=0).T)
        for (ax, ay), (bx, by), length in zip(xy[:-1], xy[1:], seg, strict=True):
            k = max(1, int(length / 50))
            f = (np.arange(k) + 0.5) / k
            px = ((ax + (bx - ax) * f) - x0) / GRID_M
            py = ((ay + (by - ay) * f) - y0) / GRID_M
            ok = (px >= 0) & (px < nx) & (py >= 0) & (py < ny)
            np.add.at(roads, (py[ok].astype(int), px[ok].astype(int)), weight * length / k)
    towns = np.zeros((ny, nx))
    for e_ in entities():
        if e_.type != "PopulatedPlace" or e_.weight > 2:
            continue
        px, py = proj.forward(np.array([[e_.lon, e_.lat]]))[0]
        ix, iy = int((px - x0) / GRID_M), int((py - y0) / GRID_M)
        if 0 <= ix < nx and 0 <= iy < ny:
            towns[iy, ix] += TOWN_WEIGHTS.get(e_.name, {0: 0.3, 1: 0.12, 2: 0.04}[e_.weight])
    road_field = _blur(roads, 250.0 / GRID_M)
    town_field = _blur(towns, 900.0 / GRID_M)
    raw = road_field / np.percentile(road_field[road_field > 0], 99.5) + \
        town_field / town_field.max()
    urban = 1 - np.exp(-1.1 * raw)
    urban = urban / urban.max() * 0.97
    urban.flags.writeable = False  # shared by every world of the process
    return (proj, (x0, y0), (ny, nx), urban, places, (float(w), float(s), float(e), float(n)))


def _blur(grid: np.ndarray, sigma: float) -> np.ndarray:
    radius = int(3 * sigma) + 1
    k = np.exp(-0.5 * (np.arange(-radius, radius + 1) / sigma) ** 2)
    k /= k.sum()
    out = np.apply_along_axis(lambda r: np.convolve(r, k, mode="same"), 1, grid)
    return np.apply_along_axis(lambda c: np.convolve(c, k, mode="same"), 0, out)


def catalog_rows(section: WeatherWorld) -> list[dict[str, Any]]:
    """List the current cycle's episode and alerts, for :func:`toolkit.sandbox.catalog`."""
    episode, alerts = section.cycle(0)
    rows = [{"kind": "air_quality_episode", "name": "stagnation episode",
             "location": "valley parishes",
             "detail": f"{_iso(episode.start)} to {_iso(episode.end)}, up to "
                       f"x{episode.strength:.1f} the usual valley pollution; weather air "
                       "quality"}]
    for a in alerts:
        rows.append({"kind": "weather_alert", "name": _ALERT_TEXT[a.kind]["en"],
                     "location": ", ".join(x.name for x in a.areas),
                     "detail": f"alertId {a.alert_id}, priority {a.priority}, issued "
                               f"{_iso(a.issued)}; weather severe alerts"})
    return rows
