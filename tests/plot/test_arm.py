"""plot.backend_health and plot.encryption_posture: servers by pool coloured by health, and
servers by encryption posture, from the functions' frames."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import pandas as pd
import pytest

import toolkit
from toolkit._core.errors import ValidationError
from toolkit.arm._schemas import ENCRYPTION_PROTECTOR
from toolkit.plot._common import HEALTH_COLORS
from toolkit.sandbox.server import Sandbox


@pytest.fixture(scope="module")
def health(sandbox):
    conn = toolkit.connect(sandbox=sandbox, progress=False)
    conn.sleep = lambda s: None
    gw = sandbox.catalog().query("kind == 'application_gateway' and name == 'agw-api-prod-weu'")
    row = gw.iloc[0]
    return toolkit.backend_health(row.subscription_id, row.resource_group, row["name"],
                                  connection=conn)


def test_bars_count_each_server_once_with_its_worst_health(health) -> None:
    before = health.copy()
    ax = toolkit.plot.backend_health(health)
    assert health.equals(before)  # the input is not changed
    pools = [t.get_text() for t in ax.get_yticklabels()]
    assert set(pools) == set(health["backendAddressPool.name"])
    # one bar segment per (pool, health) present; widths add up to distinct servers per pool
    servers = health.groupby("backendAddressPool.name")["address"].nunique()
    widths: dict[str, float] = {}
    for patch in ax.patches:
        y = round(patch.get_y() + patch.get_height() / 2)
        widths[pools[y]] = widths.get(pools[y], 0) + patch.get_width()
    assert widths == {p: float(n) for p, n in servers.items()}
    legend = {t.get_text() for t in ax.get_legend().get_texts()}
    assert legend == set(health["health"].astype(str))
    colours = {matplotlib.colors.to_hex(p.get_facecolor()) for p in ax.patches}
    assert colours <= {c.lower() for c in HEALTH_COLORS.values()}
    plt.close(ax.figure)


def test_draws_on_a_given_axes(health) -> None:
    fig, ax = plt.subplots()
    assert toolkit.plot.backend_health(health, ax=ax, title="t") is ax
    assert ax.get_title() == "t"
    plt.close(fig)


def test_wrong_frame_is_refused_with_the_missing_columns() -> None:
    import pandas as pd

    with pytest.raises(ValidationError, match=r"backendAddressPool\.name"):
        toolkit.plot.backend_health(pd.DataFrame({"address": ["a"]}))


def test_posture_picture_counts_every_server() -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from toolkit.plot.arm import ENCRYPTION_POSTURES, encryption_posture_of

    fresh = Sandbox(seed=7)
    servers = fresh.world.section("sql").servers  # the world as built, whatever tests changed
    records = []
    for s in servers:
        props = s.protector["properties"]
        records.append({"id": f"/subscriptions/{s.subscription_id}/resourceGroups/"
                              f"{s.resource_group}/providers/Vendor.Sql/servers/{s.name}/"
                              "encryptionProtector/current",
                        "properties": props, "server": s.name})
    from toolkit._core.frames import build_frame

    df = build_frame(records, ENCRYPTION_PROTECTOR)
    posture = encryption_posture_of(df)
    expected = []
    for s in servers:
        p = s.protector["properties"]
        if p["serverKeyType"] == "ServiceManaged":
            expected.append("service-managed key")
        elif p["autoRotationEnabled"]:
            expected.append("vault key, auto-rotated")
        elif p["serverKeyName"].count("_") == 2:
            expected.append("vault key, pinned version")
        else:
            expected.append("vault key, versionless")
    assert posture.astype(str).tolist() == expected
    before = df.copy()
    ax = toolkit.plot.encryption_posture(df)
    widths = sum(patch.get_width() for patch in ax.patches)
    assert widths == len(servers)
    assert {t.get_text() for t in ax.get_legend().get_texts()} <= set(ENCRYPTION_POSTURES)
    pd.testing.assert_frame_equal(df, before)  # the input is not changed
    with pytest.raises(ValidationError):
        toolkit.plot.encryption_posture(df.drop(columns=["serverKeyType"]))
    plt.close("all")
