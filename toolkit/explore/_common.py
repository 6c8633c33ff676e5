"""Shared parts of every interactive map.

What every interactive map shares: the map, its background, layers with tooltips, offline
assets.

Maps are Leaflet maps built with folium (the ``maps`` extra). Where web tiles cannot be reached
(the sandbox world is offline, or ``tiles="roads"``), the background is the road network the
toolkit ships, derived from OpenStreetMap; the map's own scripts and styles (Leaflet) are then
written into the page from the folium-offline package instead of being linked from a CDN, so the
map draws without any network.
"""

from __future__ import annotations

import functools
import logging
import math
import re
import threading
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from toolkit._core.errors import ValidationError
from toolkit._core.maprules import bounds_of as geometry_bounds
from toolkit._core.provenance import SANDBOX_MARK, from_sandbox
from toolkit._core.text import css_color, html_text, script_json
from toolkit._core.validate import check_frame
from toolkit._data.andorra import ATTRIBUTION
from toolkit.explore._page import leaflet_assets
from toolkit.explore._roads import ROAD_STYLE, road_frame, road_key

if TYPE_CHECKING:
    import folium

logger = logging.getLogger(__name__)

__all__ = ["ATTRIBUTION", "add_layer", "bounds_of", "finish", "geo_frame", "has_geometry",
           "new_map", "ramp", "spread_frame", "spread_points", "tooltip_frame"]

TILES_URL = "https://tile.openstreetmap.org/{z}/{x}/{y}.png"
_TILE_PROBE = "https://tile.openstreetmap.org/0/0/0.png"
_TILES_CHOICES = ("auto", "roads", "web")

#: Above this many features a map draws on one canvas instead of one SVG element per feature
#: (see benchmarks/interactive_maps.py: SVG stops being responsive with tens of thousands).
CANVAS_FROM = 500
#: Layers of up to this many features carry each feature's full record for its popup; larger
#: ones (long GPS traces) only their tooltips, to keep the page light.
POPUPS_UP_TO = 5_000

#: The margin of shipped roads drawn around a map's bounds, as a share of its extent.
ROAD_MARGIN = 0.35
#: Minor roads (streets, tracks: any class but motorway to tertiary) are drawn on maps up to this
#: many degrees across (about 8 km): on a map of the whole country they are a grey blur.
MINOR_ROADS_UP_TO = 0.1
#: Zoom levels (relative to the opening one) the background roads carry a level of detail for.
ROAD_ZOOMS = (0, 2)
_reachable: dict[str, bool] = {}
_reachable_lock = threading.Lock()


def folium_module() -> Any:
    """folium, or an ImportError naming the extra."""
    try:
        import folium
    except ImportError as err:  # pragma: no cover - depends on the install
        raise ImportError(
            'interactive maps need folium: pip install "cloudops-frames[maps]"') from err
    return folium


def tiles_reachable(timeout: float = 2.0) -> bool:
    """Whether the web tile server answers (asked once per process, within ``timeout``)."""
    with _reachable_lock:
        if TILES_URL in _reachable:
            return _reachable[TILES_URL]
    import requests

    try:
        ok = requests.head(_TILE_PROBE, timeout=timeout, allow_redirects=True).status_code < 400
    except requests.RequestException:
        ok = False
    logger.info("web tiles %s", "reachable" if ok else "not reachable: roads as background")
    with _reachable_lock:
        _reachable[TILES_URL] = ok
    return ok


def _offline(tiles: str, frames: Iterable[pd.DataFrame]) -> bool:
    if tiles not in _TILES_CHOICES:
        raise ValidationError("tiles", tiles, f"must be one of {', '.join(_TILES_CHOICES)}")
    if tiles != "auto":
        return tiles == "roads"
    from toolkit._core.config import is_loopback

    endpoints = [f.attrs.get("endpoint") for f in frames if isinstance(f, pd.DataFrame)]
    if any(isinstance(e, str) and is_loopback(e) for e in endpoints):
        return True  # the sandbox world: no tiles of its own
    return not tiles_reachable()


# ------------------------------------------------------------------------------ offline assets
_SCRIPT = re.compile(r'<script src="([^"]+)"></script>')
_STYLE = re.compile(r'<link rel="stylesheet" href="([^"]+)"/>')
#: What a map of points, lines and tooltips needs; other linked files are left out offline.
_NEEDED = ("/leaflet.js", "/leaflet.css")


def inline_assets(page: str) -> str:
    """Write Leaflet's script and style into ``page`` and remove the other CDN links.

    Returns the page with Leaflet written in and the other CDN links (icons, Bootstrap, jQuery:
    unused by these maps) removed, so that it renders with no network.
    """
    assets = leaflet_assets()

    def script(m: re.Match[str]) -> str:
        url = m.group(1)
        if url.endswith(_NEEDED) and url in assets:
            return "<script>" + assets[url].replace("</script", "<\\/script") + "</script>"
        return "" if url in assets else m.group(0)

    def style(m: re.Match[str]) -> str:
        url = m.group(1)
        if url.endswith(_NEEDED) and url in assets:
            return "<style>" + assets[url] + "</style>"
        return "" if url in assets else m.group(0)

    return _STYLE.sub(style, _SCRIPT.sub(script, page))


@functools.cache
def _offline_figure_class() -> type:
    from branca.element import Figure

    class OfflineFigure(Figure):
        """A page whose Leaflet files are written in rather than linked.

        In a notebook, the page finds Leaflet carried once for all maps (see
        :mod:`toolkit.explore._page`).
        """

        def render(self, **kwargs: Any) -> str:
            from toolkit.explore._page import clean_render

            with clean_render(self):
                return inline_assets(super().render(**kwargs))

        def shared_render(self, **kwargs: Any) -> str:
            """Render the page with a loader of the Leaflet carried once in the notebook.

            Its elements are named by short numbers while it renders (see
            :func:`~toolkit.explore._page.clean_render`).
            """
            from toolkit.explore._page import clean_render, shared_page

            self.toolkit_shared = True  # layers drawn from what the notebook carries
            try:
                with clean_render(self, short_names=True):
                    return shared_page(Figure.render(self, **kwargs))
            finally:
                self.toolkit_shared = False

        def _repr_html_(self, **kwargs: Any) -> str:
            from toolkit.explore._page import notebook_html

            return notebook_html(self, self.shared_render(**kwargs))

    return OfflineFigure


# ------------------------------------------------------------------------------ the map
def new_map(bounds: Sequence[float], *, tiles: str = "auto",
            frames: Iterable[pd.DataFrame] = (), features: int = 0,
            height: int | str = 480) -> Any:
    """Make a Leaflet map fitted to ``bounds`` (west, south, east, north) with its background.

    ``tiles="auto"`` uses web tiles when they can be reached and the frames do not come from
    the sandbox, else the shipped roads; ``"web"`` and ``"roads"`` choose. With ``features``
    past :data:`CANVAS_FROM` the map draws on a canvas. A height in pixels is also the height
    of the frame a notebook shows the map in (folium's frame is otherwise 60 % of the width:
    a blank band under the map on a wide screen, its bottom cut off on a narrow one).
    """
    folium = folium_module()
    offline = _offline(tiles, frames)
    w, s, e, n = (float(v) for v in bounds)
    m = folium.Map(location=[(s + n) / 2, (w + e) / 2], tiles=None, control_scale=True,
                   prefer_canvas=features > CANVAS_FROM, height=height)
    if offline:
        _offline_figure_class()().add_child(m)
    pixels = _pixels(height)
    if pixels is not None:
        m.get_root().height = f"{pixels}px"
    if offline:
        drew = add_roads(m, (w, s, e, n))
        if not drew:
            logger.info("no shipped roads under these data: the map has no background")
    else:
        folium.TileLayer(TILES_URL, attr=ATTRIBUTION, name="OpenStreetMap").add_to(m)
    pad_x, pad_y = max((e - w) * 0.05, 0.002), max((n - s) * 0.05, 0.002)
    m.fit_bounds([[s - pad_y, w - pad_x], [n + pad_y, e + pad_x]])
    m.toolkit_offline = offline
    m.toolkit_bounds = (w - pad_x, s - pad_y, e + pad_x, n + pad_y)
    if from_sandbox(*frames):
        _control(f"<b>{html_text(SANDBOX_MARK)}</b>", "topleft", "toolkit-sandbox-mark",
                 "color:#b71c1c").add_to(m)
    return m


def _pixels(height: int | str) -> int | None:
    """Give a height in pixels (``480`` or ``"480px"``), or ``None`` for a relative one."""
    if isinstance(height, int | float) and not isinstance(height, bool):
        return int(height)
    text = str(height).strip()
    number = text.removesuffix("px").strip()
    return int(float(number)) if number.replace(".", "", 1).isdigit() else None


def add_roads(m: Any, bounds: Sequence[float]) -> bool:
    """Add the shipped roads near ``bounds`` as the bottom layer (not interactive).

    The layer carries the data's attribution. Returns whether any road was drawn.

    Only the roads within a margin of the bounds are written (a third of the extent), minor
    roads only on maps of a town or a valley (:data:`MINOR_ROADS_UP_TO`), one line per road
    style, thinned per zoom level like any line layer (see :mod:`toolkit.explore._layer`).
    """
    import shapely

    folium = folium_module()
    roads = road_frame()
    w, s, e, n = bounds
    # a map is often wider than its data: the margin east and west follows the height too
    grow_x = max(e - w, (n - s) * 1.5) * ROAD_MARGIN + 0.003
    grow_y = (n - s) * ROAD_MARGIN + 0.003
    near = roads.cx[w - grow_x:e + grow_x, s - grow_y:n + grow_y]
    if near.empty:
        return False
    box = shapely.box(w - grow_x, s - grow_y, e + grow_x, n + grow_y)
    lines = shapely.clip_by_rect(np.asarray(near.geometry, dtype=object), *box.bounds)
    groups: dict[tuple[float, str], list[Any]] = {}
    wide = max(e - w, n - s) > MINOR_ROADS_UP_TO
    for kind, line in zip(near["highway"], lines, strict=True):
        if line is None or line.is_empty:
            continue
        style = ROAD_STYLE.get(str(kind))
        if style is None:  # a minor road: on maps of a town or a valley only
            if wide:
                continue
            style = (1.0, "#dcdcdc")
        groups.setdefault(style, []).append(line)
    if not groups:
        return False
    layer = folium.FeatureGroup(name="roads", control=False)
    for (weight, colour), parts in sorted(groups.items()):
        merged = shapely.line_merge(shapely.multilinestrings(
            [p for g in parts for p in getattr(g, "geoms", [g]) if g.geom_type != "Point"]))
        _add_compact(m, layer, [merged], colors=[colour], weight=weight, opacity=1.0,
                     interactive=False, attribution=ATTRIBUTION, zooms=ROAD_ZOOMS,
                     shared=road_key(weight, colour) if colour != "#dcdcdc" else None)
    layer.add_to(m)
    return True


# ------------------------------------------------------------------------------ layers
def _cell(value: Any) -> str:
    if value is None or value is pd.NA or value is pd.NaT:
        return ""
    if isinstance(value, float) and value != value:
        return ""
    if isinstance(value, list | tuple | np.ndarray):
        return ", ".join(_cell(v) for v in value)
    if isinstance(value, dict):
        return ", ".join(f"{k}: {_cell(v)}" for k, v in value.items())
    return str(value)  # a Secret shows its mask


def tooltip_frame(df: pd.DataFrame, geometry: str = "geometry") -> pd.DataFrame:
    """Return the frame's own columns as text for tooltips.

    Every column but the geometries is kept: lists joined, nested objects as ``key: value``,
    missing values empty.
    """
    import geopandas as gpd

    geo_columns = {c for c in df.columns if isinstance(df[c].dtype, gpd.array.GeometryDtype)}
    geo_columns.add(geometry)
    text = {str(c): [_cell(v) for v in df[c]] for c in df.columns if c not in geo_columns}
    out = gpd.GeoDataFrame(text, geometry=list(df[geometry]), crs="EPSG:4326", index=df.index)
    return out


def add_layer(m: Any, df: pd.DataFrame, name: str, *, colors: Sequence[str] | str,
              geometry: str = "geometry", weight: float = 3.0,
              radius: float | Sequence[float] = 5.0, dash: str | None = None,
              opacity: float = 0.9, show: bool = True, operation: str | None = None,
              tz: str | None = None, spread: bool = True, outline: str | None = None) -> Any:
    """Add the rows of ``df`` that have a ``geometry`` as one layer named ``name``.

    Lines are drawn with ``weight``, points as circle markers of ``radius`` (one for all, or one
    per row), each in its colour. A feature's tooltip holds the fields :data:`TOOLTIPS` declares
    for ``operation`` (default: the frame's ``attrs["operation"]``), its popup (on click) the
    full record. Points at the same place are spread on a small sunflower around it (``spread``)
    so that each can be hovered. ``outline`` gives every marker a ring of that colour.
    Returns the layer.
    """
    from toolkit.explore._fields import fields_for, tooltip_texts

    folium = folium_module()
    keep = has_geometry(df[geometry])
    rows = df[keep]
    colour_list = [colors] * len(df) if isinstance(colors, str) else list(colors)
    if len(colour_list) != len(df):
        raise ValueError("one colour per row")
    colour_list = [c for c, k in zip(colour_list, keep, strict=True) if k]
    radii = [float(radius)] * len(df) if isinstance(radius, int | float) else list(radius)
    if len(radii) != len(df):
        raise ValueError("one radius per row")
    radii = [r for r, k in zip(radii, keep, strict=True) if k]
    layer = folium.FeatureGroup(name=name, show=show)
    if rows.empty:
        layer.add_to(m)
        return layer
    fields = fields_for(df, operation)
    texts = tooltip_texts(rows, fields, tz=tz)
    popups = popup_table(rows.drop(columns=[geometry]), tz=tz) \
        if len(rows) <= POPUPS_UP_TO else None
    geoms = list(rows[geometry])
    if spread:
        geoms = spread_points(geoms, _degrees_per_pixel(m), max(radii) * 2 + 2)
    _add_compact(m, layer, geoms, colors=colour_list, radii=radii, weight=weight,
                 opacity=opacity, dash=dash, outline=outline, tips=texts or None,
                 popup=popups, fields=list(texts))
    layer.add_to(m)
    return layer


def _add_compact(m: Any, layer: Any, geoms: Sequence[Any], *, fields: Sequence[str] = (),
                 shared: str | None = None, **kwargs: Any) -> None:
    """Draw ``geoms`` into ``layer`` as one compact layer (see :mod:`toolkit.explore._layer`).

    Points go in one, lines and polygons in another where a layer holds both.
    """
    import shapely

    from toolkit.explore._layer import compact_layer, layer_element

    arr = np.asarray(list(geoms), dtype=object)
    points = shapely.get_type_id(arr) == 0
    bounds = getattr(m, "toolkit_bounds", None) or shapely.total_bounds(arr)
    for part in (points, ~points):
        if not part.any():
            continue
        chosen = np.flatnonzero(part)
        sub = {k: _subset(v, chosen, len(arr)) for k, v in kwargs.items()}
        spec = compact_layer(arr[chosen], bounds=bounds, **sub)
        types = sorted({g.geom_type for g in arr[chosen]})
        layer_element(spec, m, geometry_types=types, fields=fields,
                      shared=shared).add_to(layer)


def _subset(value: Any, chosen: np.ndarray, n: int) -> Any:
    """Take the chosen rows of a per-row value (a list of ``n``, or a dict of such lists)."""
    if isinstance(value, dict):
        return {k: _subset(v, chosen, n) for k, v in value.items()}
    if isinstance(value, list) and len(value) == n:
        return [value[i] for i in chosen]
    return value


def popup_table(df: pd.DataFrame, *, tz: str | None = None) -> dict[str, list[str]]:
    """Write the full records of ``df`` for popups, column by column.

    Each value becomes its HTML (escaped, formatted as :func:`toolkit.explore._fields.popup_html`
    writes it, empty when missing).

    Returns
    -------
    dict
        Column name -> one HTML text per row.
    """
    from toolkit.explore._fields import popup_cell

    out: dict[str, list[str]] = {}
    for name in df.columns:
        values = df[name].tolist()
        if values and hasattr(values[0], "geom_type"):
            continue
        cells = [popup_cell(v, tz) for v in values]
        if any(cells):
            out[str(name)] = cells
    return out


def spread_frame(m: Any, df: pd.DataFrame, radius: float) -> pd.DataFrame:
    """Copy ``df`` with its co-located points spread for markers of ``radius`` pixels.

    The points are spread as :func:`spread_points` does; a frame drawn as several layers is
    spread as one.
    """
    out = df.copy()
    out["geometry"] = spread_points(list(df["geometry"]), _degrees_per_pixel(m),
                                    radius * 2 + 2)
    return out


def _degrees_per_pixel(m: Any) -> tuple[float, float]:
    """Estimate the degrees of longitude and latitude one screen pixel spans as the map opens.

    The map is taken as fitted to its padded bounds in a map of about 600 by 380 pixels, at the
    whole zoom level Leaflet rounds down to (up to twice as many degrees a pixel: 1.4 on
    average).
    """
    w, s, e, n = getattr(m, "toolkit_bounds", (0.0, 0.0, 0.01, 0.01))
    cos_lat = max(math.cos(math.radians((s + n) / 2)), 0.1)
    lon_per_px = max((e - w) / 600, (n - s) / cos_lat / 380) * 1.4
    return lon_per_px, lon_per_px * cos_lat


def spread_points(geoms: Sequence[Any], per_pixel: tuple[float, float],
                  spacing: float) -> list[Any]:
    """Move points that share a place (to about a metre) onto a sunflower around it.

    The moved points are ``spacing`` pixels apart at the opening zoom; other geometries are
    unchanged.

    Parameters
    ----------
    geoms : sequence of shapely geometries
    per_pixel : (float, float)
        Degrees of longitude and latitude per pixel.
    spacing : float
        Pixels between neighbouring markers.
    """
    import shapely

    out = list(geoms)
    groups: dict[tuple[float, float], list[int]] = {}
    for i, g in enumerate(out):
        if g is not None and g.geom_type == "Point":
            groups.setdefault((round(g.x, 5), round(g.y, 5)), []).append(i)
    golden = math.pi * (3 - math.sqrt(5))
    for (x, y), members in groups.items():
        if len(members) < 2:
            continue
        for k, i in enumerate(members):
            r = spacing * 0.65 * math.sqrt(k + 1)  # the place itself stays free
            a = k * golden
            out[i] = shapely.Point(x + r * math.cos(a) * per_pixel[0],
                                   y + r * math.sin(a) * per_pixel[1])
    return out


def finish(m: folium.Map, *, legend: Sequence[tuple[str, ...]] = (),
           title: str | None = None) -> folium.Map:
    """Add the layer control and a legend in the map's lower left corner.

    The legend has one entry per ``(label, colour)`` (a square), or ``(label, colour, "line")``
    / ``(label, colour, "dashed")`` for a line, or ``(label, colour, "dot")`` for a marker.
    Layer names, labels and the title are text (:func:`~toolkit._core.text.html_text`), a
    colour that is not a hexadecimal colour is drawn grey.
    """
    layer_control().add_to(m)
    if legend or title:
        items = "".join(f"<div>{_swatch(colour, *kind)}{html_text(label)}</div>"
                        for label, colour, *kind in legend)
        head = html_text(title) if title else "legend"
        # a toggle: the legend folds away when it hides what is under it
        _control(f"<details open><summary style='cursor:pointer;font-weight:bold'>{head}"
                 f"</summary>{items}</details>", "bottomleft", "toolkit-legend").add_to(m)
    return m


def layer_control() -> Any:
    """Make the control that switches a map's layers, showing their names as text.

    Leaflet writes a layer's name into the control as HTML (``innerHTML``); a name made from a
    service's words (``alerts: <category>``) or a caller's (``suggestions: <query>``) is
    escaped first (:func:`~toolkit._core.text.html_text`). The layers keep their names as
    given (``FeatureGroup.layer_name``, :func:`toolkit.explore.map_summary`).

    Returns
    -------
    folium.LayerControl
        Collapsed.
    """
    return _layer_control_class()(collapsed=True)


@functools.cache
def _layer_control_class() -> type:
    folium_module()  # the extra installed, or an ImportError naming it
    from folium.map import Layer, LayerControl

    class TextLayerControl(LayerControl):
        """A layer control whose layer names are text, not HTML."""

        def render(self, **kwargs: Any) -> str:
            self.reset()
            parent: Any = self._parent
            for item in parent._children.values():
                if not isinstance(item, Layer) or not item.control:
                    continue
                names = self.overlays if item.overlay else self.base_layers
                names[html_text(item.layer_name)] = item.get_name()
            # folium's own render would fill the names again, unescaped: its parent's instead
            return super(LayerControl, self).render(**kwargs)  # type: ignore[no-any-return]

    return TextLayerControl


def _swatch(colour: str, kind: str = "square") -> str:
    c = css_color(colour, "#9e9e9e")
    if kind in ("line", "dashed"):
        style = "dashed" if kind == "dashed" else "solid"
        return (f'<span style="display:inline-block;width:22px;height:0;border-top:4px {style} '
                f'{c};vertical-align:middle;margin-right:6px"></span>')
    radius = "50%" if kind == "dot" else "2px"
    return (f'<span style="display:inline-block;width:12px;height:12px;background:{c};'
            f'margin-right:6px;border-radius:{radius};box-sizing:border-box;'
            f'border:{"2px solid #000" if kind == "dot" else "0"}"></span>')


def _control(content: str, position: str, css_class: str, style: str = "") -> Any:
    """Make a Leaflet control in a corner of the map holding ``content`` (HTML).

    It holds the legend or the sandbox mark.
    """
    from branca.element import MacroElement
    from jinja2 import Template

    class Legend(MacroElement):
        """A Leaflet control holding some HTML."""

        _template = Template("""
            {% macro script(this, kwargs) %}
            (function() {
                var legend = L.control({position: {{ this.position }}});
                legend.onAdd = function() {
                    var div = L.DomUtil.create("div", {{ this.css_class }});
                    div.style.cssText = "background:rgba(255,255,255,.9);padding:4px 7px;"
                        + "font:11px sans-serif;border-radius:4px;line-height:1.35;"
                        + {{ this.style }};
                    L.DomEvent.disableClickPropagation(div);
                    div.innerHTML = {{ this.content }};
                    return div;
                };
                legend.addTo({{ this._parent.get_name() }});
            })();
            {% endmacro %}
        """)

        def __init__(self, text: str) -> None:
            super().__init__()
            self._name = "Legend" if css_class == "toolkit-legend" else "Control"
            self.content = script_json(text)
            self.position = script_json(position)
            self.css_class = script_json(css_class)
            self.style = script_json(style)

    return Legend(content)


def has_geometry(series: Any) -> np.ndarray:
    """Per row, whether it has a geometry that is neither missing nor empty."""
    import shapely

    values = np.asarray(series, dtype=object)
    return np.asarray(~shapely.is_missing(values) & ~shapely.is_empty(values), dtype=bool)


def geo_frame(df: Any, columns: Sequence[str], helper: str) -> pd.DataFrame:
    """Check that ``df`` is a frame with a geometry column and ``columns``."""
    frame = check_frame(df, ["geometry", *columns], helper)
    return frame


def bounds_of(*series: Any) -> tuple[float, float, float, float]:
    """West, south, east, north of the non-empty geometries of the given series."""
    bounds = geometry_bounds(*series)
    if bounds is None:
        raise ValidationError("df", "no geometry", "the map needs at least one place")
    return bounds


def ramp(values: Sequence[float], low: float, high: float,
         palette: Sequence[str] = ("#2e7d32", "#9ccc65", "#fdd835", "#fb8c00", "#c62828"),
         missing: str = "#9e9e9e") -> list[str]:
    """One colour of ``palette`` per value, from ``low`` to ``high`` (missing values grey)."""
    out = []
    for v in values:
        if v is None or pd.isna(v):
            out.append(missing)
            continue
        t = 0.0 if high <= low else min(max((float(v) - low) / (high - low), 0.0), 1.0)
        out.append(palette[min(int(t * len(palette)), len(palette) - 1)])
    return out
