"""The system Chromium the browser tests drive (through Playwright, never a downloaded browser),
and the local servers they load pages from (JupyterLab, Voilà, the sandbox's own process).
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import shutil
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

#: How the tests start the system Chromium: headless, asking nothing of the web.
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--no-first-run"]


def chromium() -> str | None:
    """The system Chromium's path, if installed."""
    return shutil.which("chromium") or shutil.which("chromium-browser")


def missing(*modules: tuple[str, str]) -> str | None:
    """Why a browser test cannot run here (a sentence), or ``None``.

    ``modules`` are further ``(module, package)`` pairs the test needs beside Playwright.
    """
    if chromium() is None:
        return "needs Chromium from the system packages (apt-get install chromium)"
    for module, package in (("playwright", "playwright"), *modules):
        if importlib.util.find_spec(module) is None:
            return f"needs the {package} package (pip install {package})"
    return None


def sync_playwright() -> Any:
    """Playwright's synchronous entry point (imported when a test runs, not at collection)."""
    from playwright.sync_api import sync_playwright as start

    return start()


def launch(p: Any) -> Any:
    """The system Chromium, started headless by Playwright ``p``."""
    return p.chromium.launch(executable_path=chromium(), args=CHROMIUM_ARGS)


def free_port() -> int:
    """A TCP port of 127.0.0.1 free at this instant."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_until_up(url: str, proc: subprocess.Popen[Any], timeout: float) -> None:
    """Ask ``url`` until it answers 200, for at most ``timeout`` seconds; fail at once if the
    server's process ``proc`` ends first."""
    name = proc.args[0] if isinstance(proc.args, list | tuple) else proc.args
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"{name} exited with {proc.returncode} before it answered {url}")
        try:
            with urllib.request.urlopen(url, timeout=2) as answer:
                if answer.status == 200:
                    return
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            pass
        time.sleep(0.25)  # polling interval while waiting for the condition, not a timing
    raise TimeoutError(f"{url} did not answer within {timeout:.0f} s")


@contextlib.contextmanager
def serving(args: list[str], *, url: str, env: dict[str, str], cwd: Path, log: Path,
            timeout: float = 90) -> Iterator[None]:
    """A server process (``args``, its output written to ``log``) until the block ends, once
    ``url`` answers; stopped then with whatever it started (its kernels): asked first, its
    process group killed if it has not ended after 20 s."""
    with log.open("wb") as out:
        proc = subprocess.Popen(args, cwd=cwd, env=env, stdout=out, stderr=subprocess.STDOUT,
                                start_new_session=True)
        try:
            wait_until_up(url, proc, timeout)
            yield
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(proc.pid, signal.SIGKILL)  # the group this helper started
                proc.wait(timeout=10)
