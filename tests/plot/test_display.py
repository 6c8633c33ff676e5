"""A described figure shown by IPython carries its description as the picture's alt text.

First with IPython's own display formatter and its own figure printers
(``select_figure_formats``, as the inline backend registers them), then in a real kernel run by
nbclient, where matplotlib-inline shows the figures at the end of each cell.
"""

from __future__ import annotations

import os
from types import SimpleNamespace
from typing import Any

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import pandas as pd
import pytest

import toolkit
from toolkit.plot._display import enable_alt_text
from toolkit.plot.description import describe

IPython = pytest.importorskip("IPython")

from IPython.core.formatters import DisplayFormatter  # noqa: E402
from IPython.core.pylabtools import select_figure_formats  # noqa: E402


def _shell(formats: set[str]) -> Any:
    """A shell's display machinery: IPython's formatter, the figure printers it registers."""
    shell = SimpleNamespace(display_formatter=DisplayFormatter())
    select_figure_formats(shell, formats)
    return shell


def _health() -> pd.DataFrame:
    return pd.DataFrame({"backendAddressPool.name": ["web", "web"],
                         "address": ["10.0.0.4", "10.0.0.5"], "health": ["Up", "Down"]})


def test_a_described_figure_is_shown_with_its_alt_text() -> None:
    shell = _shell({"png"})
    assert enable_alt_text(describe, shell) is True
    assert enable_alt_text(describe, shell) is True  # once: the same printer
    ax = toolkit.plot.backend_health(_health())
    data, metadata = shell.display_formatter.format(ax.figure)
    assert data["image/png"]  # the picture itself, as before
    assert metadata["image/png"] == {"alt": toolkit.plot.describe(ax.figure)}
    assert "1 up, 1 down" in metadata["image/png"]["alt"]
    plt.close("all")


def test_every_picture_type_carries_it_and_retinas_size_is_kept() -> None:
    shell = _shell({"png", "svg"})
    enable_alt_text(describe, shell)
    ax = toolkit.plot.backend_health(_health())
    alt = toolkit.plot.describe(ax.figure)
    data, metadata = shell.display_formatter.format(ax.figure)
    assert set(data) >= {"image/png", "image/svg+xml"}
    assert metadata["image/svg+xml"]["alt"] == alt and metadata["image/png"]["alt"] == alt
    # a format picked after the printer was registered (IPython's retina gives the picture's
    # width and height as metadata of its own, which replaces the bundle's)
    select_figure_formats(shell, {"retina"})
    data, metadata = shell.display_formatter.format(ax.figure)
    assert {"width", "height"} <= set(metadata["image/png"])
    assert metadata["image/png"]["alt"] == alt
    plt.close("all")


def test_a_figure_without_a_description_is_shown_as_before() -> None:
    shell = _shell({"png"})
    enable_alt_text(describe, shell)
    fig, ax = plt.subplots()
    ax.plot([1, 2, 3])
    data, metadata = shell.display_formatter.format(fig)
    assert "image/png" in data and "alt" not in metadata.get("image/png", {})
    plt.close(fig)


def test_someone_elses_figure_bundle_printer_is_left_in_place() -> None:
    from matplotlib.figure import Figure

    shell = _shell({"png"})

    def theirs(figure: Any) -> Any:
        return {"text/plain": "their figure"}, {}

    shell.display_formatter.mimebundle_formatter.for_type(Figure, theirs)
    assert enable_alt_text(describe, shell) is False
    assert shell.display_formatter.mimebundle_formatter.lookup_by_type(Figure) is theirs


def test_outside_ipython_nothing_is_registered() -> None:
    assert enable_alt_text(describe, SimpleNamespace()) is False


@pytest.mark.slow
def test_in_a_kernel_the_pictures_output_carries_the_alt_text(tmp_path) -> None:
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_code_cell(
            "import pandas as pd\nimport toolkit.plot\n"
            "df = pd.DataFrame({'backendAddressPool.name': ['web', 'web', 'api'],\n"
            "                   'address': ['a', 'b', 'c'], 'health': ['Up', 'Down', 'Up']})\n"
            "ax = toolkit.plot.backend_health(df)"),
        nbformat.v4.new_code_cell(
            "import matplotlib.pyplot as plt\nfig, ax = plt.subplots()\nax.plot([1, 2])"),
        nbformat.v4.new_code_cell(
            "fig, ax = plt.subplots()\nax.plot([3, 5])\n"
            "toolkit.plot.set_description(ax, 'Requests per day: from 3 to 5')"),
    ]
    env = {"MPLBACKEND": "module://matplotlib_inline.backend_inline"}
    saved = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    try:
        nbclient.NotebookClient(nb, timeout=120, kernel_name="python3",
                                resources={"metadata": {"path": str(tmp_path)}}).execute()
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value

    def pictures(cell: Any) -> list[Any]:
        return [o for o in cell.outputs if "image/png" in o.get("data", {})]

    (helper,), (plain,), (own,) = (pictures(c) for c in nb.cells)
    assert toolkit.plot.output_alt(helper) == (
        "Backend health by pool: 3 backend servers: 2 up, 1 down. Per pool: web 1 up, 1 down; "
        "api 1 up.")
    assert toolkit.plot.output_alt(plain) is None
    assert toolkit.plot.output_alt(own) == "Requests per day: from 3 to 5."
