"""The distribution: its version lives in one place, ``toolkit/_version.py`` (the metadata reads
it through setuptools' dynamic version, and ``toolkit.__version__`` is it, from a source tree or a
wheel), and what the package tells users to install names the distribution and its extras."""

from __future__ import annotations

import ast
import importlib.metadata
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

import toolkit
from toolkit import _version

ROOT = Path(__file__).parent.parent
#: The distribution's name on the package index (the import package is ``toolkit``).
DISTRIBUTION = "cloudops-frames"


def _pyproject() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))


def test_the_version_is_a_release_number_and_is_the_package_version() -> None:
    assert re.fullmatch(r"\d+\.\d+\.\d+((a|b|rc)\d+)?(\.dev\d+)?", _version.__version__)
    assert toolkit.__version__ == _version.__version__


def test_pyproject_reads_the_version_from_the_module_and_holds_none_itself() -> None:
    project = _pyproject()
    assert project["project"]["name"] == DISTRIBUTION
    assert "version" not in project["project"]
    assert "version" in project["project"]["dynamic"]
    attr = project["tool"]["setuptools"]["dynamic"]["version"]["attr"]
    module, _, name = attr.rpartition(".")
    assert (module, name) == ("toolkit._version", "__version__")


def test_the_version_module_imports_nothing() -> None:
    # setuptools reads the attribute without importing the package; nothing there may need one
    tree = ast.parse(Path(_version.__file__).read_text(encoding="utf-8"))
    assert not [n for n in ast.walk(tree) if isinstance(n, ast.Import | ast.ImportFrom)]


def test_reading_the_version_loads_nothing_heavy() -> None:
    code = ("import sys, toolkit\n"
            "v = toolkit.__version__\n"
            "heavy = [m for m in ('pandas', 'requests', 'azure.core', 'importlib.metadata')"
            " if m in sys.modules]\n"
            "assert not heavy, heavy\n"
            "print(v)\n")
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True,
                         text=True, cwd=ROOT)
    assert out.stdout.strip() == _version.__version__


def test_installed_metadata_agrees_with_the_module() -> None:
    try:
        installed = importlib.metadata.version(DISTRIBUTION)
    except importlib.metadata.PackageNotFoundError:
        pytest.skip(f"{DISTRIBUTION} is not installed in this environment (only on sys.path)")
    assert installed == _version.__version__


def test_install_hints_name_the_distribution_and_an_extra_it_has() -> None:
    extras = set(_pyproject()["project"]["optional-dependencies"])
    hints = []
    for module in (ROOT / "toolkit").rglob("*.py"):
        hints += re.findall(r"pip install ['\"]?([\w.-]+)\[(\w+)\]", module.read_text("utf-8"))
    assert len(hints) >= 8
    assert [h for h in hints if h[0] != DISTRIBUTION or h[1] not in extras] == []

