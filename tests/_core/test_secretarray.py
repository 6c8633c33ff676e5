"""The ``secret`` column type: cells are Secret values, every writer (plain pandas, Arrow,
Parquet) gets the mask, and pandas operations keep the type or leave it, never unmask it."""

from __future__ import annotations

import pandas as pd
import pytest

from toolkit._core.secretarray import SecretArray, SecretDtype, secret_array
from toolkit._core.secrets import MASK, Secret


def test_plain_pandas_writers_write_the_mask_of_a_credential_frame(sandbox, tmp_path) -> None:
    import io

    import toolkit
    from toolkit._core.secrets import MASK

    conn = toolkit.connect(sandbox=sandbox, progress=False)
    try:
        aro = sandbox.catalog().query("kind == 'hosted_cluster'").iloc[0]
        creds = toolkit.hosted_cluster_credentials(aro.subscription_id, aro.resource_group,
                                                   aro["name"], connection=conn)
        aks = sandbox.catalog().query("kind == 'managed_cluster'").iloc[0]
        kube = toolkit.cluster_monitoring_credentials(aks.subscription_id, aks.resource_group,
                                                      aks["name"], connection=conn)
    finally:
        conn.close()
    for df, col in ((creds, "kubeadminPassword"), (kube, "value")):
        value = df[col].iloc[0].reveal()  # the cells are still Secret values
        value = value.decode() if isinstance(value, bytes) else value
        path = tmp_path / f"{col}.parquet"
        df.to_parquet(path)  # plain pandas, through Arrow
        assert value.encode() not in path.read_bytes()
        back = pd.read_parquet(path)
        assert (back[col] == MASK).all()
        for text in (df.to_csv(), df.to_json(force_ascii=False), df._repr_html_(), repr(df)):
            assert value not in text
            assert MASK in text or text.endswith("columns]")  # a wide repr elides the column
        buffer = io.BytesIO()
        df.to_parquet(buffer)
        assert value.encode() not in buffer.getvalue()


def test_pandas_operations_keep_the_secrets_and_never_cast_values_into_them() -> None:
    df = pd.DataFrame({"user": ["a", "b", "c"],
                       "pw": secret_array(["pw-one-123", None, "pw-three-3"], "password")})
    assert df["pw"].dtype == SecretDtype() and str(df["pw"].dtype) == "secret"
    assert df["pw"].isna().tolist() == [False, True, False]
    kept = pd.concat([df, df.iloc[[2, 0]]], ignore_index=True)
    assert isinstance(kept["pw"].array, SecretArray) and len(kept) == 5
    assert kept["pw"].iloc[3].reveal() == "pw-three-3" and kept["pw"].iloc[3].label == "password"
    labels = df["pw"].map(lambda v: v.label if v is not None else None)
    assert labels.dtype != SecretDtype() and labels.iloc[0] == "password"  # a plain result
    with pytest.raises(TypeError):
        df.loc[0, "pw"] = "not-a-secret"  # a string is never made a secret by pandas
    df.loc[1, "pw"] = Secret("pw-two-2222", "password")
    assert df["pw"].iloc[1].reveal() == "pw-two-2222"
    assert (df["pw"].astype(str).dropna() == MASK).all()
