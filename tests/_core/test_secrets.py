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


def test_redact_follows_the_secrets_made_and_gone_between_calls() -> None:
    import gc

    first = Secret("first-secret-value-of-the-test")
    text = "a first-secret-value-of-the-test and a second-secret-value-of-the-test"
    assert redact(text) == f"a {MASK} and a second-secret-value-of-the-test"
    second = Secret("second-secret-value-of-the-test")  # made after the values were read
    assert redact(text) == f"a {MASK} and a {MASK}"
    del first
    gc.collect()
    # a secret gone is no longer looked for; the one still alive is
    assert redact(text) == f"a first-secret-value-of-the-test and a {MASK}"
    # one gone and one made between two calls (the registry's size unchanged)
    del second
    third = Secret("first-secret-value-of-the-test")
    gc.collect()
    assert redact(text) == f"a {MASK} and a second-secret-value-of-the-test"
    del third
