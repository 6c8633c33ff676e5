"""Coordinates in one place: order, input shapes, bounding boxes, sizes in metres and degrees.

A plain pair is always *(longitude, latitude)* in the toolkit, as GeoJSON and shapely have it,
whatever order a service's own query string uses (search, route and traffic take
``lon,lat``; weather takes ``lat,lon``): :func:`lonlat_param` and :func:`latlon_param` write
them in the order a service wants. Inside the toolkit coordinates are ``(lon, lat)`` arrays.
Inputs may be a ``(lon, lat)`` pair, a sequence of pairs, shapely points (or any geometry's
coordinates), a GeoSeries, a GeoDataFrame (reprojected to EPSG:4326 when they have another
CRS), a DataFrame with longitude/latitude columns, an ``(n, 2)`` array or, where the function
resolves them (``places=``), place names. Every value is checked for range and finiteness, and a
bad one raises :class:`~toolkit._core.errors.ValidationError` naming the parameter, the position
and the pair as read. A pair that is valid both ways is taken as ``(lon, lat)``: the order is
never guessed.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol, TypeAlias, overload

import numpy as np
from numpy.typing import ArrayLike, NDArray

from toolkit._core.errors import ValidationError

if TYPE_CHECKING:
    import geopandas as gpd
    import pandas as pd
    import shapely
    from shapely.geometry.base import BaseGeometry

__all__ = [
    "COORDINATE_DECIMALS",
    "EARTH_RADIUS_M",
    "BBoxLike",
    "HasBounds",
    "LocalProjection",
    "LocationLike",
    "LocationsLike",
    "PlaceResolver",
    "PointLike",
    "PointsLike",
    "bbox_param",
    "bbox_size_m",
    "check_bbox_size",
    "coordinate_text",
    "geojson_geometry",
    "haversine_m",
    "latlon_param",
    "location_names",
    "lonlat_param",
    "path_length_m",
    "to_bbox",
    "to_lonlat",
    "to_point",
]

EARTH_RADIUS_M = 6_371_008.8



class HasBounds(Protocol):
    """Anything with a ``bounds`` of four numbers ``(min_lon, min_lat, max_lon, max_lat)``."""

    @property
    def bounds(self) -> Sequence[float] | NDArray[Any]: ...


# The aliases are strings so that importing this module imports neither shapely nor geopandas.

#: One point: a ``(lon, lat)`` pair or a shapely Point.
PointLike: TypeAlias = "Sequence[float] | NDArray[Any] | shapely.Point"

#: One location: a point, or a place name where the function resolves names (through geocode).
LocationLike: TypeAlias = "str | Sequence[float] | NDArray[Any] | shapely.Point"

#: Any number of points: one point, a sequence of pairs or of shapely Points, a MultiPoint or
#: LineString, a GeoSeries or GeoDataFrame of Points (reprojected to EPSG:4326), a DataFrame with
#: longitude and latitude columns, or an ``(n, 2)`` array.
PointsLike: TypeAlias = (
    "Sequence[float] | Sequence[Sequence[float]] | Sequence[shapely.Point] | NDArray[Any]"
    " | shapely.Point | shapely.MultiPoint | shapely.LineString"
    " | gpd.GeoSeries | gpd.GeoDataFrame | pd.DataFrame"
)

#: Any number of locations: :data:`PointsLike`, or place names (one, a sequence, or a sequence
#: mixing names and points, or a Series of names) where the function resolves names.
LocationsLike: TypeAlias = "str | Sequence[str | Sequence[float] | shapely.Point] | PointsLike"

#: How a function resolves place names: the distinct names asked -> ``name: (lon, lat, ...)``.
PlaceResolver: TypeAlias = "Callable[[list[str]], Mapping[str, Sequence[Any]]]"

#: A bounding box: four numbers ``(min_lon, min_lat, max_lon, max_lat)``, a shapely geometry,
#: a GeoSeries or GeoDataFrame (its total bounds), or anything with such ``bounds``.
BBoxLike: TypeAlias = (
    "Sequence[float] | NDArray[Any] | shapely.Geometry | gpd.GeoSeries | gpd.GeoDataFrame"
    " | HasBounds"
)

_LON_NAMES = ("lon", "lng", "long", "longitude", "x")
_LAT_NAMES = ("lat", "latitude", "y")


def _column(df: pd.DataFrame, names: Sequence[str]) -> str | None:
    lower = {str(c).lower(): str(c) for c in df.columns}
    for n in names:
        if n in lower:
            return lower[n]
    return None


def _from_geometries(geoms: Sequence[object], parameter: str) -> np.ndarray:
    from shapely.geometry import Point
    from shapely.geometry.base import BaseGeometry

    out = np.empty((len(geoms), 2), dtype=float)
    for i, g in enumerate(geoms):
        if g is None or (isinstance(g, float) and math.isnan(g)):
            raise ValidationError(f"{parameter}[{i}]", g, "must be a point, not missing")
        if not isinstance(g, BaseGeometry):
            raise ValidationError(f"{parameter}[{i}]", g, "must be a shapely Point")
        if not isinstance(g, Point) or g.is_empty:
            raise ValidationError(f"{parameter}[{i}]", g.geom_type,
                                  "must be a Point (longitude, latitude)")
        out[i] = (g.x, g.y)
    return out


def _in_4326(obj: Any) -> Any:
    """Bring a GeoSeries/GeoDataFrame into EPSG:4326.

    Reprojected when it has another CRS (none is taken as longitude/latitude already).
    """
    crs = getattr(obj, "crs", None)
    if crs is None or not hasattr(obj, "to_crs"):
        return obj
    try:
        epsg = crs.to_epsg()
    except Exception:  # pragma: no cover - exotic CRS objects
        epsg = None
    return obj if epsg == 4326 else obj.to_crs(4326)


_ORDER = "(longitude, latitude)"


def location_names(value: object) -> list[str | None] | None:
    """Find the place names among locations, one entry per location (``None`` for a point).

    ``None`` when ``value`` holds no name.
    """
    import pandas as pd

    if isinstance(value, str):
        return [value]
    if isinstance(value, pd.Series) and not hasattr(value, "crs") and len(value) and all(
            isinstance(v, str) for v in value):
        return list(value)
    if isinstance(value, list | tuple) and any(isinstance(v, str) for v in value):
        return [v if isinstance(v, str) else None for v in value]
    return None


def _named(value: object, names: list[str | None], parameter: str,
           places: PlaceResolver | None) -> np.ndarray:
    """Read locations given (at least partly) by name.

    The points are checked first, then the names resolved in one call of ``places``.
    """
    items = [value] if isinstance(value, str) else list(value)  # type: ignore[call-overload]
    arr = np.full((len(items), 2), np.nan)
    for i, (item, name) in enumerate(zip(items, names, strict=True)):
        where = f"{parameter}[{i}]" if not isinstance(value, str) else parameter
        if name is None:
            arr[i] = to_point(item, where)
        elif not name.strip():
            raise ValidationError(where, name, "a place name must not be empty")
    asked = [n for n in dict.fromkeys(n for n in names if n is not None)]
    if places is None:
        raise ValidationError(parameter, asked[0] if len(asked) == 1 else asked,
                              f"must be {_ORDER} points; this function does not look up "
                              "place names (toolkit.geocode gives their coordinates)")
    found = places(asked)
    for i, name in enumerate(names):
        if name is not None:
            hit = found[name]
            arr[i] = (float(hit[0]), float(hit[1]))
    return arr


def to_lonlat(value: object, parameter: str, *, min_points: int = 1,
              places: PlaceResolver | None = None) -> np.ndarray:
    """Any supported input as an ``(n, 2)`` float array of ``(lon, lat)``.

    Parameters
    ----------
    value
        A ``(lon, lat)`` pair, a sequence of pairs, a shapely Point or sequence of Points, a
        GeoSeries/GeoDataFrame of Points (reprojected to EPSG:4326 when in another CRS), a
        DataFrame with longitude and latitude columns (``lon``/``lng``/``longitude``/``x`` and
        ``lat``/``latitude``/``y``), an ``(n, 2)`` array, or (with ``places``) place names: one,
        a sequence (names and points mixed) or a Series of names.
    parameter : str
        Name used in errors.
    min_points : int
        Fewest points accepted.
    places : callable, optional
        Resolves the distinct names asked to ``name: (lon, lat, ...)`` (raising
        ValidationError for a name it cannot place); called once, after every point given as
        coordinates was checked. Without it a name is refused.
    """
    import pandas as pd
    import shapely
    from shapely.geometry.base import BaseGeometry

    arr: np.ndarray
    names = location_names(value)
    if names is not None:
        arr = _named(value, names, parameter, places)
    elif value is None or isinstance(value, bytes | dict):
        raise ValidationError(parameter, value, f"must be {_ORDER} points")
    elif isinstance(value, BaseGeometry):
        if isinstance(value, shapely.Point):
            arr = _from_geometries([value], parameter)
        elif isinstance(value, shapely.MultiPoint | shapely.LineString):
            arr = np.asarray(shapely.get_coordinates(value), dtype=float)
        else:
            raise ValidationError(parameter, value.geom_type,
                                  "must be a Point, MultiPoint or LineString")
    elif isinstance(value, pd.DataFrame):
        frame: pd.DataFrame = _in_4326(value)
        geom_name = getattr(frame, "_geometry_column_name", None)
        lon_col, lat_col = _column(frame, _LON_NAMES), _column(frame, _LAT_NAMES)
        if geom_name is not None and geom_name in frame.columns:
            arr = _from_geometries(list(frame[geom_name]), parameter)
        elif lon_col is not None and lat_col is not None:
            arr = np.column_stack([pd.to_numeric(frame[lon_col], errors="coerce"),
                                   pd.to_numeric(frame[lat_col], errors="coerce")]).astype(float)
        else:
            raise ValidationError(parameter, f"columns {list(frame.columns)[:6]}",
                                  "a DataFrame needs a geometry column of Points or longitude "
                                  "and latitude columns (lon/lat)")
    elif isinstance(value, pd.Series):
        arr = _from_geometries(list(_in_4326(value)), parameter)
    else:
        items: np.ndarray | list[object]
        if isinstance(value, np.ndarray):
            items = value
        elif isinstance(value, Iterable):
            items = list(value)
        else:
            raise ValidationError(parameter, value, f"must be {_ORDER} points")
        if len(items) == 0:
            arr = np.empty((0, 2))
        elif isinstance(items, list) and all(isinstance(g, BaseGeometry) for g in items):
            arr = _from_geometries(items, parameter)
        else:
            a = np.asarray(items, dtype=object)
            single = a.ndim == 1 and len(a) in (2, 3) and all(
                isinstance(v, int | float | np.number) and not isinstance(v, bool) for v in a)
            if single:
                a = a[None, :]
            if a.ndim != 2 or a.shape[1] not in (2, 3):
                raise ValidationError(parameter, value,
                                      f"must be a {_ORDER} pair or a sequence of pairs")
            try:
                arr = np.asarray(a[:, :2], dtype=float)
            except (TypeError, ValueError):
                raise ValidationError(parameter, value,
                                      "coordinates must be numbers") from None
            _check_range(arr, parameter, indexed=not single)
    arr = np.ascontiguousarray(arr, dtype=float)
    if len(arr) < min_points:
        raise ValidationError(parameter, f"{len(arr)} points",
                              f"must have at least {min_points} point"
                              f"{'s' if min_points != 1 else ''}")
    _check_range(arr, parameter, indexed=len(arr) > 1)
    return arr


def _check_range(arr: np.ndarray, parameter: str, *, indexed: bool) -> None:
    """Check for finite numbers, longitude in [-180, 180] and latitude in [-90, 90].

    The error names the toolkit's order and shows the pair as read.
    """
    bad = ~np.isfinite(arr).all(axis=1)
    lon_bad = ~bad & ((arr[:, 0] < -180) | (arr[:, 0] > 180))
    lat_bad = ~bad & ((arr[:, 1] < -90) | (arr[:, 1] > 90))
    wrong = bad | lon_bad | lat_bad
    if not wrong.any():
        return
    i = int(np.flatnonzero(wrong)[0])
    where = f"{parameter}[{i}]" if indexed else parameter
    pair = tuple(float(v) for v in arr[i])
    if bad[i]:
        raise ValidationError(where, pair, f"must be {_ORDER} with finite numbers")
    what = "longitude in [-180, 180]" if lon_bad[i] else "latitude in [-90, 90]"
    raise ValidationError(where, pair, f"must be {_ORDER} with {what}" + _swap_hint(arr[i]))


def _swap_hint(lonlat: np.ndarray) -> str:
    """Note an out-of-range pair that would be in range the other way round."""
    lon, lat = float(lonlat[0]), float(lonlat[1])
    if not (-90 <= lon <= 90 and -180 <= lat <= 180):
        return ""
    return (f"; this pair looks like (latitude, longitude): pass ({lat:g}, {lon:g}) instead")


def to_point(value: object, parameter: str, *, places: PlaceResolver | None = None
             ) -> tuple[float, float]:
    """Exactly one point as ``(lon, lat)`` (a name too, resolved by ``places``)."""
    arr = to_lonlat(value, parameter, places=places)
    if len(arr) != 1:
        raise ValidationError(parameter, f"{len(arr)} points", f"must be one {_ORDER} point")
    return float(arr[0, 0]), float(arr[0, 1])


#: Decimals of a coordinate in a query string: 6 is 0.11 m of latitude (and at most that of
#: longitude) anywhere on Earth. Significant digits would lose precision with the integer part:
#: 7 of them are 4 decimals (11 m) past 100 degrees of longitude.
COORDINATE_DECIMALS = 6


def coordinate_text(value: float) -> str:
    """Write one coordinate for a query string: 6 decimals, trailing zeros dropped.

    Parameters
    ----------
    value : float
        Degrees of longitude or latitude.

    Returns
    -------
    str
        ``-122.123457`` for -122.1234567, ``1.5`` for 1.5, ``0`` for -0.0000001.
    """
    text = f"{value:.{COORDINATE_DECIMALS}f}".rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text


def lonlat_param(lon: float, lat: float) -> str:
    """``lon,lat`` as search, route and traffic want it (6 decimals each)."""
    return f"{coordinate_text(lon)},{coordinate_text(lat)}"


def latlon_param(lon: float, lat: float) -> str:
    """``lat,lon`` as weather wants it (6 decimals each)."""
    return f"{coordinate_text(lat)},{coordinate_text(lon)}"


def to_bbox(value: object, parameter: str = "bbox") -> tuple[float, float, float, float]:
    """Read a bounding box ``(min_lon, min_lat, max_lon, max_lat)``.

    Accepts a 4-sequence, a shapely geometry (``.bounds``), a GeoSeries/GeoDataFrame
    (``.total_bounds``) or anything whose ``bounds`` is a 4-sequence. Checks ranges and order.
    """
    raw: Any = value  # duck-typed: total bounds, bounds or the four numbers themselves
    if hasattr(raw, "total_bounds"):
        raw = _in_4326(raw).total_bounds
    elif hasattr(raw, "bounds") and not isinstance(raw, list | tuple | np.ndarray):
        raw = raw.bounds
    if isinstance(raw, str) or raw is None:
        raise ValidationError(parameter, value, "must be (min_lon, min_lat, max_lon, max_lat) or "
                              "an object with bounds")
    try:
        vals = [float(v) for v in raw]
    except (TypeError, ValueError):
        raise ValidationError(parameter, value, "must be 4 numbers (min_lon, min_lat, max_lon, "
                              "max_lat) or an object with bounds") from None
    if len(vals) != 4:
        raise ValidationError(parameter, value, "must be 4 numbers (min_lon, min_lat, max_lon, "
                              "max_lat)")
    if not all(math.isfinite(v) for v in vals):
        raise ValidationError(parameter, value, "coordinates must be finite numbers")
    w, s, e, n = vals
    if not (-180 <= w <= 180 and -180 <= e <= 180):
        raise ValidationError(parameter, value, "longitudes must be between -180 and 180 (the "
                              "order is min_lon, min_lat, max_lon, max_lat)")
    if not (-90 <= s <= 90 and -90 <= n <= 90):
        raise ValidationError(parameter, value, "latitudes must be between -90 and 90 (the order "
                              "is min_lon, min_lat, max_lon, max_lat)")
    if s > n or w > e:
        raise ValidationError(parameter, value, "min_lon must not exceed max_lon nor min_lat "
                              "max_lat (order: min_lon, min_lat, max_lon, max_lat)")
    return w, s, e, n


def bbox_param(bbox: Sequence[float]) -> str:
    """``min_lon,min_lat,max_lon,max_lat`` (6 decimals each)."""
    return ",".join(coordinate_text(v) for v in bbox)


@overload
def haversine_m(lon1: float, lat1: float, lon2: float, lat2: float) -> float: ...
@overload
def haversine_m(lon1: ArrayLike, lat1: ArrayLike, lon2: ArrayLike, lat2: ArrayLike
                ) -> NDArray[np.float64]: ...
def haversine_m(lon1: ArrayLike, lat1: ArrayLike, lon2: ArrayLike, lat2: ArrayLike) -> Any:
    """Great-circle distance in metres (scalars give a float, arrays an array)."""
    p1, p2 = np.radians(lat1), np.radians(lat2)
    dp, dl = p2 - p1, np.radians(np.asarray(lon2) - np.asarray(lon1))
    h = np.sin(dp / 2) ** 2 + np.cos(p1) * np.cos(p2) * np.sin(dl / 2) ** 2
    return 2 * EARTH_RADIUS_M * np.arcsin(np.sqrt(np.clip(h, 0, 1)))


def path_length_m(lonlat: np.ndarray) -> np.ndarray:
    """Distances between consecutive points (length ``n - 1``), metres."""
    if len(lonlat) < 2:
        return np.zeros(0)
    return haversine_m(lonlat[:-1, 0], lonlat[:-1, 1], lonlat[1:, 0], lonlat[1:, 1])


def bbox_size_m(bbox: Sequence[float]) -> tuple[float, float]:
    """Width (along the parallel nearest the equator) and height of a bbox, metres."""
    w, s, e, n = bbox
    lat = s if abs(s) < abs(n) else n
    if s <= 0 <= n:
        lat = 0.0
    width = float(haversine_m(w, lat, e, lat)) if e - w <= 180 else \
        math.radians(e - w) * EARTH_RADIUS_M * math.cos(math.radians(lat))
    height = float(haversine_m(w, s, w, n))
    return width, height


def _num(value: float) -> str:
    return f"{value:.10f}".rstrip("0").rstrip(".")


def check_bbox_size(bbox: Sequence[float], parameter: str = "bbox", *,
                    min_deg: float | None = None, max_deg: float | None = None,
                    min_m: float | None = None, max_m: float | None = None) -> None:
    """Check a bbox's width and height against limits in degrees and/or metres."""
    w, s, e, n = bbox
    dw, dh = e - w, n - s
    if min_deg is not None and (dw < min_deg or dh < min_deg):
        raise ValidationError(parameter, tuple(bbox), f"width and height must be at least "
                              f"{_num(min_deg)} degrees (got {dw:.3g} x {dh:.3g})")
    if max_deg is not None and (dw > max_deg or dh > max_deg):
        raise ValidationError(parameter, tuple(bbox), f"width and height must be at most "
                              f"{_num(max_deg)} degrees (got {dw:.3g} x {dh:.3g})")
    if min_m is not None or max_m is not None:
        wm, hm = bbox_size_m(bbox)
        if min_m is not None and (wm < min_m or hm < min_m):
            raise ValidationError(parameter, tuple(bbox), f"width and height must be at least "
                                  f"{min_m:g} m (got {wm:,.0f} m x {hm:,.0f} m)")
        if max_m is not None and (wm > max_m or hm > max_m):
            raise ValidationError(parameter, tuple(bbox), f"width and height must be at most "
                                  f"{max_m:,.0f} m (got {wm:,.0f} m x {hm:,.0f} m)")


#: The GeoJSON geometry types (RFC 7946 §3.1).
GEOMETRY_TYPES = ("Point", "MultiPoint", "LineString", "MultiLineString", "Polygon",
                  "MultiPolygon", "GeometryCollection")
_GEOMETRY_NAMES = {name.lower(): name for name in GEOMETRY_TYPES}


def geojson_geometry(value: object, *, empty: str | None = None) -> BaseGeometry | None:
    """Read a GeoJSON geometry dict as a shapely geometry.

    ``None`` (the service sends ``null`` for geometries it does not have) stays ``None``; a
    geometry with no coordinates becomes an empty geometry of its type. ``empty`` names the type
    to use when ``value`` is missing altogether (e.g. ``"MultiLineString"`` for a failed route).
    """
    import shapely
    from shapely.errors import ShapelyError
    from shapely.geometry import shape

    raw = value.get("type") if isinstance(value, dict) else None
    kind = _GEOMETRY_NAMES.get(raw.lower()) if isinstance(raw, str) else None
    if kind is None or not isinstance(value, dict):
        if empty is None:
            return None
        return shapely.from_wkt(f"{empty.upper()} EMPTY")
    coords = value.get("coordinates")
    if kind != "GeometryCollection" and (
            coords is None or (isinstance(coords, list) and len(coords) == 0)):
        return shapely.from_wkt(f"{kind.upper()} EMPTY")
    try:
        return shape(value)
    except (ValueError, TypeError, AttributeError, KeyError, IndexError, ShapelyError):
        return None


class LocalProjection:
    """An equirectangular projection to metres around a reference point.

    Good to well under 0.1 % over a few tens of kilometres: enough to measure, snap and route at
    city or country scale without a projection library.
    """

    def __init__(self, lon0: float, lat0: float) -> None:
        self.lon0 = lon0
        self.lat0 = lat0
        self.kx = math.radians(1) * EARTH_RADIUS_M * math.cos(math.radians(lat0))
        self.ky = math.radians(1) * EARTH_RADIUS_M

    def forward(self, lonlat: np.ndarray) -> np.ndarray:
        """``(n, 2)`` lon/lat to metres east/north of the reference."""
        a = np.asarray(lonlat, dtype=float)
        return np.column_stack([(a[..., 0] - self.lon0) * self.kx,
                                (a[..., 1] - self.lat0) * self.ky])

    def inverse(self, xy: np.ndarray) -> np.ndarray:
        """Metres back to lon/lat."""
        a = np.asarray(xy, dtype=float)
        return np.column_stack([a[..., 0] / self.kx + self.lon0, a[..., 1] / self.ky + self.lat0])
