"""core/v1 ``ServiceAccount`` and its ``token`` subresource (an authentication.k8s.io/v1
``TokenRequest`` answered with a signed JWT).

The token is what kube-apiserver's ``pkg/serviceaccount`` issues: a JWS
(RS256 for an RSA key, ES256 for a P-256 key) whose header names the key
(``kid``: the unpadded base64url SHA-256 of the public key's DER), with
claims ``iss`` (``--service-account-issuer``), ``sub``
(``system:serviceaccount:<ns>:<name>``), ``aud`` (the request's audiences,
else the issuer), ``iat``, ``nbf``, ``exp``, ``jti`` and the private
``kubernetes.io`` claim naming the namespace, the service account and the
object the token is bound to.  Keys are serialised sorted, as go-jose's
merged claims are.

Signing key: ``--service-account-signing-key-file``, or a key generated once
and kept in storage (``/registry/kapi.io/serviceaccount-signing-key``,
created with create-if-absent so that every server sharing the store ends up
with the same key): a token one server signs then verifies on all of them,
and survives restarts.  That key is as secret as the store itself.
"""

from __future__ import annotations

import base64
import hashlib
import json
import time
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, padding, rsa
from cryptography.hazmat.primitives.asymmetric.utils import decode_dss_signature

from kapi.apimachinery import errors
from kapi.apimachinery.field_errors import FieldError, Path, invalid
from kapi.apimachinery.unstructured import Object
from kapi.apis.generated import authentication_v1, core_v1
from kapi.registry.strategy import Strategy
from kapi.registry.tables import AGE, NAME, Column
from kapi.runtime.scheme import Lifecycle, Resource, ResourceVersion
from kapi.storage.interface import KeyExistsError, Storage
from kapi.version import Version

DEFAULT_ISSUER = "https://kubernetes.default.svc.cluster.local"
#: ``SetDefaults_TokenRequestSpec``: one hour.
DEFAULT_EXPIRATION_SECONDS = 3600
#: ``MinTokenAgeSec`` of upstream's TokenRequest validation.
MIN_EXPIRATION_SECONDS = 600
MAX_EXPIRATION_SECONDS = 1 << 32
SIGNING_KEY = "/registry/kapi.io/serviceaccount-signing-key"
AUTHENTICATION = "authentication.k8s.io"
TOKEN_REQUEST_API_VERSION = "authentication.k8s.io/v1"

# --- schema ---------------------------------------------------------------------------------

#: Generated from upstream's definitions (tools/apigen): the ServiceAccount kind (registered
#: for protobuf on import) and the TokenRequest its ``token`` subresource takes and answers.
ServiceAccountSchema = core_v1.ServiceAccount
TokenRequestSchema = authentication_v1.TokenRequest


# --- the resource ---------------------------------------------------------------------------


def resources() -> list[Resource]:
    """The core/v1 ServiceAccount resource, with its ``token`` subresource."""
    return [
        Resource(
            group="",
            kind="ServiceAccount",
            plural="serviceaccounts",
            singular="serviceaccount",
            namespaced=True,
            versions={
                "v1": ResourceVersion(
                    "v1", ServiceAccountSchema, Lifecycle(introduced=Version(1, 0))
                )
            },
            hub_version="v1",
            storage_version="v1",
            strategy=Strategy(),
            short_names=("sa",),
            subresources=("token",),
            columns=(
                NAME,
                Column(
                    "Secrets",
                    "string",
                    "Secrets is a list of the secrets in the same namespace that pods running "
                    "using this ServiceAccount are allowed to use.",
                    lambda o: len(o.get("secrets") or ()),
                ),
                AGE,
            ),
        )
    ]


# --- TokenRequest ---------------------------------------------------------------------------


def default_token_request(obj: Object) -> None:
    """``SetDefaults_TokenRequestSpec``: an hour unless asked otherwise."""
    spec = obj.setdefault("spec", {})
    if spec.get("expirationSeconds") is None:
        spec["expirationSeconds"] = DEFAULT_EXPIRATION_SECONDS


def validate_token_request(obj: Object) -> list[FieldError]:
    """``ValidateTokenRequest``."""
    seconds = (obj.get("spec") or {}).get("expirationSeconds") or 0
    path = Path("spec", "expirationSeconds")
    errs: list[FieldError] = []
    if seconds < MIN_EXPIRATION_SECONDS:
        errs.append(invalid(path, seconds, "may not specify a duration less than 10 minutes"))
    if seconds > MAX_EXPIRATION_SECONDS:
        errs.append(invalid(path, seconds, "may not specify a duration larger than 2^32 seconds"))
    return errs


def token_request_invalid(errs: list[FieldError]) -> errors.StatusError:
    """Upstream names no object: ``TokenRequest.authentication.k8s.io "" is invalid``."""
    return errors.invalid("TokenRequest", AUTHENTICATION, "", errs)


def service_account_username(namespace: str, name: str) -> str:
    return f"system:serviceaccount:{namespace}:{name}"


def token_claims(
    issuer: str,
    audiences: list[str],
    service_account: Object,
    expiration_seconds: int,
    now: float,
    bound: tuple[str, Object] | None = None,
) -> dict[str, Any]:
    """The claims upstream's ``serviceaccount.Claims`` and the JWT generator put in a token.

    ``bound``: the kind (``Pod``, ``Secret``, ``Node``) and the object the token is bound to.
    """
    metadata = service_account["metadata"]
    namespace = metadata.get("namespace", "")
    issued = int(now)
    private: dict[str, Any] = {
        "namespace": namespace,
        "serviceaccount": {"name": metadata["name"], "uid": metadata.get("uid", "")},
    }
    if bound is not None:
        kind, obj = bound
        ref = {"name": obj["metadata"]["name"], "uid": obj["metadata"].get("uid", "")}
        private[kind.lower()] = ref
    return {
        "aud": audiences,
        "exp": issued + expiration_seconds,
        "iat": issued,
        "iss": issuer,
        "jti": str(uuid.uuid4()),
        "kubernetes.io": private,
        "nbf": issued,
        "sub": service_account_username(namespace, metadata["name"]),
    }


def rfc3339(seconds: float) -> str:
    return datetime.fromtimestamp(int(seconds), UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


# --- signing --------------------------------------------------------------------------------

PrivateKey = rsa.RSAPrivateKey | ec.EllipticCurvePrivateKey


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def key_id(public_key: Any) -> str:
    """Upstream's ``keyIDFromPublicKey``: unpadded base64url of SHA-256 over the PKIX DER."""
    der = public_key.public_bytes(
        serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    return _b64(hashlib.sha256(der).digest())


def load_private_key(pem: bytes) -> PrivateKey:
    """An RSA or P-256 private key from PEM (PKCS#1, SEC1 or PKCS#8); ValueError otherwise."""
    key = serialization.load_pem_private_key(pem, password=None)
    if isinstance(key, rsa.RSAPrivateKey):
        return key
    if isinstance(key, ec.EllipticCurvePrivateKey) and isinstance(key.curve, ec.SECP256R1):
        return key
    raise ValueError("the service account signing key must be an RSA or ECDSA P-256 private key")


class TokenSigner:
    """Signs service account tokens with one key."""

    def __init__(self, key: PrivateKey, issuer: str = DEFAULT_ISSUER) -> None:
        self.key = key
        self.issuer = issuer
        self.algorithm = "RS256" if isinstance(key, rsa.RSAPrivateKey) else "ES256"
        self.kid = key_id(key.public_key())

    def sign(self, claims: dict[str, Any]) -> str:
        header = {"alg": self.algorithm, "kid": self.kid}
        signing_input = (
            _b64(json.dumps(header, separators=(",", ":")).encode())
            + "."
            + _b64(json.dumps(claims, separators=(",", ":"), sort_keys=True).encode())
        )
        data = signing_input.encode()
        if isinstance(self.key, rsa.RSAPrivateKey):
            signature = self.key.sign(data, padding.PKCS1v15(), hashes.SHA256())
        else:
            r, s = decode_dss_signature(self.key.sign(data, ec.ECDSA(hashes.SHA256())))
            signature = r.to_bytes(32, "big") + s.to_bytes(32, "big")
        return signing_input + "." + _b64(signature)


async def shared_signing_key(storage: Storage) -> PrivateKey:
    """The key every server on ``storage`` signs with: the stored one, or a new one stored
    first (of servers starting together, the first create wins and the others read it)."""
    kv = await storage.get(SIGNING_KEY)
    if kv is None:
        key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        pem = key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
        try:
            await storage.create(SIGNING_KEY, pem)
            return key
        except KeyExistsError:
            kv = await storage.get(SIGNING_KEY)
            assert kv is not None
    return load_private_key(kv.value)


@dataclass
class TokenIssuer:
    """What the ``token`` subresource needs: the signer and the default audiences
    (upstream's ``--api-audiences``, which default to the issuer)."""

    signer: TokenSigner
    audiences: tuple[str, ...] = ()

    def default_audiences(self) -> list[str]:
        return list(self.audiences) or [self.signer.issuer]

    def issue(
        self,
        request: Object,
        service_account: Object,
        bound: tuple[str, Object] | None = None,
        now: float | None = None,
    ) -> Object:
        """Fill in ``request``'s audiences and status: the token and when it expires."""
        now = time.time() if now is None else now
        spec = request.setdefault("spec", {})
        if not spec.get("audiences"):
            spec["audiences"] = self.default_audiences()
        seconds = int(spec["expirationSeconds"])
        claims = token_claims(
            self.signer.issuer, list(spec["audiences"]), service_account, seconds, now, bound
        )
        request["status"] = {
            "token": self.signer.sign(claims),
            "expirationTimestamp": rfc3339(claims["exp"]),
        }
        return request
