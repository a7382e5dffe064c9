"""Service account tokens without HTTP: claims, signatures verified with ``cryptography``,
TokenRequest validation texts, and one signing key shared by servers on one store."""

from __future__ import annotations

import asyncio
import base64
import hashlib
import json
from pathlib import Path
from typing import Any

import pytest
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, padding, rsa
from cryptography.hazmat.primitives.asymmetric.utils import encode_dss_signature

from kapi.apis.core_v1_serviceaccounts import (
    SIGNING_KEY,
    TokenIssuer,
    TokenSigner,
    default_token_request,
    load_private_key,
    shared_signing_key,
    token_request_invalid,
    validate_token_request,
)
from kapi.storage.sqlite import SQLiteStorage

SA = {"metadata": {"name": "bot", "namespace": "team", "uid": "1234"}}
NOW = 1_700_000_000


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def decode(token: str, public_key: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    """Header and claims of ``token`` once its signature checks out with ``public_key``."""
    header, claims, signature = token.split(".")
    data = f"{header}.{claims}".encode()
    raw = _unb64(signature)
    if isinstance(public_key, rsa.RSAPublicKey):
        public_key.verify(raw, data, padding.PKCS1v15(), hashes.SHA256())
    else:
        der = encode_dss_signature(int.from_bytes(raw[:32]), int.from_bytes(raw[32:]))
        public_key.verify(der, data, ec.ECDSA(hashes.SHA256()))
    return json.loads(_unb64(header)), json.loads(_unb64(claims))


def test_an_rs256_token_carries_upstreams_claims() -> None:
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    issuer = TokenIssuer(TokenSigner(key, "https://issuer.example"))
    request = {"spec": {}}
    default_token_request(request)
    issuer.issue(request, SA, now=NOW)
    header, claims = decode(request["status"]["token"], key.public_key())
    der = key.public_key().public_bytes(
        serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    kid = base64.urlsafe_b64encode(hashlib.sha256(der).digest()).rstrip(b"=").decode()
    assert header == {"alg": "RS256", "kid": kid}
    jti = claims.pop("jti")
    assert len(jti) == 36
    assert claims == {
        "aud": ["https://issuer.example"],
        "exp": NOW + 3600,
        "iat": NOW,
        "iss": "https://issuer.example",
        "kubernetes.io": {"namespace": "team", "serviceaccount": {"name": "bot", "uid": "1234"}},
        "nbf": NOW,
        "sub": "system:serviceaccount:team:bot",
    }
    assert request["spec"]["audiences"] == ["https://issuer.example"]
    assert request["status"]["expirationTimestamp"] == "2023-11-14T23:13:20Z"


def test_an_es256_key_and_a_bound_pod() -> None:
    key = ec.generate_private_key(ec.SECP256R1())
    pem = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    signer = TokenSigner(load_private_key(pem))
    request = {"spec": {"audiences": ["vault"], "expirationSeconds": 600}}
    pod = {"metadata": {"name": "web-0", "uid": "p-1"}}
    TokenIssuer(signer).issue(request, SA, ("Pod", pod), now=NOW)
    header, claims = decode(request["status"]["token"], key.public_key())
    assert header["alg"] == "ES256"
    assert claims["aud"] == ["vault"] and claims["exp"] == NOW + 600
    assert claims["kubernetes.io"]["pod"] == {"name": "web-0", "uid": "p-1"}


def test_other_keys_are_refused() -> None:
    key = ec.generate_private_key(ec.SECP384R1())
    pem = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    with pytest.raises(ValueError, match="RSA or ECDSA P-256"):
        load_private_key(pem)


@pytest.mark.parametrize(
    ("seconds", "message"),
    [
        (
            60,
            'TokenRequest.authentication.k8s.io "" is invalid: spec.expirationSeconds: '
            "Invalid value: 60: may not specify a duration less than 10 minutes",
        ),
        (
            (1 << 32) + 1,
            'TokenRequest.authentication.k8s.io "" is invalid: spec.expirationSeconds: '
            "Invalid value: 4294967297: may not specify a duration larger than 2^32 seconds",
        ),
    ],
)
def test_token_request_validation_texts(seconds: int, message: str) -> None:
    err = token_request_invalid(validate_token_request({"spec": {"expirationSeconds": seconds}}))
    assert (err.code, err.reason, err.message) == (422, "Invalid", message)
    assert validate_token_request({"spec": {"expirationSeconds": 600}}) == []


def test_servers_on_one_store_share_one_generated_key(tmp_path: Path) -> None:
    async def main() -> None:
        storage = SQLiteStorage(tmp_path / "kapi.db")
        try:
            first, second = await asyncio.gather(
                shared_signing_key(storage), shared_signing_key(storage)
            )
            assert TokenSigner(first).kid == TokenSigner(second).kid
            stored = await storage.get(SIGNING_KEY)
            assert stored is not None
            assert TokenSigner(load_private_key(stored.value)).kid == TokenSigner(first).kid
        finally:
            await storage.close()

    asyncio.run(main())
