"""Masking holds in every way a value can be shown; reveal() is the way out."""

from __future__ import annotations

import io
import logging
import pickle

import pandas as pd
import pytest

from toolkit._core.secrets import MASK, RedactingFilter, Secret, redact

VALUE = "s3cr3t-kubeconfig-token-value"


def test_repr_str_format_html_mask_the_value() -> None:
    s = Secret(VALUE, "token")
    for shown in (repr(s), str(s), f"{s}", f"{s:>40}", s._repr_html_(), f"{s}"):
        assert VALUE not in shown
        assert MASK in shown
    assert s.reveal() == VALUE


def test_frame_exports_mask_the_value() -> None:
    df = pd.DataFrame({"name": ["a"], "value": [Secret(VALUE)]})
    buf = io.StringIO()
    df.to_csv(buf)
    outputs = [repr(df), df.to_html(), df.to_string(), buf.getvalue(), df.to_json(),
               df.to_json(orient="records"), df.to_markdown() if hasattr(df, "to_markdown")
               and _has_tabulate() else ""]
    for text in outputs:
        assert VALUE not in text
    assert df["value"][0].reveal() == VALUE


def _has_tabulate() -> bool:
    try:
        import tabulate  # noqa: F401
    except ImportError:
        return False
    return True


def test_pickle_does_not_carry_the_value() -> None:
    data = pickle.dumps(Secret(VALUE))
    assert VALUE.encode() not in data


def test_immutable_and_compares_by_value() -> None:
    a, b = Secret(VALUE), Secret(VALUE)
    assert a == b and a != Secret("other-value")
    with pytest.raises(AttributeError):
        a._value = "x"  # type: ignore[misc]
    assert a.reveal() == VALUE


def test_log_filter_and_redact_mask_live_secrets() -> None:
    s = Secret(VALUE)
    assert redact(f"token={VALUE}") == f"token={MASK}"
    record = logging.LogRecord("toolkit", logging.INFO, __file__, 1, "sent %s", (VALUE,), None)
    RedactingFilter().filter(record)
    assert VALUE not in record.getMessage()
    del s


# --------------------------------------------------------------------------------------------
# a frame's secret column: masked for every writer, plain pandas included


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
