"""Every public function against the sandbox in the public cloud's vocabulary gives the same
frames as against the neutral sandbox: the same rows, with the real words in ids and types."""

from __future__ import annotations

from typing import Any

import pandas as pd
import pytest

import toolkit
from tests.reliability.cases import CASES, canonical
from tests.replay import in_words
from toolkit._spec.clouds import PUBLIC
from toolkit.sandbox.server import Sandbox

NEUTRAL_ONLY = ("Vendor", "vendor.graph", "vault.vendor.net", "vendork8s.io", "x-vendor-")


def _real(value: Any, lower: bool = False) -> Any:
    return in_words(value, PUBLIC, lower=lower)


def _at_home(rows: list[tuple[Any, ...]], url: str) -> list[tuple[Any, ...]]:
    # a link the service answered with names its own origin: the two sandboxes' ports differ
    return [tuple(v.replace(url, "<origin>") if isinstance(v, str) else v for v in row)
            for row in rows]


def _strings(rows: list[tuple[Any, ...]]) -> list[str]:
    out: list[str] = []
    for row in rows:
        for v in row:
            if isinstance(v, tuple):
                out.extend(x for x in v if isinstance(x, str))
            elif isinstance(v, str):
                out.append(v)
    return out


@pytest.fixture(scope="module")
def pair() -> Any:
    with Sandbox(seed=7, lro_polls=2, lro_retry_after=1, frozen_clock=True) as neutral, \
            Sandbox(seed=7, lro_polls=2, lro_retry_after=1, frozen_clock=True,
                    cloud="public") as public:
        conns = {}
        for sb in (neutral, public):
            conn = toolkit.connect(sandbox=sb, progress=False)
            conn.sleep = lambda s: None
            conns[sb.cloud.name] = conn
        yield neutral.catalog(), conns
        for conn in conns.values():
            conn.close()


@pytest.mark.parametrize("name", sorted(CASES))
def test_same_rows_with_the_real_words(pair, name) -> None:
    catalog, conns = pair
    case = CASES[name]
    frames = {cloud: case.call(conn, catalog) for cloud, conn in conns.items()}
    neutral, public = frames["neutral"], frames["public"]
    assert list(public.columns) == list(neutral.columns)
    assert public.dtypes.astype(str).tolist() == neutral.dtypes.astype(str).tolist()
    assert len(public) == len(neutral) > 0
    # Resource Graph writes types in lower case: its words are mapped in lower case too
    lower = name.startswith("resource_graph")
    want = _at_home([_real(row, lower=lower) for row in canonical(neutral, case)],
                    conns["neutral"].sandbox.url)
    got = _at_home(canonical(public, case), conns["public"].sandbox.url)
    assert got == want
    leftovers = [s for s in _strings(got) if any(w in s for w in NEUTRAL_ONLY)]
    assert leftovers == []
    if public.attrs.get("request_ids") is not None:
        assert public.attrs["request_ids"], "request ids read from the x-ms- header"
    for column in public.columns:
        if isinstance(public[column].dtype, pd.CategoricalDtype):
            assert not public[column].isna().any() or neutral[column].isna().any(), \
                f"{column}: a real word its categories do not know"


def test_policy_components_name_the_clouds_vault_hosts(pair) -> None:
    catalog, conns = pair
    groups = catalog[catalog["kind"] == "resource_group"]
    for cloud, ns, suffix in (("public", "Microsoft", ".vault.azure.net/"),
                              ("neutral", "Vendor", ".vault.vendor.net/")):
        conn = conns[cloud]
        vault = None
        for sub, rg in zip(groups["subscription_id"], groups["resource_group"], strict=True):
            states = toolkit.policy_states(
                sub, rg, filter=f"resourceType eq '/{ns}.KeyVault/vaults'", select="resourceId",
                connection=conn)
            if len(states):
                vault = str(states["resourceId"].iloc[0])
                break
        assert vault is not None, "the world has a key vault"
        df = toolkit.policy_states(scope=vault, expand="components", connection=conn)
        ids = [c["id"] for v in df["components"].dropna() for c in v]
        assert ids and all(suffix in i for i in ids), (cloud, ids[:3])
