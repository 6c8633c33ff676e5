"""The static view a widget leaves in a page without a widget manager: a picture, a map of a
fixed height, the widget's own display data kept beside it."""

from __future__ import annotations

import base64
import html

import pytest

from toolkit.widgets._static import bundle, map_iframe, png_tag


def test_a_picture_is_written_in_and_its_text_escaped() -> None:
    png = b"\x89PNG-bytes"
    tag = png_tag(png, 'air "quality" <Ordino>')
    assert f"data:image/png;base64,{base64.b64encode(png).decode()}" in tag
    assert 'alt="air &quot;quality&quot; &lt;Ordino&gt;"' in tag
    assert png_tag(b"", "nothing") == ""


def test_a_map_keeps_its_height_and_its_page_escaped() -> None:
    folium = pytest.importorskip("folium")
    m = folium.Map(location=(42.5, 1.5), tiles=None)
    frame = map_iframe(m, 380.7)
    assert "height:380px" in frame and "width:100%" in frame
    assert 'title="interactive map"' in frame  # a map of the toolkit's is named by its data
    page = frame.split("srcdoc='", 1)[1].split("' style=", 1)[0]
    assert "'" not in page and html.unescape(page) == m.get_root().render()


def test_a_toolkit_map_finds_leaflet_carried_once(frames_for_static) -> None:
    """A map of toolkit.explore in a widget carries no Leaflet of its own: the first map of a
    kernel session carries it (compressed) beside its frame; outside a kernel each does."""
    from toolkit.explore._page import CARRIER_ID, leaflet_files

    frame = map_iframe(frames_for_static, 400)
    page = html.unescape(frame.split("srcdoc='", 1)[1].split("' style=", 1)[0])
    assert "__toolkitLeaflet" in page and "<script src=" not in page
    assert leaflet_files()[0][:2000] not in page
    assert f'id="{CARRIER_ID}"' in frame  # outside a kernel: carried with every map


@pytest.fixture
def frames_for_static():
    pytest.importorskip("folium")
    import geopandas as gpd
    import shapely

    import toolkit.explore as explore

    df = gpd.GeoDataFrame({"name": ["a"]}, geometry=[shapely.Point(1.52, 42.51)], crs=4326)
    return explore.suggestions(df.assign(query="q", rank=1), tiles="roads")


class _Widget:
    def __init__(self, data: object) -> None:
        self.data = data

    def _repr_mimebundle_(self, **kwargs: object) -> object:
        return self.data


@pytest.mark.parametrize("shape", ["dict", "tuple", "none"])
def test_the_widgets_own_view_is_kept_beside_the_static_one(shape) -> None:
    view = {"application/vnd.jupyter.widget-view+json": {"model_id": "m1"}}
    data = {"dict": view, "tuple": (view, {}), "none": None}[shape]
    out = bundle(_Widget(data), "<table>t</table>")
    assert out["text/html"] == '<div class="toolkit-widget-static"><table>t</table></div>'
    assert (out.get("application/vnd.jupyter.widget-view+json") is None) == (shape == "none")
