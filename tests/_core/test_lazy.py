"""Lazy exports: each package lists its public names once (its TYPE_CHECKING imports); they
resolve on first use, and nothing heavy loads at import."""

from __future__ import annotations

import subprocess
import sys

import pytest

import toolkit
import toolkit.plot
import toolkit.widgets
from toolkit._core.lazy import exports_of


@pytest.mark.parametrize("package", [toolkit, toolkit.plot, toolkit.widgets])
def test_every_listed_name_resolves_to_its_module(package) -> None:
    exports = exports_of(package.__file__)
    assert exports and package.__all__ == sorted(exports)
    for name, module in exports.items():
        value = getattr(package, name)
        assert getattr(sys.modules[module], name) is value, name
        assert name in dir(package)


@pytest.mark.parametrize("package", [toolkit, toolkit.plot, toolkit.explore, toolkit.widgets])
def test_dir_lists_the_public_names_only(package) -> None:
    public = [n for n in dir(package) if not n.startswith("__")]
    assert set(public) <= set(package.__all__) | {"arm", "connection", "explore", "fabric",
                                                   "graph", "maps", "plot", "sandbox", "widgets"}
    assert set(package.__all__) <= set(public)
    for helper in ("TYPE_CHECKING", "annotations", "attach"):
        assert helper not in dir(package)


def test_unknown_names_raise_attribute_error() -> None:
    with pytest.raises(AttributeError, match="no attribute 'nothing_here'"):
        toolkit.plot.nothing_here  # noqa: B018


def test_the_list_is_read_from_the_type_checking_block(tmp_path) -> None:
    init = tmp_path / "pkg.py"
    init.write_text("from typing import TYPE_CHECKING\n"
                    "if TYPE_CHECKING:\n"
                    "    from json import dumps as dumps, loads as loads\n"
                    "    from os.path import join as join\n"
                    "from math import pi\n", encoding="utf-8")
    assert exports_of(str(init)) == {"dumps": "json", "loads": "json", "join": "os.path"}


def test_star_import_and_no_plotting_library_at_import() -> None:
    code = ("import sys\nfrom toolkit.plot import *\n"
            "assert 'routes' in dir() and callable(routes)\n"
            "assert 'matplotlib.pyplot' not in sys.modules\n")
    subprocess.run([sys.executable, "-c", code], check=True)
