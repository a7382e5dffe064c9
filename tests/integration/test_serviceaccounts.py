"""core/v1 ServiceAccounts and their ``token`` subresource on a real server: kubectl creates
and lists them, ``kubectl create token`` gets a JWT whose signature and claims check out
against the key the server was given, and bad requests get upstream's answers."""

from __future__ import annotations

import base64
import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import padding, rsa

from tests.conftest import KapiServer, start_server
from tests.helpers.kubectl import make_kubectl
from tests.helpers.objects import unique

ISSUER = "https://kapi.example/issuer"
TOKEN_REQUEST = "authentication.k8s.io/v1"


@pytest.fixture(scope="module")
def signing_key(tmp_path_factory: pytest.TempPathFactory) -> tuple[rsa.RSAPrivateKey, Path]:
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    path = tmp_path_factory.mktemp("sa-key") / "sa.key"
    path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.TraditionalOpenSSL,
            serialization.NoEncryption(),
        )
    )
    return key, path


@pytest.fixture(scope="module")
def server(
    tmp_path_factory: pytest.TempPathFactory, signing_key: tuple[rsa.RSAPrivateKey, Path]
) -> Iterator[KapiServer]:
    started = start_server(
        tmp_path_factory.mktemp("serviceaccounts") / "data",
        "--service-account-issuer",
        ISSUER,
        "--service-account-signing-key-file",
        str(signing_key[1]),
    )
    yield started
    started.stop()


@pytest.fixture
def client(server: KapiServer) -> Iterator[httpx.Client]:
    with server.client() as c:
        yield c


@pytest.fixture
def ns(client: httpx.Client) -> str:
    name = unique("sa")
    body = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}
    assert client.post("/api/v1/namespaces", json=body).status_code == 201
    return name


def claims_of(token: str, key: rsa.RSAPrivateKey) -> tuple[dict[str, Any], dict[str, Any]]:
    """The header and claims of ``token``, once its RS256 signature verifies."""
    header, claims, signature = token.split(".")

    def unb64(text: str) -> bytes:
        return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))

    key.public_key().verify(
        unb64(signature), f"{header}.{claims}".encode(), padding.PKCS1v15(), hashes.SHA256()
    )
    return json.loads(unb64(header)), json.loads(unb64(claims))


@pytest.mark.parametrize("version", ["1.31", "1.33"])
def test_kubectl_create_token(
    server: KapiServer,
    client: httpx.Client,
    ns: str,
    tmp_path: Path,
    signing_key: tuple[rsa.RSAPrivateKey, Path],
    version: str,
) -> None:
    kubectl = make_kubectl(server, tmp_path, version)
    created = kubectl.ok("create", "serviceaccount", "bot", "-n", ns)  # protobuf from 1.32
    assert created.stdout == "serviceaccount/bot created\n"
    lines = kubectl.ok("get", "sa", "-n", ns).out_lines
    assert lines[0].split() == ["NAME", "SECRETS", "AGE"]
    assert lines[1].split()[:2] == ["bot", "0"]
    uid = client.get(f"/api/v1/namespaces/{ns}/serviceaccounts/bot").json()["metadata"]["uid"]
    before = int(time.time())
    token = kubectl.ok("create", "token", "bot", "-n", ns).stdout.strip()
    header, claims = claims_of(token, signing_key[0])
    assert header["alg"] == "RS256" and header["kid"]
    assert claims["iss"] == ISSUER and claims["aud"] == [ISSUER]
    assert claims["sub"] == f"system:serviceaccount:{ns}:bot"
    assert claims["kubernetes.io"] == {
        "namespace": ns,
        "serviceaccount": {"name": "bot", "uid": uid},
    }
    assert claims["iat"] == claims["nbf"] and before - 1 <= claims["iat"] <= time.time() + 1
    assert claims["exp"] - claims["iat"] == 3600
    custom = kubectl.ok(
        "create", "token", "bot", "-n", ns, "--duration=20m", "--audience=vault"
    ).stdout.strip()
    _, claims = claims_of(custom, signing_key[0])
    assert claims["aud"] == ["vault"] and claims["exp"] - claims["iat"] == 1200
    short = kubectl.fails("create", "token", "bot", "-n", ns, "--duration=1m")
    assert short.stderr == (
        'error: failed to create token: TokenRequest.authentication.k8s.io "" is invalid: '
        "spec.expirationSeconds: Invalid value: 60: may not specify a duration less than "
        "10 minutes\n"
    )
    missing = kubectl.fails("create", "token", "nobody", "-n", ns)
    assert missing.stderr == ('error: failed to create token: serviceaccounts "nobody" not found\n')


def test_the_token_request_answer(client: httpx.Client, ns: str) -> None:
    body = {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "robot"}}
    assert client.post(f"/api/v1/namespaces/{ns}/serviceaccounts", json=body).status_code == 201
    path = f"/api/v1/namespaces/{ns}/serviceaccounts/robot/token"
    request = {"apiVersion": TOKEN_REQUEST, "kind": "TokenRequest", "spec": {"audiences": None}}
    answer = client.post(path, json=request)
    assert answer.status_code == 201, answer.text
    out = answer.json()
    assert (out["apiVersion"], out["kind"]) == (TOKEN_REQUEST, "TokenRequest")
    assert out["metadata"]["name"] == "robot" and out["metadata"]["namespace"] == ns
    assert out["spec"]["expirationSeconds"] == 3600 and out["spec"]["audiences"] == [ISSUER]
    assert out["status"]["token"].count(".") == 2
    assert out["status"]["expirationTimestamp"].endswith("Z")
    # The token subresource only creates.
    assert client.get(path).status_code == 405
    unbound = {
        "apiVersion": TOKEN_REQUEST,
        "kind": "TokenRequest",
        "spec": {"boundObjectRef": {"apiVersion": "v1", "kind": "ConfigMap", "name": "x"}},
    }
    refused = client.post(path, json=unbound)
    assert (refused.status_code, refused.json()["message"]) == (
        400,
        'cannot bind token for serviceaccount "robot" to object of type /v1, Kind=ConfigMap',
    )
    # Nothing was stored: the account is as created, with no secrets.
    stored = client.get(f"/api/v1/namespaces/{ns}/serviceaccounts/robot").json()
    assert "secrets" not in stored


def test_discovery_lists_the_token_subresource(client: httpx.Client) -> None:
    resources = client.get("/api/v1").json()["resources"]
    token = next(r for r in resources if r["name"] == "serviceaccounts/token")
    assert token["verbs"] == ["create"]
    assert (token["group"], token["version"], token["kind"]) == (
        "authentication.k8s.io",
        "v1",
        "TokenRequest",
    )
    sa = next(r for r in resources if r["name"] == "serviceaccounts")
    assert sa["shortNames"] == ["sa"]
