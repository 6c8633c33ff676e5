"""azure-maps-search's typed client against the sandbox in the public cloud's words: its reverse
geocoding, one point and the batch, at the api-version the toolkit sends (2025-01-01; the client's
own default, 2023-06-01, has the same request and answer models), read by the client's own
deserialization."""

from __future__ import annotations

from typing import Any

import pytest

from tests.conformance.conftest import NOT_INSTALLED

pytest.importorskip("azure.maps.search", reason=NOT_INSTALLED)

from azure.core.credentials import AzureKeyCredential
from azure.core.exceptions import HttpResponseError
from azure.maps.search import MapsSearchClient

from toolkit._spec.maps import GEOCODE_API_VERSIONS

ORDINO = [1.5331, 42.5560]
CANILLO = [1.5975, 42.5676]


@pytest.fixture(scope="module")
def client(cloud_sandbox) -> Any:
    return MapsSearchClient(AzureKeyCredential(cloud_sandbox.maps_key.reveal()),
                            endpoint=cloud_sandbox.url, api_version=GEOCODE_API_VERSIONS[0],
                            connection_verify=cloud_sandbox.ca_file)


def test_the_client_reverse_geocodes_one_point(client) -> None:
    answer = client.get_reverse_geocoding(coordinates=ORDINO)
    (feature,) = answer["features"]
    assert feature["properties"]["type"] == "Address"
    assert feature["properties"]["address"]["countryRegion"]["ISO"] == "AD"
    assert len(feature["geometry"]["coordinates"]) == 2
    places = client.get_reverse_geocoding(coordinates=CANILLO, result_types=["PopulatedPlace"])
    assert places["features"][0]["properties"]["address"]["locality"] == "Canillo"


def test_the_client_sends_a_batch_and_reads_each_item(client) -> None:
    answer = client.get_reverse_geocoding_batch({"batchItems": [
        {"coordinates": ORDINO, "optionalId": "ordino"},
        {"coordinates": [42.5560, 181.0], "optionalId": "swapped"},
        {"coordinates": CANILLO, "resultTypes": ["AdminDivision1"]},
    ]})
    assert answer["summary"] == {"successfulRequests": 2, "totalRequests": 3}
    first, refused, parish = answer["batchItems"]
    assert first["optionalId"] == "ordino" and first["features"][0]["properties"]["type"] == \
        "Address"
    assert refused["optionalId"] == "swapped" and refused["error"]["code"] == "400 Bad Request"
    assert parish["features"][0]["properties"]["type"] == "AdminDivision1"


def test_the_clients_errors_carry_the_services_code(client) -> None:
    with pytest.raises(HttpResponseError) as info:
        client.get_reverse_geocoding_batch({"batchItems": []})
    assert info.value.status_code == 400
    assert info.value.response.headers["x-ms-error-code"] == "BadRequest"
