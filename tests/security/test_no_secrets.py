"""No secret value the sandbox hands out ever shows: not in any committed notebook's outputs, not
in the logs, not in error messages. (The notebooks' fresh outputs, as nbval runs them against a
sandbox keyed by a secret of that run, are searched by ``notebooks/conftest.py``.)"""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest

import toolkit
from toolkit.sandbox.arm.clusters import secret_values
from toolkit.sandbox.world import World

NOTEBOOKS = sorted((Path(__file__).parents[2] / "notebooks").glob("*.ipynb"))


def _secrets(world: World) -> list[str]:
    values = secret_values(world)
    assert values and all(len(v) >= 16 or v.count("-") == 3 for v in values)
    return values


def _rendered(notebook: Path) -> str:
    """Everything a notebook shows: every output's text, HTML and stream, and its source."""
    nb = json.loads(notebook.read_text(encoding="utf-8"))
    parts: list[str] = []
    for cell in nb.get("cells", []):
        source = cell.get("source", "")
        parts.append("".join(source) if isinstance(source, list) else source)
        for out in cell.get("outputs", []):
            for key in ("text", "traceback"):
                value = out.get(key)
                if value:
                    parts.append("".join(value) if isinstance(value, list) else value)
            for mime, value in (out.get("data") or {}).items():
                if mime.startswith("image/"):
                    continue
                parts.append("".join(value) if isinstance(value, list) else json.dumps(value))
    return "\n".join(parts)


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_no_secret_in_a_committed_notebook(notebook: Path) -> None:
    # notebooks run against the default sandbox world (seed 7)
    text = _rendered(notebook)
    leaked = [v[:6] + "..." for v in _secrets(World(7)) if v in text]
    assert leaked == [], f"{notebook.name} shows secret values"


def test_the_credential_notebook_exists_and_shows_masks() -> None:
    names = [p.name for p in NOTEBOOKS]
    assert "04-support-and-clusters.ipynb" in names
    text = _rendered(NOTEBOOKS[names.index("04-support-and-clusters.ipynb")])
    assert "••••••••" in text


def test_no_secret_in_logs_or_errors(conn, sandbox, caplog, tmp_path) -> None:
    world = sandbox.world
    clusters = world.section("clusters")
    errors: list[str] = []
    with caplog.at_level(logging.DEBUG):
        for c in clusters.managed:
            df = toolkit.cluster_monitoring_credentials(c.subscription_id, c.resource_group,
                                                        c.name, connection=conn)
            toolkit.write_kubeconfig(df, tmp_path / c.name)
            try:
                toolkit.write_kubeconfig(df, tmp_path / c.name)
            except FileExistsError as err:
                errors.append(str(err))
            try:
                toolkit.write_kubeconfig(df["value"].iloc[0].reveal(), tmp_path / "x")
            except toolkit.ValidationError as err:
                errors.append(str(err))
            logging.getLogger("toolkit").debug("kubeconfig row %r", df.iloc[0].to_dict())
        for h in clusters.hosted:
            df = toolkit.hosted_cluster_credentials(h.subscription_id, h.resource_group, h.name,
                                                    connection=conn)
            logging.getLogger("toolkit").info("password %s", df["kubeadminPassword"].iloc[0])
    text = caplog.text + "\n".join(errors)
    assert "listClusterMonitoringUserCredential" in caplog.text or caplog.records
    leaked = [v[:6] + "..." for v in [*_secrets(world), sandbox.maps_key.reveal()]
              if v in text]
    assert leaked == []
    assert len(errors) == 2 * len(clusters.managed)
