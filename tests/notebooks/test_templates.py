"""The curated notebooks as templates of one's own reports: each runs through the report command
(papermill) against a sandbox served by another process in the public cloud's words, over TLS,
reached only through the documented settings, with ``toolkit.sandbox`` impossible to import in
the kernels, on a world (seed) and days the notebooks were not written about: one with weather
alerts, one without, and one where the credential may not read a subscription (403) and the
management groups above it."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

pytest.importorskip("papermill")
pytest.importorskip("trustme")

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = ROOT / "notebooks"

pytestmark = pytest.mark.slow

#: A startup file for every Python the report starts (the kernels, dask's workers): importing
#: toolkit.sandbox fails there, as it would on a machine without the sandbox.
BLOCK = '''
import importlib.abc, sys

class _NoSandbox(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name == "toolkit.sandbox" or name.startswith("toolkit.sandbox."):
            raise ImportError(f"{name} is not available in this kernel")
        return None

sys.meta_path.insert(0, _NoSandbox())
'''


class Served:
    def __init__(self, *args: str) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "toolkit.sandbox", "--cloud", "public", "--tls",
             "--show-credentials", *args],
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
            env={k: v for k, v in os.environ.items() if not k.startswith("TOOLKIT_")})
        lines: dict[str, str] = {}
        assert self.proc.stdout is not None
        while "TOOLKIT_MAPS_KEY" not in lines:
            line = self.proc.stdout.readline()
            assert line, "the sandbox process ended before it served"
            if line.startswith("sandbox serving at "):
                lines["url"] = line.split()[3]
            elif line.startswith("CA certificate: "):
                lines["ca"] = line.split()[2]
            elif "=" in line and line.startswith("TOOLKIT_"):
                name, _, value = line.strip().partition("=")
                lines[name] = value
        self.settings = {"TOOLKIT_CLOUD": "public", "TOOLKIT_BASE_URL": lines["url"],
                         "TOOLKIT_TOKEN": lines["TOOLKIT_TOKEN"],
                         "TOOLKIT_MAPS_KEY": lines["TOOLKIT_MAPS_KEY"],
                         "TOOLKIT_VERIFY": lines["ca"]}

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.wait(timeout=30)
        if self.proc.stdout is not None:
            self.proc.stdout.close()


def _report(tmp: Path, served: Served, names: list[str],
            *options: str) -> subprocess.CompletedProcess[str]:
    startup = tmp / "startup"
    startup.mkdir(exist_ok=True)
    (startup / "sitecustomize.py").write_text(BLOCK)
    env = {k: v for k, v in os.environ.items() if not k.startswith("TOOLKIT_")}
    env.update(served.settings)
    env["PYTHONPATH"] = str(startup)
    return subprocess.run(
        [sys.executable, "-m", "toolkit.report", "--jobs", "3", "--timeout", "240",
         "--output-dir", str(tmp / "out"), *options, *(str(NOTEBOOKS / n) for n in names)],
        env=env, capture_output=True, text=True, timeout=900)


def _outputs(path: Path) -> str:
    nb = nbformat.read(path, as_version=4)
    return json.dumps([c.get("outputs", []) for c in nb.cells])


def _no_traceback(path: Path) -> None:
    nb = nbformat.read(path, as_version=4)
    errors = [o for c in nb.cells for o in c.get("outputs", []) if o.output_type == "error"]
    assert not errors, f"{path.name}: {errors[0]['ename']}: {errors[0]['evalue']}"


@pytest.mark.timeout(900)
def test_every_notebook_reports_on_another_world_and_day(tmp_path) -> None:
    served = Served("--seed", "11", "--now", "2026-11-24T10:00:00Z")
    try:
        done = _report(tmp_path, served, sorted(p.name for p in NOTEBOOKS.glob("*.ipynb")),
                       "--subscription", "retail-prod", "--subscription", "shared-platform")
    finally:
        served.stop()
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    out = tmp_path / "out"
    for path in sorted(NOTEBOOKS.glob("*.ipynb")):
        _no_traceback(out / path.name)
        assert (out / f"{path.stem}.html").is_file()
    # the scope it was given is the scope it reports on
    quick = _outputs(out / "01-quickstart.ipynb")
    assert "2 subscriptions" in quick and "agw-web-dev" not in quick
    assert "agw-hub-ingress" in quick
    # the day is the service's, not the one the stories were written about
    compliance = _outputs(out / "02-policy-compliance.ipynb")
    assert "2026-11-24 10:00 UTC" in compliance and "2026-11-20" not in compliance
    weather = _outputs(out / "06-air-quality.ipynb")
    assert "No severe weather alerts" not in weather


# each trial has a worker of its own under pytest-xdist: the two run side by side
@pytest.mark.xdist_group("templates-second-day")
@pytest.mark.timeout(900)
def test_a_day_without_alerts_and_a_credential_refused_part_of_the_tenant(tmp_path) -> None:
    served = Served("--seed", "11", "--now", "2026-12-07T10:00:00Z",
                    "--deny-subscription", "retail-dev")
    try:
        done = _report(tmp_path, served, sorted(p.name for p in NOTEBOOKS.glob("*.ipynb")))
    finally:
        served.stop()
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    out = tmp_path / "out"
    for path in sorted(NOTEBOOKS.glob("*.ipynb")):
        _no_traceback(out / path.name)
        assert (out / f"{path.stem}.html").is_file()
    assert "No severe weather alerts for these places now" in _outputs(out / "06-air-quality.ipynb")
    quick = _outputs(out / "01-quickstart.ipynb")
    assert re.search(r"1 of 3 subscriptions could not be read: retail-dev \(AuthorizationFailed\)",
                     quick)
    compliance = _outputs(out / "02-policy-compliance.ipynb")
    assert "2026-12-07 10:00 UTC" in compliance and "2026-11-20" not in compliance
    tenant = _outputs(out / "08-tenant-compliance.ipynb")
    assert "The tenant root group is not among the groups" in tenant
    assert "1 of 3 subscriptions could not be read: retail-dev" in tenant
    assert "could not be read (AuthorizationFailed)" in tenant  # the hierarchy at the root
