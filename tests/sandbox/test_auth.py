"""TokenAuthority and SandboxCredential: signed tokens with their audience, roles and lifetime,
refused when tampered with, signed by another authority or malformed; a shared secret makes two
authorities agree; keys never shown."""

from __future__ import annotations

import base64
import json

import pytest

from toolkit.sandbox.auth import SandboxCredential, TokenAuthority


def _claims_part(token: str) -> dict:
    body = token.split(".")[1]
    return json.loads(base64.urlsafe_b64decode(body + "=" * (-len(body) % 4)))


def test_a_token_carries_its_audience_roles_and_lifetime() -> None:
    auth = TokenAuthority()
    token = auth.mint("https://management.example/.default", roles=("Reader",), expires_in=60)
    claims = auth.verify(token)
    assert claims == _claims_part(token)
    assert claims["aud"] == "https://management.example" and claims["roles"] == ["Reader"]
    assert 60 <= claims["exp"] - claims["iat"] <= 61
    several = auth.verify(auth.mint(["https://a.example/", "https://b.example/.default"]))
    assert several["aud"] == ["https://a.example", "https://b.example"]


def test_a_token_lives_at_least_its_lifetime(monkeypatch) -> None:
    # minted late in a second: a whole-second ``exp`` rounded down would leave 0.1 s of 1 s
    monkeypatch.setattr("toolkit.sandbox.auth.time.time", lambda: 1_000.9)
    auth = TokenAuthority()
    assert auth.verify(auth.mint("https://management.example", expires_in=1))["exp"] == 1_002
    token = SandboxCredential(auth, expires_in=1).get_token("https://management.example")
    assert token.expires_on == auth.verify(token.token)["exp"] == 1_002


def _forge(token: str, **changes: object) -> str:
    head, _body, sig = token.split(".")
    claims = {**_claims_part(token), **changes}
    forged = base64.urlsafe_b64encode(json.dumps(claims).encode()).decode().rstrip("=")
    return f"{head}.{forged}.{sig}"


@pytest.mark.parametrize("bad", [
    lambda a, t: _forge(t, roles=["Owner"]),                       # claims changed
    lambda a, t: TokenAuthority().mint("https://management.example"),  # another authority
    lambda a, t: t.rsplit(".", 1)[0],                              # not three parts
    lambda a, t: t + "x",                                          # signature changed
])
def test_tokens_that_do_not_verify_are_refused(bad) -> None:
    auth = TokenAuthority()
    token = auth.mint("https://management.example", roles=("Reader",))
    with pytest.raises(ValueError) as info:
        auth.verify(bad(auth, token))
    assert info.value.args[0] == "InvalidAuthenticationToken"


def test_a_shared_secret_makes_authorities_agree_and_others_differ() -> None:
    one, two, other = TokenAuthority("s3cret"), TokenAuthority(b"s3cret"), TokenAuthority("x")
    token = one.mint("https://management.example")
    assert two.verify(token)["aud"] == "https://management.example"
    with pytest.raises(ValueError):
        other.verify(token)
    assert one.maps_key.reveal() == two.maps_key.reveal() != other.maps_key.reveal()
    assert one.maps_key.reveal() not in repr(one.maps_key)


def test_sas_tokens_are_for_maps_only() -> None:
    auth = TokenAuthority()
    claims = auth.verify(auth.sas_token(expires_in=30))
    assert claims["aud"] == "maps-sas" and claims["roles"] == ["MapsSas"]


def test_the_credential_mints_for_the_first_scope_and_counts() -> None:
    auth = TokenAuthority()
    cred = SandboxCredential(auth, expires_in=120, roles=("Reader",))
    token = cred.get_token("https://graph.example/.default", "ignored")
    claims = auth.verify(token.token)
    assert claims["aud"] == "https://graph.example" and claims["roles"] == ["Reader"]
    assert token.expires_on == claims["exp"] and cred.issued == 1
    with pytest.raises(ValueError, match="scope"):
        cred.get_token()
    assert cred.issued == 1 and token.token not in repr(cred)
