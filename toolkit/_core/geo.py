"""Coordinates in one place: order, input shapes, bounding boxes, sizes in metres and degrees.

The services mix coordinate orders: search, route and traffic take *longitude, latitude*
(GeoJSON order), weather takes *latitude, longitude*. Inside the toolkit coordinates are always
``(lon, lat)`` arrays; :func:`lonlat_param` and :func:`latlon_param` write them in the order a
service wants. Inputs may be a ``(lon, lat)`` pair, a sequence of pairs, shapely points (or any
geometry's coordinates), a GeoSeries, a GeoDataFrame, a DataFrame with longitude/latitude
columns or an ``(n, 2)`` array; every value is checked for range and finiteness, and a bad one
raises :class:`~toolkit._core.errors.ValidationError` naming the parameter and the position.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
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
    "EARTH_RADIUS_M",
    "BBoxLike",
    "HasBounds",
    "LocalProjection",
    "PointLike",
    "PointsLike",
    "bbox_param",
    "bbox_size_m",
    "check_bbox_size",
    "geojson_geometry",
    "haversine_m",
    "latlon_param",
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

#: One point: a pair of numbers (in the order the function documents: ``(lon, lat)`` for
#: search and route, ``(lat, lon)`` for weather) or a shapely Point.
PointLike: TypeAlias = "Sequence[float] | NDArray[Any] | shapely.Point"

#: Any number of points: one point, a sequence of pairs or of shapely Points, a MultiPoint or
#: LineString, a GeoSeries or GeoDataFrame of Points (EPSG:4326), a DataFrame with longitude and
#: latitude columns, or an ``(n, 2)`` array.
PointsLike: TypeAlias = (
    "Sequence[float] | Sequence[Sequence[float]] | Sequence[shapely.Point] | NDArray[Any]"
    " | shapely.Point | shapely.MultiPoint | shapely.LineString"
    " | gpd.GeoSeries | gpd.GeoDataFrame | pd.DataFrame"
)

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


def _crs_check(obj: object, parameter: str) -> None:
    crs = getattr(obj, "crs", None)
    if crs is None:
        return
    try:
        epsg = crs.to_epsg()
    except Exception:  # pragma: no cover - exotic CRS objects
        epsg = None
    if epsg not in (4326, None) or (epsg is None and not getattr(crs, "is_geographic", True)):
        raise ValidationError(parameter, str(crs),
                              "must be in longitude/latitude (EPSG:4326); use "
                              ".to_crs(4326) first")


def to_lonlat(value: object, parameter: str, *, order: str = "lonlat",
              min_points: int = 1) -> np.ndarray:
    """Any supported input as an ``(n, 2)`` float array of ``(lon, lat)``.

    Parameters
    ----------
    value
        A ``(lon, lat)`` pair, a sequence of pairs, a shapely Point or sequence of Points, a
        GeoSeries/GeoDataFrame of Points (EPSG:4326), a DataFrame with longitude and latitude
        columns (``lon``/``lng``/``longitude``/``x`` and ``lat``/``latitude``/``y``), or an
        ``(n, 2)`` array.
    parameter : str
        Name used in errors.
    order : {"lonlat", "latlon"}
        Order of plain pairs and arrays (geometries and named columns carry their own order).
    min_points : int
        Fewest points accepted.
    """
    import pandas as pd
    import shapely
    from shapely.geometry.base import BaseGeometry

    if order not in ("lonlat", "latlon"):
        raise ValueError("order must be 'lonlat' or 'latlon'")
    swap = order == "latlon"
    arr: np.ndarray
    if value is None or isinstance(value, str | bytes | dict):
        raise ValidationError(parameter, value, "must be (lon, lat) points")
    if isinstance(value, BaseGeometry):
        if isinstance(value, shapely.Point):
            arr = _from_geometries([value], parameter)
        elif isinstance(value, shapely.MultiPoint | shapely.LineString):
            arr = np.asarray(shapely.get_coordinates(value), dtype=float)
        else:
            raise ValidationError(parameter, value.geom_type,
                                  "must be a Point, MultiPoint or LineString")
        swap = False
    elif isinstance(value, pd.DataFrame):
        _crs_check(value, parameter)
        geom_name = getattr(value, "_geometry_column_name", None)
        lon_col, lat_col = _column(value, _LON_NAMES), _column(value, _LAT_NAMES)
        if geom_name is not None and geom_name in value.columns:
            arr = _from_geometries(list(value[geom_name]), parameter)
        elif lon_col is not None and lat_col is not None:
            arr = np.column_stack([pd.to_numeric(value[lon_col], errors="coerce"),
                                   pd.to_numeric(value[lat_col], errors="coerce")]).astype(float)
        else:
            raise ValidationError(parameter, f"columns {list(value.columns)[:6]}",
                                  "a DataFrame needs a geometry column of Points or longitude "
                                  "and latitude columns (lon/lat)")
        swap = False
    elif isinstance(value, pd.Series):
        _crs_check(value, parameter)
        arr = _from_geometries(list(value), parameter)
        swap = False
    else:
        items: np.ndarray | list[object]
        if isinstance(value, np.ndarray):
            items = value
        elif isinstance(value, Iterable):
            items = list(value)
        else:
            raise ValidationError(parameter, value, "must be (lon, lat) points")
        if len(items) == 0:
            arr = np.empty((0, 2))
        elif isinstance(items, list) and all(isinstance(g, BaseGeometry) for g in items):
            arr = _from_geometries(items, parameter)
            swap = False
        else:
            a = np.asarray(items, dtype=object)
            if a.ndim == 1 and len(a) in (2, 3) and all(
                    isinstance(v, int | float | np.number) and not isinstance(v, bool)
                    for v in a):
                a = a[None, :]
            if a.ndim != 2 or a.shape[1] not in (2, 3):
                raise ValidationError(parameter, value,
                                      "must be a (lon, lat) pair or a sequence of pairs")
            try:
                arr = np.asarray(a[:, :2], dtype=float)
            except (TypeError, ValueError):
                raise ValidationError(parameter, value,
                                      "coordinates must be numbers") from None
    if swap:
        arr = arr[:, ::-1]
    arr = np.ascontiguousarray(arr, dtype=float)
    if len(arr) < min_points:
        raise ValidationError(parameter, f"{len(arr)} points",
                              f"must have at least {min_points} point"
                              f"{'s' if min_points != 1 else ''}")
    bad = ~np.isfinite(arr).all(axis=1)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise ValidationError(f"{parameter}[{i}]", tuple(arr[i]), "coordinates must be finite "
                              "numbers")
    lon_bad = (arr[:, 0] < -180) | (arr[:, 0] > 180)
    lat_bad = (arr[:, 1] < -90) | (arr[:, 1] > 90)
    if lon_bad.any() or lat_bad.any():
        i = int(np.flatnonzero(lon_bad | lat_bad)[0])
        what = "longitude must be between -180 and 180" if lon_bad[i] else \
            "latitude must be between -90 and 90"
        raise ValidationError(f"{parameter}[{i}]" if len(arr) > 1 else parameter,
                              tuple(float(v) for v in (arr[i][::-1] if swap else arr[i])),
                              f"{what} (points are "
                              f"{'(latitude, longitude)' if swap else '(longitude, latitude)'})"
                              + _swap_hint(arr[i], swap))
    return arr


def _swap_hint(lonlat: np.ndarray, latlon_given: bool) -> str:
    """A note for an out-of-range pair that would be in range the other way round."""
    lon, lat = float(lonlat[0]), float(lonlat[1])
    if not (-90 <= lon <= 90 and -180 <= lat <= 180):
        return ""
    given = (lat, lon) if latlon_given else (lon, lat)
    expected = "(latitude, longitude)" if latlon_given else "(longitude, latitude)"
    return (f"; this pair looks swapped: the order here is {expected}, so pass "
            f"({given[1]:g}, {given[0]:g}) instead")


def to_point(value: object, parameter: str, *, order: str = "lonlat") -> tuple[float, float]:
    """Exactly one point as ``(lon, lat)``."""
    arr = to_lonlat(value, parameter, order=order)
    if len(arr) != 1:
        raise ValidationError(parameter, f"{len(arr)} points", "must be one (lon, lat) point")
    return float(arr[0, 0]), float(arr[0, 1])


def lonlat_param(lon: float, lat: float) -> str:
    """``lon,lat`` as search, route and traffic want it."""
    return f"{lon:.7g},{lat:.7g}" if abs(lon) < 1000 else f"{lon},{lat}"


def latlon_param(lon: float, lat: float) -> str:
    """``lat,lon`` as weather wants it."""
    return f"{lat:.7g},{lon:.7g}"


def to_bbox(value: object, parameter: str = "bbox") -> tuple[float, float, float, float]:
    """A bounding box ``(min_lon, min_lat, max_lon, max_lat)``.

    Accepts a 4-sequence, a shapely geometry (``.bounds``), a GeoSeries/GeoDataFrame
    (``.total_bounds``) or anything whose ``bounds`` is a 4-sequence. Checks ranges and order.
    """
    raw: Any = value  # duck-typed: total bounds, bounds or the four numbers themselves
    if hasattr(raw, "total_bounds"):
        _crs_check(raw, parameter)
        raw = raw.total_bounds
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
    """``min_lon,min_lat,max_lon,max_lat``."""
    return ",".join(f"{v:.7g}" for v in bbox)


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
    """A GeoJSON geometry dict as a shapely geometry.

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
