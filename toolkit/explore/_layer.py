"""One Leaflet layer per meaning, drawn from compact data: thinned geometry and one record table.

A layer of a map made by :mod:`toolkit.explore` is written into the page as data, not as one
GeoJSON feature with its own tooltip and popup HTML per row:

- geometry as encoded polylines (the Google polyline algorithm, five decimals: about a metre),
  lines and polygons at a few levels of detail, each simplified to what the screen shows at a
  zoom level; large point layers thinned per zoom level (a point is drawn from the zoom at which
  it no longer falls in the same few-pixel cell as an earlier one);
- the tooltip fields and the popup's full record as one table per layer, column by column
  (repeated values once, in a pool), from which a small script (:data:`RUNTIME`, written once
  per page) builds a feature's tooltip and popup when it is hovered or clicked.

All features of a layer share one tooltip and one popup bound to the layer, and draw with the
map's renderer (one canvas for large maps).
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from toolkit._core.text import html_text, script_json

__all__ = ["RUNTIME", "column", "compact_layer", "decode_polyline", "encode_polyline",
           "line_levels", "min_zooms", "opening_zoom"]

#: Point layers with more points than this are thinned per zoom level.
THIN_FROM = 1_000
#: Zoom levels past the opening one up to which points are thinned (all are drawn past it).
THIN_ZOOMS = 6
#: Zoom levels, relative to the opening one, that lines carry a level of detail for (the last
#: one serves every zoom level past it).
LINE_ZOOMS = (-2, -1, 0, 1, 2, 3, 5)
#: A coarser level of detail is kept only when it has at most this share of the vertices of the
#: next finer level kept.
LEVEL_SHARE = 0.6
#: Line layers with this many lines or more are drawn once per colour from the stretches they
#: share (:func:`shared_stretches`): a thousand routes through a few valleys draw the valleys'
#: roads once, not a thousand times.
MERGE_FROM = 50
#: Zoom levels (relative to the opening one) of the undrawn lines that are hovered and clicked
#: where a layer is drawn through its shared stretches (one: within a few pixels of the drawn
#: line up to three levels closer, where the hover reaches further than that).
HIT_ZOOMS = (1,)
#: Pixels a line may move when simplified for a zoom level.
LINE_TOLERANCE_PX = 0.7
#: The map's size in pixels assumed for its opening zoom (Leaflet fits the bounds into it).
VIEW_PX = (600, 380)

RUNTIME = r"""
window.toolkitLayer = window.toolkitLayer || (function () {
  function dec(s) {
    var out = [], i = 0, x = 0, y = 0, n = s.length;
    while (i < n) {
      var r = 0, sh = 0, b;
      do { b = s.charCodeAt(i++) - 63; r |= (b & 31) << sh; sh += 5; } while (b >= 32);
      x += (r & 1) ? ~(r >> 1) : (r >> 1);
      r = 0; sh = 0;
      do { b = s.charCodeAt(i++) - 63; r |= (b & 31) << sh; sh += 5; } while (b >= 32);
      y += (r & 1) ? ~(r >> 1) : (r >> 1);
      out.push([y / 1e5, x / 1e5]);
    }
    return out;
  }
  function col(c, i) { return Array.isArray(c) ? c[i] : c.p[c.i[i]]; }
  function one(v, i) { return Array.isArray(v) ? v[i] : v; }
  return function (group, map, spec) {
    if (!spec) { return null; }
    var n = spec.n, fg = L.featureGroup(), pal = spec.palette;
    function style(i, look) {
      var c = pal[look === undefined ? one(spec.color, i) : look];
      return {color: spec.outline || c, fillColor: c, weight: spec.weight,
              opacity: spec.opacity, fillOpacity: spec.kind === "point" ? 0.8 : 0.3,
              fill: spec.kind !== "line", dashArray: spec.dash || null,
              interactive: look === undefined && spec.interactive, smoothFactor: 0,
              stroke: look !== undefined || !spec.look};
    }
    if (spec.kind === "point") {
      var pts = dec(spec.geom), minz = spec.minzoom, built = {}, on = {}, byZ = {};
      var make = function (i) {
        var s = style(i); s.radius = one(spec.radius, i);
        var mk = L.circleMarker(pts[i], s); mk._tk = i; return mk;
      };
      for (var i = 0; i < n; i++) { var z = minz ? minz[i] : 0; (byZ[z] = byZ[z] || []).push(i); }
      var update = function () {
        var zoom = map.getZoom();
        for (var z in byZ) {
          var want = +z <= zoom;
          if (want && !built[z]) { built[z] = byZ[z].map(make); }
          if (want !== !!on[z]) {
            built[z].forEach(want ? fg.addLayer : fg.removeLayer, fg);
            on[z] = want;
          }
        }
      };
      update();
      if (minz) { map.on("zoomend", update); }
    } else {
      // lines at levels of detail: the level of the smallest zoom at or past the map's
      var lod = function (geoms, levels, make) {
        var cur = -1, feats = [], cache = {};
        var levelFor = function (zoom) {
          for (var k = 0; k < levels.length; k++) { if (levels[k] >= zoom) { return k; } }
          return levels.length - 1;
        };
        var coords = function (i, k) {
          var g = geoms[i], e = g[Math.min(k, g.length - 1)];
          if (typeof e === "number") { k = e; e = g[e]; }
          var key = i + ":" + k;
          if (!cache[key]) {
            cache[key] = e.split(" ").map(function (part) {
              return spec.kind === "polygon" ? part.split("!").map(dec) : dec(part);
            });
          }
          return cache[key];
        };
        var setLevel = function () {
          var k = levelFor(map.getZoom());
          if (k === cur) { return; }
          for (var i = 0; i < geoms.length; i++) {
            var ll = coords(i, k);
            if (!feats[i]) { feats[i] = make(i, ll); fg.addLayer(feats[i]); }
            else if (coords(i, cur) !== ll) { feats[i].setLatLngs(ll); }
          }
          cur = k;
        };
        setLevel();
        if (levels.length > 1) { map.on("zoomend", setLevel); }
      };
      // many lines: drawn once per colour from the unique stretches they share (what the
      // screen shows), hovered and clicked through undrawn lines of their own
      (spec.look || []).forEach(function (look) {
        lod([look.geom], look.levels, function (i, ll) {
          return L.polyline(ll, style(0, look.color));
        });
      });
      lod(spec.geom, spec.levels, function (i, ll) {
        var s = style(i), f = spec.kind === "line" ? L.polyline(ll, s) : L.polygon(ll, s);
        f._tk = i;
        if (spec.look) { f._clickTolerance = function () { return spec.weight / 2 + 3; }; }
        return f;
      });
    }
    if (spec.attribution) { fg.getAttribution = function () { return spec.attribution; }; }
    if (spec.tips) {
      fg.bindTooltip(function (layer) {
        var i = layer._tk, rows = spec.fields.map(function (f, j) {
          return "<tr><th>" + f + "</th><td>" + col(spec.tips[j], i) + "</td></tr>";
        });
        return "<table>" + rows.join("") + "</table>";
      }, {sticky: true, className: "toolkit-tooltip", maxWidth: 320});
    }
    if (spec.popup) {
      var p = spec.popup;
      fg.bindPopup(function (layer) {
        var i = layer._tk, rows = [];
        p.names.forEach(function (name, j) {
          var v = col(p.cols[j], i);
          if (v !== "") {
            rows.push("<tr><th style='text-align:left;padding-right:8px;vertical-align:top'>"
                      + name + "</th><td>" + v + "</td></tr>");
          }
        });
        var head = spec.tips && spec.tips.length ? "<b>" + col(spec.tips[0], i) + "</b>" : "";
        return "<div style='max-height:200px;overflow:auto;font:12px sans-serif'>" + head
               + "<table>" + rows.join("") + "</table></div>";
      }, {maxWidth: 460, className: "toolkit-popup"});
    }
    if (spec.interactive) {
      fg.on("mouseover", function (e) {
        var l = e.propagatedFrom || e.layer;
        if (l && l.setStyle) {
          l.setStyle({weight: spec.weight + 3, fillOpacity: 1, stroke: true});
        }
      });
      fg.on("mouseout", function (e) {
        var l = e.propagatedFrom || e.layer;
        if (l && l.setStyle) { l.setStyle(style(l._tk)); }
      });
    }
    fg.addTo(group);
    return fg;
  };
})();
"""


# ------------------------------------------------------------------------------ encoding
def encode_polyline(coords: Any) -> str:
    """Encode (longitude, latitude) pairs as one polyline text.

    Five decimals, deltas, zigzag, five bits a character: the Google polyline algorithm,
    longitude first.

    Parameters
    ----------
    coords : array-like of shape (n, 2)
        Longitude and latitude pairs.

    Returns
    -------
    str
        Printable ASCII (characters 63 to 126); empty for no points.
    """
    q = np.round(np.asarray(coords, dtype=float).reshape(-1, 2) * 1e5).astype(np.int64)
    if not len(q):
        return ""
    d = np.diff(q, axis=0, prepend=np.zeros((1, 2), dtype=np.int64)).ravel()
    z = np.where(d < 0, ~(d << 1), d << 1)
    chunks = np.stack([(z >> (5 * k)) & 31 for k in range(7)], axis=1)
    count = np.ones(len(z), dtype=np.int64)
    for k in range(1, 7):
        count += (z >> (5 * k)) > 0
    position = np.arange(7)[None, :]
    more = position < (count[:, None] - 1)
    chars = (chunks | np.where(more, 32, 0)) + 63
    keep = position < count[:, None]
    return chars[keep].astype(np.uint8).tobytes().decode("ascii")


def decode_polyline(text: str) -> np.ndarray:
    """Decode :func:`encode_polyline`'s text into (longitude, latitude) pairs.

    Returns
    -------
    numpy.ndarray
        Shape (n, 2): longitude, latitude.
    """
    values: list[int] = []
    r = shift = 0
    for ch in text.encode("ascii"):
        b = ch - 63
        r |= (b & 31) << shift
        shift += 5
        if b < 32:
            values.append(~(r >> 1) if r & 1 else r >> 1)
            r = shift = 0
    return np.cumsum(np.asarray(values, dtype=np.int64).reshape(-1, 2), axis=0) / 1e5


def column(values: Sequence[str]) -> list[str] | dict[str, list[Any]]:
    """Write one column of the record table.

    The values themselves, or, where they repeat (at most half as many distinct ones as
    rows), ``{"p": pool, "i": index per row}``.

    Returns
    -------
    list or dict
        What the page's script reads a row's value from.
    """
    pool = list(dict.fromkeys(values))
    if not values or len(pool) * 2 > len(values):
        return list(values)
    where = {v: i for i, v in enumerate(pool)}
    return {"p": pool, "i": [where[v] for v in values]}


# ------------------------------------------------------------------------------ thinning
def _mercator(xy: np.ndarray) -> np.ndarray:
    """Pixels at zoom 0 (a 256-pixel world) of (longitude, latitude) pairs."""
    lat = np.radians(np.clip(xy[:, 1], -85.0, 85.0))
    px = (xy[:, 0] + 180.0) / 360.0 * 256.0
    py = (1.0 - np.log(np.tan(lat) + 1.0 / np.cos(lat)) / math.pi) / 2.0 * 256.0
    return np.stack([px, py], axis=1)


def opening_zoom(bounds: Sequence[float] | np.ndarray) -> int:
    """Estimate the zoom level Leaflet opens a map at, fitted to ``bounds``.

    The map is taken to be :data:`VIEW_PX` in size; ``bounds`` are west, south, east, north.

    Returns
    -------
    int
        Between 0 and 18.
    """
    w, s, e, n = (float(v) for v in bounds)
    corners = _mercator(np.array([[w, s], [e, n]]))
    span_x, span_y = np.maximum(np.abs(corners[1] - corners[0]), 1e-9)
    zoom = math.floor(min(math.log2(VIEW_PX[0] / span_x), math.log2(VIEW_PX[1] / span_y)))
    return int(min(max(zoom, 0), 18))


def min_zooms(xy: Any, zoom: int, cell_px: float) -> np.ndarray:
    """Find, per point, the zoom level from which it is drawn.

    The first point (in order) of each ``cell_px`` square of the screen is drawn, the others
    from the zoom at which they lead a cell of their own; from ``zoom - 2`` (everything leading
    a cell there shows at any zoom) to ``zoom + THIN_ZOOMS`` (everything shows past it).

    Cells of a zoom level nest in those of the level before, so a point drawn at one zoom level
    is drawn at every closer one.

    Returns
    -------
    numpy.ndarray
        int64, one per point.
    """
    pixels = _mercator(np.asarray(xy, dtype=float).reshape(-1, 2))
    first, last = max(zoom - 2, 0), zoom + THIN_ZOOMS
    out = np.full(len(pixels), last + 1, dtype=np.int64)
    for z in range(last, first - 1, -1):
        cells = np.floor(pixels * (2.0 ** z) / cell_px).astype(np.int64)
        _, leaders = np.unique(cells, axis=0, return_index=True)
        out[leaders] = z
    out[out == first] = 0
    return out


def line_levels(geoms: Sequence[Any] | np.ndarray, zoom: int, latitude: float,
                zooms: Sequence[int] = LINE_ZOOMS) -> tuple[list[int], list[list[Any]]]:
    """Simplify lines and polygons for each zoom level of ``zooms`` around ``zoom``.

    A coarser level is kept only where it saves vertices (:data:`LEVEL_SHARE`).

    Returns
    -------
    tuple
        The zoom levels kept (ascending) and, per level, the simplified geometries.
    """
    import shapely

    arr = np.asarray(list(geoms), dtype=object)
    cos_lat = max(math.cos(math.radians(latitude)), 0.1)
    kept: list[tuple[int, Any]] = []
    last_count = None
    for rel in sorted(zooms, reverse=True):
        z = max(zoom + rel, 0)
        tolerance = LINE_TOLERANCE_PX * 360.0 / (256.0 * 2.0 ** z) * cos_lat
        simple = shapely.simplify(arr, tolerance, preserve_topology=False)
        simple = np.where(shapely.is_empty(simple) | shapely.is_missing(simple), arr, simple)
        count = int(shapely.get_num_coordinates(simple).sum())
        if last_count is None or count <= LEVEL_SHARE * last_count:
            kept.append((z, simple))
            last_count = count
    kept.reverse()
    return [z for z, _ in kept], [list(g) for _, g in kept]


def shared_stretches(lines: Sequence[Any]) -> Any:
    """Merge ``lines`` into the stretches they cover, each once.

    Their segments (to five decimals) without repeats, chained into lines again where they
    meet.

    Returns
    -------
    shapely.MultiLineString
    """
    import shapely

    parts = shapely.get_parts(np.asarray(list(lines), dtype=object))
    coords, which = shapely.get_coordinates(parts, return_index=True)
    q = np.round(coords * 1e5).astype(np.int64)
    same = which[1:] == which[:-1]
    a, b = q[:-1][same], q[1:][same]
    swap = (a[:, 0] > b[:, 0]) | ((a[:, 0] == b[:, 0]) & (a[:, 1] > b[:, 1]))
    a[swap], b[swap] = b[swap].copy(), a[swap].copy()
    rows = np.ascontiguousarray(np.hstack([a, b]))
    segs = np.unique(rows.view(np.dtype((np.void, 32)))).view(np.int64).reshape(-1, 4)
    segs = segs[(segs[:, 0] != segs[:, 2]) | (segs[:, 1] != segs[:, 3])]
    ends: dict[tuple[int, int], list[int]] = {}
    pairs = [((int(x1), int(y1)), (int(x2), int(y2))) for x1, y1, x2, y2 in segs.tolist()]
    for k, (p, r) in enumerate(pairs):
        ends.setdefault(p, []).append(k)
        ends.setdefault(r, []).append(k)
    used = [False] * len(pairs)
    chains = []
    for k in range(len(pairs)):
        if used[k]:
            continue
        used[k] = True
        chain = list(pairs[k])
        for _ in range(2):  # forward, then from the other end
            end = chain[-1]
            while True:
                nxt = next((j for j in ends[end] if not used[j]), None)
                if nxt is None:
                    break
                used[nxt] = True
                p, r = pairs[nxt]
                end = r if p == end else p
                chain.append(end)
            chain.reverse()
        chains.append(np.asarray(chain, dtype=float) / 1e5)
    return shapely.MultiLineString([c.tolist() for c in chains])


def _parts(geom: Any) -> list[str]:
    """Encode the parts of one line or polygon (a polygon's rings joined by ``!``)."""
    import shapely

    kind = geom.geom_type
    if kind in ("LineString", "LinearRing"):
        return [encode_polyline(shapely.get_coordinates(geom))]
    if kind == "Polygon":
        rings = [geom.exterior, *geom.interiors]
        return ["!".join(encode_polyline(shapely.get_coordinates(r)) for r in rings)]
    return [p for g in getattr(geom, "geoms", []) for p in _parts(g)]


# ------------------------------------------------------------------------------ the layer
def compact_layer(geoms: Sequence[Any] | np.ndarray, *, bounds: Sequence[float] | np.ndarray,
                  colors: Sequence[str],
                  radii: Sequence[float] | float = 5.0, weight: float = 3.0,
                  opacity: float = 0.9, dash: str | None = None, outline: str | None = None,
                  tips: dict[str, list[str]] | None = None,
                  popup: dict[str, list[str]] | None = None, interactive: bool = True,
                  attribution: str | None = None,
                  zooms: Sequence[int] = LINE_ZOOMS) -> dict[str, Any]:
    """Build the data of one layer, as the page's script (:data:`RUNTIME`) draws it.

    Parameters
    ----------
    geoms : sequence of shapely geometries
        All points, or all lines and polygons (not missing, not empty).
    bounds : (west, south, east, north)
        The map's bounds (for its opening zoom level).
    colors : sequence of str
        One colour per geometry.
    radii : float or sequence of float
        Marker radius in pixels (points).
    weight, opacity, dash, outline
        Line weight in pixels, opacity, dash pattern, a marker ring's colour.
    tips : dict, optional
        Tooltip label -> the HTML of each row's value (escaped).
    popup : dict, optional
        Column name -> the HTML of each row's value (escaped; empty values are left out).
    interactive : bool
        Whether features answer the mouse (tooltips, popups, highlight).
    attribution : str, optional
        Text for the map's attribution control.
    zooms : sequence of int
        Zoom levels, relative to the opening one, of the lines' levels of detail.

    Returns
    -------
    dict
        ``kind`` ("point", "line" or "polygon"), ``n``, ``geom`` (encoded), ``minzoom`` or
        ``levels``, the style, ``fields``/``tips`` and ``popup`` (the record table).
    """
    import shapely

    arr = np.asarray(list(geoms), dtype=object)
    n = len(arr)
    types = shapely.get_type_id(arr) if n else np.zeros(0, dtype=int)
    palette = list(dict.fromkeys(colors))
    where = {c: i for i, c in enumerate(palette)}
    color: int | list[int] = [where[c] for c in colors]
    if len(palette) == 1:
        color = 0
    radius: float | list[float] = (float(radii) if isinstance(radii, int | float)
                                   else [float(r) for r in radii])
    if isinstance(radius, list) and len(set(radius)) == 1:
        radius = radius[0]
    spec: dict[str, Any] = {"n": n, "palette": palette, "color": color, "radius": radius,
                            "weight": weight, "opacity": opacity, "dash": dash,
                            "outline": outline, "interactive": interactive}
    zoom = opening_zoom(bounds)
    if n and (types == 0).all():
        xy = shapely.get_coordinates(arr)
        spec["kind"] = "point"
        spec["geom"] = encode_polyline(xy)
        if n > THIN_FROM:
            largest = radius if isinstance(radius, float) else max(radius)
            spec["minzoom"] = min_zooms(xy, zoom, max(2.0, largest)).tolist()
        else:
            spec["minzoom"] = None
    else:
        if n and (types == 0).any():
            raise ValueError("a layer holds points or lines and polygons, not both")
        spec["kind"] = "polygon" if n and np.isin(types, (3, 6)).all() else "line"
        latitude = (float(bounds[1]) + float(bounds[3])) / 2
        merged = spec["kind"] == "line" and n >= MERGE_FROM and interactive
        # lines drawn through their shared stretches are only hovered: fewer levels will do
        levels, per_level = line_levels(arr, zoom, latitude, HIT_ZOOMS if merged else zooms)
        encoded: list[list[Any]] = [[] for _ in range(n)]
        for level in per_level:
            for i, g in enumerate(level):
                parts = " ".join(_parts(g))  # the characters of a part are 63 to 126
                same = next((k for k, e in enumerate(encoded[i])
                             if not isinstance(e, int) and e == parts), None)
                encoded[i].append(parts if same is None else same)
        spec["levels"], spec["geom"] = levels, encoded
        if merged:
            colour_of = np.asarray(color if isinstance(color, list) else [0] * n)
            spec["look"] = []
            for c in range(len(palette)):
                network = shared_stretches(arr[colour_of == c])
                look_levels, look_geoms = line_levels([network], zoom, latitude, zooms)
                looks: list[Any] = []
                for level in look_geoms:
                    parts = " ".join(_parts(level[0]))
                    looks.append(parts if parts not in looks else looks.index(parts))
                spec["look"].append({"color": c, "levels": look_levels, "geom": looks})
    if tips:
        spec["fields"] = [html_text(label) for label in tips]
        spec["tips"] = [column(v) for v in tips.values()]
    if popup:
        spec["popup"] = {"names": [html_text(name) for name in popup],
                         "cols": [column(v) for v in popup.values()]}
    if attribution:
        spec["attribution"] = attribution
    return spec


def layer_element(spec: dict[str, Any], m: Any, *, geometry_types: Sequence[str] = (),
                  fields: Sequence[str] = (), shared: str | None = None) -> Any:
    """Make a folium element that draws ``spec`` into the feature group it is added to.

    ``m`` is the map drawn on (named when the page is rendered). The data is written as
    :func:`~toolkit._core.text.script_json` writes it.

    Returns
    -------
    branca.element.MacroElement
        With ``features`` (count), ``geometry_types`` and ``tooltip_fields`` for
        :func:`toolkit.explore.map_summary`. With ``shared``, a page made for a notebook
        (its figure's ``toolkit_shared`` set) draws the layer the notebook carries under that
        key (``window.toolkitRoads``) instead of ``spec``.
    """
    from branca.element import MacroElement

    class CompactLayer(MacroElement):
        """Features drawn by the page's script from compact data."""

        def __init__(self) -> None:
            super().__init__()
            self._name = "CompactLayer"
            self.map = m
            self.spec = spec
            self.data = script_json(spec)
            self.features = int(spec["n"])
            self.geometry_types = sorted(set(geometry_types))
            self.tooltip_fields = list(fields)

        def render(self, **kwargs: Any) -> str:
            # written as they are: the data is no template (branca's elements are)
            figure: Any = self.get_root()
            if not hasattr(figure, "header") or self._parent is None:
                return ""
            figure.header.add_child(raw_element(f"<script>{RUNTIME}</script>"),
                                    name="toolkit_layer_runtime")
            data = self.data
            if shared and getattr(figure, "toolkit_shared", False):
                data = f"(window.toolkitRoads || {{}})[{json.dumps(shared)}]"
            call = f"toolkitLayer({self._parent.get_name()}, {self.map.get_name()}, {data});"
            figure.script.add_child(raw_element(call), name=self.get_name())
            return ""

    return CompactLayer()


def raw_element(text: str) -> Any:
    """Make a branca element that writes ``text`` as it is (not read as a template).

    Returns
    -------
    branca.element.Element
    """
    from branca.element import Element

    class Raw(Element):
        """Text written into the page as it is."""

        def __init__(self) -> None:
            super().__init__()
            self.text = text

        def render(self, **kwargs: Any) -> str:
            return self.text

    return Raw()
