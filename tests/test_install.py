"""The install line the README gives works: the wheel `make dist` builds installs with the
``notebook`` extra into a fresh virtual environment, where a function answers and the report
command writes a report."""

from __future__ import annotations

import os
import subprocess
import sys
import venv
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.slow


@pytest.mark.timeout(600)
def test_the_wheel_installs_with_the_notebook_extra_and_reports(tmp_path) -> None:
    dist = tmp_path / "dist"
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps",
                    "--wheel-dir", str(dist), str(ROOT)], check=True, timeout=300)
    (wheel,) = dist.glob("cloudops_frames-*.whl")
    env_dir = tmp_path / "venv"
    venv.create(env_dir)
    python = env_dir / "bin" / "python"
    # this pip installs into the new environment (--python); byte-compiling its gigabyte of
    # packages would take most of the test's time, and Python compiles what it imports anyway
    subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install", "--quiet",
                    "--no-compile", f"{wheel}[notebook]"], check=True, timeout=400)
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("TOOLKIT_", "PYTHON"))}
    clean["TOOLKIT_SANDBOX_NOW"] = "2026-11-20T09:00:00Z"
    one = subprocess.run(
        [str(python), "-W", "ignore", "-c",
         "import toolkit; df = toolkit.sql_operations(); print(len(df), df.attrs['sandbox'])"],
        capture_output=True, text=True, env=clean, cwd=tmp_path, timeout=120, check=True)
    assert one.stdout.split() == ["110", "True"]
    # with no notebook named, the report command runs the curated notebooks installed with it
    found = subprocess.run(
        [str(python), "-c", "from toolkit.report.run import curated_notebooks\n"
                            "print(*(str(p) for p in curated_notebooks()), sep='\\n')"],
        capture_output=True, text=True, env=clean, cwd=tmp_path, timeout=120, check=True)
    installed = [Path(line) for line in found.stdout.split()]
    assert [p.name for p in installed] == sorted(p.name for p in (ROOT / "notebooks").glob(
        "*.ipynb"))
    assert all(p.is_relative_to(env_dir) for p in installed)
    quick = env_dir / "share" / "cloudops-frames" / "notebooks" / "01-quickstart.ipynb"
    assert quick.is_file()
    done = subprocess.run(
        [str(python), "-m", "toolkit.report", "--output-dir", str(tmp_path / "reports"),
         str(quick)], capture_output=True, text=True, env=clean, cwd=tmp_path, timeout=300)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert (tmp_path / "reports" / "01-quickstart.html").is_file()
    assert (tmp_path / "reports" / "01-quickstart.ipynb").is_file()
