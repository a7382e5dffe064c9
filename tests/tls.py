"""Throwaway TLS material for tests that need a real HTTPS peer (webhooks).

Webhook clients trust exactly the ``caBundle`` they are given, so tests need
their own CA and a serving certificate it signed; a second, unrelated CA
exercises the "signed by unknown authority" failure.
"""

from __future__ import annotations

import datetime
import ipaddress
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

DEFAULT_HOSTS = ("127.0.0.1", "localhost")


@dataclass(frozen=True)
class CertificateAuthority:
    """A CA that can sign serving certificates."""

    cert_pem: bytes
    key: ec.EllipticCurvePrivateKey
    cert: x509.Certificate


@dataclass(frozen=True)
class ServingCertificate:
    """A serving certificate and key, as PEM bytes and as files for ``ssl``."""

    cert_pem: bytes
    key_pem: bytes
    cert_file: Path
    key_file: Path


def _name(common_name: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])


def _validity(builder: x509.CertificateBuilder) -> x509.CertificateBuilder:
    now = datetime.datetime.now(datetime.UTC)
    return builder.not_valid_before(now - datetime.timedelta(minutes=5)).not_valid_after(
        now + datetime.timedelta(days=1)
    )


def make_ca(common_name: str = "kapi-test-ca") -> CertificateAuthority:
    key = ec.generate_private_key(ec.SECP256R1())
    builder = (
        x509.CertificateBuilder()
        .subject_name(_name(common_name))
        .issuer_name(_name(common_name))
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=True,
                content_commitment=False,
                key_encipherment=False,
                data_encipherment=False,
                key_agreement=False,
                key_cert_sign=True,
                crl_sign=True,
                encipher_only=False,
                decipher_only=False,
            ),
            critical=True,
        )
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
    )
    cert = _validity(builder).sign(key, hashes.SHA256())
    return CertificateAuthority(cert.public_bytes(serialization.Encoding.PEM), key, cert)


def make_serving_cert(
    ca: CertificateAuthority, directory: Path, hosts: tuple[str, ...] = DEFAULT_HOSTS
) -> ServingCertificate:
    """A server certificate for ``hosts`` (IPs and DNS names), written under ``directory``."""
    key = ec.generate_private_key(ec.SECP256R1())
    sans: list[x509.GeneralName] = []
    for host in hosts:
        try:
            sans.append(x509.IPAddress(ipaddress.ip_address(host)))
        except ValueError:
            sans.append(x509.DNSName(host))
    builder = (
        x509.CertificateBuilder()
        .subject_name(_name(hosts[0]))
        .issuer_name(ca.cert.subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .add_extension(x509.SubjectAlternativeName(sans), critical=False)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(
            x509.ExtendedKeyUsage([x509.oid.ExtendedKeyUsageOID.SERVER_AUTH]), critical=False
        )
        .add_extension(
            x509.AuthorityKeyIdentifier.from_issuer_public_key(ca.key.public_key()),
            critical=False,
        )
    )
    cert = _validity(builder).sign(ca.key, hashes.SHA256())
    cert_pem = cert.public_bytes(serialization.Encoding.PEM)
    key_pem = key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )
    directory.mkdir(parents=True, exist_ok=True)
    cert_file = directory / "tls.crt"
    key_file = directory / "tls.key"
    cert_file.write_bytes(cert_pem)
    key_file.write_bytes(key_pem)
    return ServingCertificate(cert_pem, key_pem, cert_file, key_file)


def self_signed_pair(common_name: str = "kapi-test") -> tuple[bytes, bytes]:
    """A throwaway self-signed certificate and its PKCS#8 key, both PEM."""
    key = ec.generate_private_key(ec.SECP256R1())
    builder = (
        x509.CertificateBuilder()
        .subject_name(_name(common_name))
        .issuer_name(_name(common_name))
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
    )
    cert = _validity(builder).sign(key, hashes.SHA256())
    key_pem = key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )
    return cert.public_bytes(serialization.Encoding.PEM), key_pem
