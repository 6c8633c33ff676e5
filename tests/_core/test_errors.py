"""The exception hierarchy: what each error is caught as, and what it never shows."""

from __future__ import annotations

import pytest

from toolkit._core.errors import (
    AuthenticationError,
    ConflictError,
    NotFoundError,
    ValidationError,
)


def test_validation_error_is_value_error_and_names_parameter() -> None:
    err = ValidationError("top", -1, "must be at least 0")
    assert isinstance(err, ValueError)
    assert str(err) == "top=-1: must be at least 0"


# --------------------------------------------------------------------------------------------
# the azure-core exception classes catch the toolkit's, over real sandbox answers


def test_a_404_is_caught_as_azure_cores_resource_not_found(conn, catalog) -> None:
    import pickle

    from azure.core.exceptions import HttpResponseError, ResourceNotFoundError

    import toolkit

    sub = catalog[catalog["kind"] == "subscription"].iloc[0]["subscription_id"]
    with pytest.raises(ResourceNotFoundError) as info:
        toolkit.backend_health(sub, "rg-missing", "agw-missing", connection=conn)
    err = info.value
    assert isinstance(err, NotFoundError) and isinstance(err, HttpResponseError)
    assert err.status == err.status_code == 404 and err.reason == "Not Found"
    assert err.error is not None and err.error.code == err.code and err.code
    assert err.message and err.message in str(err) and err.request_id in str(err)
    back = pickle.loads(pickle.dumps(err))  # as a dask worker sends it back
    assert type(back) is NotFoundError and str(back) == str(err)
    assert (back.status, back.code, back.message, back.request_id) == (
        err.status, err.code, err.message, err.request_id)


def test_a_409_and_a_403_are_caught_as_their_azure_core_classes(conn, sandbox) -> None:
    from azure.core.exceptions import ClientAuthenticationError, ResourceExistsError

    import toolkit

    sales = sandbox.catalog().query("kind == 'fabric_workspace'").iloc[0]["name"]
    toolkit.create_eventstream(sales, "azure-core-conflict", connection=conn)
    with pytest.raises(ResourceExistsError) as conflict:
        toolkit.create_eventstream(sales, "azure-core-conflict", connection=conn)
    assert isinstance(conflict.value, ConflictError) and conflict.value.status_code == 409
    reader = toolkit.connect(sandbox=sandbox, credential=sandbox.credential(roles=["Reader"]),
                             progress=False)
    policy = sandbox.catalog().query("kind == 'authentication_strength_policy'").iloc[0]["name"]
    try:
        with pytest.raises(ClientAuthenticationError) as denied:
            toolkit.authentication_strength_usage(policy, connection=reader)
    finally:
        reader.close()
    assert isinstance(denied.value, AuthenticationError) and denied.value.status_code == 403
