"""Leaflet carried once per notebook or page instead of once per map.

A map in a notebook is a page of its own in an ``<iframe>`` (as folium shows it). Each used to
carry Leaflet's script and style (about 160 KB) and its road background; here only the first
map of a kernel session carries them, once, compressed (gzip, base64: about 110 KB, with the
script that draws the toolkit's layers and the main roads of the shipped network) in a hidden
element beside its ``<iframe>``, and every map's page (that one's too) opens with a small loader
instead: it looks for Leaflet in the windows above it (the notebook or the HTML report: an
``<iframe>`` written from ``srcdoc`` shares their origin), unpacks it once per window (the
browser's own ``DecompressionStream``) and then runs the map's scripts. Nothing is fetched from
the network, so the notebook, its HTML report and the notebook reopened with its outputs draw
offline.

A page saved on its own (``m.save``, ``m.get_root().render()``) still carries Leaflet and its
roads written in, uncompressed. So does every map in a front end that shows each output in a
window of an origin of its own, where no map can see another's (Google Colab).
"""

from __future__ import annotations

import base64
import gzip
import json
import logging
import re
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from functools import cache
from typing import Any

from toolkit.explore._roads import shared_roads

logger = logging.getLogger(__name__)

__all__ = ["LOADER", "carrier", "carries_now", "clean_render", "leaflet_assets", "leaflet_files",
           "notebook_html", "shared_page", "srcdoc_value"]

#: The id of the element that carries Leaflet in a notebook or report.
CARRIER_ID = "toolkit-leaflet"
#: The type given to a map's scripts until Leaflet is loaded.
DEFERRED = "text/x-toolkit-deferred"

LOADER = r"""(function () {
  var KEY = "__toolkitLeaflet", ID = "@ID@";
  function unpack(text) {
    var bin = atob(text.replace(/\s+/g, "")), bytes = new Uint8Array(bin.length);
    for (var i = 0; i < bin.length; i++) { bytes[i] = bin.charCodeAt(i); }
    var stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
    return new Response(stream).text().then(JSON.parse);
  }
  function find() {
    var w = window;
    for (var depth = 0; depth < 10; depth++) {
      try {
        var got = w[KEY];
        if (got && got.js) { return got; }
        var el = w.document.getElementById(ID);
        if (el) {
          return unpack(el.textContent).then(function (a) {
            try {
              w[KEY] = {js: a.js, css: a.css, runtime: a.runtime, roads: a.roads};
            } catch (e) { /* closed */ }
            return a;
          });
        }
      } catch (e) { break; }  // a window of another origin
      if (w.parent === w) { break; }
      w = w.parent;
    }
    return null;
  }
  function run(a) {
    var style = document.createElement("style");
    style.textContent = a.css; document.head.appendChild(style);
    var lib = document.createElement("script");
    lib.textContent = a.js; document.head.appendChild(lib);
    if (a.roads) { window.toolkitRoads = a.roads; }
    if (a.runtime && !window.toolkitLayer) {
      var rt = document.createElement("script");
      rt.textContent = a.runtime; document.head.appendChild(rt);
    }
    var waiting = document.querySelectorAll('script[type="@DEFERRED@"]');
    for (var i = 0; i < waiting.length; i++) {
      var s = document.createElement("script");
      s.textContent = waiting[i].textContent;
      waiting[i].parentNode.replaceChild(s, waiting[i]);
    }
  }
  function go() {
    var found = find();
    if (!found) {
      document.body.insertAdjacentHTML("afterbegin", "<p style='font:13px sans-serif;"
        + "color:#b71c1c;margin:8px'>This map's Leaflet comes with the first map of the "
        + "notebook: run that cell (or this one again after restarting the kernel).</p>");
      return;
    }
    Promise.resolve(found).then(run);
  }
  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", go);
  } else { go(); }
})();""".replace("@ID@", CARRIER_ID).replace("@DEFERRED@", DEFERRED).replace("\n  ", "\n")

_carrier_lock = threading.Lock()
_carrier: dict[str, Any] = {"done": False, "cell": None}


def leaflet_assets() -> dict[str, str]:
    """Map each CDN address folium links to its file content (from folium-offline)."""
    try:
        from offlinefolium import elements
    except ImportError:  # pragma: no cover - depends on the install
        logger.warning("folium-offline is not installed: the map links Leaflet from its CDN")
        return {}
    return dict(elements._res)


@cache
def leaflet_files() -> tuple[str, str]:
    """Leaflet's script and style, from the folium-offline package.

    Returns
    -------
    tuple of str
        The script and the style sheet (empty strings when folium-offline is missing).
    """
    assets = leaflet_assets()
    js = next((v for k, v in assets.items() if k.endswith("/leaflet.js")), "")
    css = next((v for k, v in assets.items() if k.endswith("/leaflet.css")), "")
    return js, css


@cache
def _packed() -> str:
    from toolkit.explore._layer import RUNTIME

    js, css = leaflet_files()
    raw = json.dumps({"js": js, "css": css, "runtime": RUNTIME, "roads": shared_roads()},
                     separators=(",", ":")).encode()
    return base64.b64encode(gzip.compress(raw, 9, mtime=0)).decode("ascii")


def carrier() -> str:
    """Write the hidden element that carries Leaflet (compressed) for a notebook's maps.

    Returns
    -------
    str
        HTML.
    """
    return f'<div id="{CARRIER_ID}" hidden style="display:none">{_packed()}</div>'


def _current_cell() -> str | None:
    """Return the id of the notebook cell being run (as the front end sends it), if any."""
    try:
        from IPython import get_ipython
    except ImportError:  # pragma: no cover - IPython comes with Jupyter
        return None
    shell = get_ipython()
    kernel = getattr(shell, "kernel", None)
    try:
        parent = kernel.get_parent() if kernel is not None else {}
    except Exception:  # an older or newer kernel: no cell id
        return None
    cell = (parent or {}).get("metadata", {}).get("cellId")
    return cell if isinstance(cell, str) else None


def _in_kernel() -> bool:
    try:
        from IPython import get_ipython
    except ImportError:  # pragma: no cover
        return False
    return getattr(get_ipython(), "kernel", None) is not None


def _outputs_apart() -> bool:
    """Tell whether the front end shows each output in a window of an origin of its own.

    Google Colab does: a map there cannot find Leaflet in another cell's output. JupyterLab,
    Notebook and VS Code show the outputs in one document (VS Code in one webview).
    """
    return "google.colab" in sys.modules


def carries_now() -> bool:
    """Tell whether the map shown now carries Leaflet.

    The first map of this kernel session does, and so does a map shown again from that same
    cell; outside a kernel, or where each output is a window apart (:func:`_outputs_apart`),
    every map does.

    Returns
    -------
    bool
    """
    if not _in_kernel() or _outputs_apart():
        return True
    cell = _current_cell()
    with _carrier_lock:
        if not _carrier["done"]:
            _carrier.update(done=True, cell=cell)
            return True
        return cell is not None and cell == _carrier["cell"]


_SCRIPT_SRC = re.compile(r'<script src="([^"]+)"></script>')
_STYLE_LINK = re.compile(r'<link rel="stylesheet" href="([^"]+)"/>')
_INLINE_SCRIPT = re.compile(r"<script>")
_INDENT = re.compile(r"\n\s+")


def shared_page(page: str) -> str:
    """Make a folium page (as rendered, linking its files) load Leaflet through the loader.

    The known links are dropped and the scripts after Leaflet's are deferred until
    :data:`LOADER` has found it.

    Returns
    -------
    str
        HTML with no ``<script src>`` and no style sheet link of the known files.
    """
    from toolkit.explore._layer import RUNTIME

    known = leaflet_assets()
    at = next((m for m in _SCRIPT_SRC.finditer(page) if m.group(1).endswith("/leaflet.js")),
              None)
    if at is None or not known:
        return page
    before, after = page[:at.start()], page[at.end():]
    after = after.replace(f"<script>{RUNTIME}</script>", "")  # carried with Leaflet
    after = _INLINE_SCRIPT.sub(f'<script type="{DEFERRED}">', after)
    page = before + f"<script>{LOADER}</script>" + after

    def drop(m: re.Match[str]) -> str:
        return "" if m.group(1) in known else m.group(0)

    page = _STYLE_LINK.sub(drop, _SCRIPT_SRC.sub(drop, page))
    # the templates' indentation: no text of the map spans lines (the data is JSON, its line
    # breaks escaped, or escaped HTML text)
    return _INDENT.sub("\n", page)


def _elements(figure: Any) -> Iterator[Any]:
    """Walk a branca figure's elements, each once, depth first in the order they were added.

    The figure and its children (the map, its layers...) come first, then its header, body and
    script and theirs.
    """
    parts = [getattr(figure, part, None) for part in ("header", "html", "script")]
    todo = [*reversed([p for p in parts if p is not None]), figure]
    seen: set[int] = set()
    while todo:
        element = todo.pop()
        if id(element) in seen:
            continue
        seen.add(id(element))
        yield element
        todo.extend(reversed(list(getattr(element, "_children", {}).values())))


@contextmanager
def clean_render(figure: Any, *, short_names: bool = False) -> Iterator[None]:
    """Render a branca figure within the block, leaving it as it was before.

    A render adds parts to the page's elements under the names it knows (each element's script
    to the figure's, a shown layer's ``addTo`` to the layer): after the block every element has
    its children as before the render, so that no render leaves parts for another to write
    again.

    With ``short_names`` every element is named by a number of its own within the block
    (``feature_group_3``) instead of folium's random 32-digit id (``feature_group_<id>``,
    repeated wherever the page refers to the element): a lighter page, whose names are the
    page's own, with nothing of the page's text (its data above all) searched or rewritten for
    them. The elements have their ids again after the block.
    """
    elements = list(_elements(figure))
    before = [(e, e._id, e._children.copy()) for e in elements]
    if short_names:
        for number, element in enumerate(elements, 1):
            element._id = str(number)
    try:
        yield
    finally:
        for element, old_id, children in before:
            element._id = old_id
            element._children = children


def srcdoc_value(page: str) -> str:
    """Escape ``page`` as the value of a single-quoted ``srcdoc`` attribute.

    Only ``&`` and ``'`` are escaped: a page's JSON is full of double quotes, which then stay
    as they are.

    Returns
    -------
    str
    """
    return page.replace("&", "&amp;").replace("'", "&#39;")


def notebook_html(figure: Any, page: str) -> str:
    """Write what a notebook shows for a map.

    Its page in an ``<iframe>`` (as branca's figure shows it), with Leaflet's carrier before it
    when this map carries it (:func:`carries_now`).

    Returns
    -------
    str
        HTML.
    """
    srcdoc = srcdoc_value(page)
    if figure.height is None:
        frame = (
            f'<div style="width:{figure.width};">'
            '<div style="position:relative;width:100%;height:0;'
            f'padding-bottom:{figure.ratio};">'
            '<span style="color:#565656">Make this Notebook Trusted to load map: File -> '
            'Trust Notebook</span>'
            f"<iframe srcdoc='{srcdoc}' style='position:absolute;width:100%;height:100%;"
            "left:0;top:0;border:none !important;' allowfullscreen webkitallowfullscreen "
            "mozallowfullscreen></iframe></div></div>")
    else:
        frame = (f"<iframe srcdoc='{srcdoc}' width='{figure.width}' "
                 f"height='{figure.height}' style='border:none !important;' "
                 "allowfullscreen></iframe>")
    return (carrier() if carries_now() else "") + frame
