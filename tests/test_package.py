"""The package itself: importing starts nothing and pulls in no plotting or widget library."""

from __future__ import annotations

import subprocess
import sys

import toolkit


def test_import_starts_nothing_and_imports_nothing_heavy() -> None:
    code = (
        "import sys, threading, toolkit\n"
        "heavy = [m for m in ('matplotlib', 'ipywidgets', 'geopandas', 'azure.core')"
        " if m in sys.modules]\n"
        "assert not heavy, heavy\n"
        "assert threading.active_count() == 1, threading.enumerate()\n"
        "assert toolkit.connection is not None\n"
        "assert 'matplotlib' not in sys.modules\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_public_names_resolve() -> None:
    for name in toolkit.__all__:
        assert getattr(toolkit, name) is not None, name


def test_public_functions_document_their_columns() -> None:
    for name in ("sql_operations", "check_server_names", "backend_health"):
        doc = getattr(toolkit, name).__doc__
        assert "Returns" in doc and "Parameters" in doc, name


def test_the_core_finds_an_operation_whose_module_is_not_imported_yet() -> None:
    # a frame read back from a file, a token resumed in a new kernel: the package's loader
    # imports the modules that declare the operations, the first time a name is not known
    code = (
        "import sys, toolkit\n"
        "from toolkit._core.registry import find, record, helper\n"
        "assert find('traffic_incidents') is None\n"
        "assert 'toolkit.maps.traffic' not in sys.modules\n"
        "assert record('traffic_incidents').lifetime == 120\n"
        "assert 'toolkit.maps.traffic' in sys.modules and find('backend_health') is not None\n"
        "assert 'matplotlib' not in sys.modules\n"
        "assert helper('plot', 'incidents').__name__ == 'incidents'\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
