"""Kubeconfig loading: file selection, merge precedence, path resolution, validation wording."""

from __future__ import annotations

import base64
import os
import ssl
from pathlib import Path
from typing import Any

import certifi
import pytest
import yaml

from kapi.client import (
    ClientConfig,
    ContextNotFoundError,
    EmptyKubeconfigError,
    InvalidKubeconfigError,
    KubeconfigError,
    KubeconfigNotFoundError,
    kubeconfig_paths,
    load_kubeconfig,
    read_kubeconfig,
)


def kubeconfig(
    *,
    clusters: dict[str, dict[str, Any]] | None = None,
    users: dict[str, dict[str, Any]] | None = None,
    contexts: dict[str, dict[str, Any]] | None = None,
    current: str | None = None,
) -> dict[str, Any]:
    """A kubeconfig document in the on-disk (named list) form."""
    document: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": n, "cluster": c} for n, c in (clusters or {}).items()],
        "users": [{"name": n, "user": u} for n, u in (users or {}).items()],
        "contexts": [{"name": n, "context": c} for n, c in (contexts or {}).items()],
    }
    if current is not None:
        document["current-context"] = current
    return document


def write(path: Path, document: dict[str, Any] | str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    text = document if isinstance(document, str) else yaml.safe_dump(document)
    path.write_text(text)
    return path


def simple(server: str = "https://a.example:6443", **context: str) -> dict[str, Any]:
    return kubeconfig(
        clusters={"c": {"server": server}},
        users={"u": {"token": "t0k"}},
        contexts={"ctx": {"cluster": "c", "user": "u", **context}},
        current="ctx",
    )


@pytest.fixture(autouse=True)
def isolated_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """No real ~/.kube/config or KUBECONFIG may leak into a test."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("KUBECONFIG", raising=False)
    return home


def test_single_file_yields_server_namespace_and_token(tmp_path: Path) -> None:
    path = write(tmp_path / "config", simple(namespace="team-a"))

    config = load_kubeconfig(str(path))

    assert config == ClientConfig("https://a.example:6443", namespace="team-a", token="t0k")
    assert config.auth_headers() == {"Authorization": "Bearer t0k"}


def test_namespace_defaults_to_default(tmp_path: Path) -> None:
    assert load_kubeconfig(str(write(tmp_path / "config", simple()))).namespace == "default"


def test_default_file_is_home_kube_config(isolated_env: Path) -> None:
    write(isolated_env / ".kube" / "config", simple(server="https://home:6443"))

    assert kubeconfig_paths() == [str(isolated_env / ".kube" / "config")]
    assert load_kubeconfig().server == "https://home:6443"


def test_env_list_merges_with_first_file_winning_each_name(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = write(
        tmp_path / "first",
        kubeconfig(
            clusters={"shared": {"server": "https://first:6443"}},
            contexts={"one": {"cluster": "shared"}},
        ),
    )
    second = write(
        tmp_path / "second",
        kubeconfig(
            # Same name: dropped whole, even the field the first file lacks.
            clusters={
                "shared": {"server": "https://second:6443", "insecure-skip-tls-verify": True},
                "extra": {"server": "https://extra:6443"},
            },
            contexts={"one": {"cluster": "extra"}, "two": {"cluster": "extra"}},
        ),
    )
    monkeypatch.setenv("KUBECONFIG", os.pathsep.join([str(first), str(second)]))

    merged = read_kubeconfig()

    assert merged.clusters == {
        "shared": {"server": "https://first:6443"},
        "extra": {"server": "https://extra:6443"},
    }
    assert merged.contexts == {"one": {"cluster": "shared"}, "two": {"cluster": "extra"}}
    config = merged.client_config("one")
    assert config.server == "https://first:6443"
    assert config.insecure_skip_tls_verify is False


def test_first_file_to_set_current_context_wins(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    clusters = {"c": {"server": "https://x:6443"}}
    contexts = {"a": {"cluster": "c"}, "b": {"cluster": "c"}, "z": {"cluster": "c"}}
    unset = write(tmp_path / "unset", kubeconfig(clusters=clusters))
    sets_b = write(tmp_path / "b", kubeconfig(contexts=contexts, current="b"))
    sets_z = write(tmp_path / "z", kubeconfig(contexts=contexts, current="z"))
    monkeypatch.setenv("KUBECONFIG", os.pathsep.join(map(str, [unset, sets_b, sets_z])))

    assert read_kubeconfig().current_context == "b"


def test_env_list_skips_empty_missing_and_duplicate_entries(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = write(tmp_path / "real", simple())
    missing = tmp_path / "missing"
    monkeypatch.setenv("KUBECONFIG", os.pathsep.join(["", str(missing), str(real), str(real), ""]))

    assert kubeconfig_paths() == [str(missing), str(real)]
    assert load_kubeconfig().server == "https://a.example:6443"


def test_explicit_path_overrides_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from_env = write(tmp_path / "env", simple(server="https://env:6443"))
    explicit = write(
        tmp_path / "explicit",
        kubeconfig(
            clusters={"e": {"server": "https://explicit:6443"}}, contexts={"x": {"cluster": "e"}}
        ),
    )
    monkeypatch.setenv("KUBECONFIG", str(from_env))

    assert kubeconfig_paths(str(explicit)) == [str(explicit)]
    merged = read_kubeconfig(str(explicit))
    assert set(merged.contexts) == {"x"}  # nothing merged in from KUBECONFIG
    assert merged.current_context == ""
    assert merged.client_config("x").server == "https://explicit:6443"


def test_missing_explicit_file_is_an_error(tmp_path: Path) -> None:
    path = tmp_path / "nope"

    with pytest.raises(KubeconfigNotFoundError) as caught:
        load_kubeconfig(str(path))

    assert str(caught.value) == f"stat {path}: no such file or directory"
    assert caught.value.path == str(path)


def test_no_file_anywhere_is_the_empty_configuration_error() -> None:
    with pytest.raises(EmptyKubeconfigError) as caught:
        load_kubeconfig()

    assert str(caught.value) == (
        "invalid configuration: no configuration has been provided, "
        "try setting KUBERNETES_MASTER environment variable"
    )


def test_context_override_selects_another_context(tmp_path: Path) -> None:
    document = simple()
    document["clusters"].append({"name": "other", "cluster": {"server": "https://other:6443"}})
    document["contexts"].append(
        {"name": "second", "context": {"cluster": "other", "namespace": "ns2"}}
    )
    path = write(tmp_path / "config", document)

    config = load_kubeconfig(str(path), context="second")

    assert (config.server, config.namespace, config.token) == ("https://other:6443", "ns2", None)


def test_missing_context_override_uses_kubectl_wording(tmp_path: Path) -> None:
    path = write(tmp_path / "config", simple())

    with pytest.raises(ContextNotFoundError) as caught:
        load_kubeconfig(str(path), context="nope")

    assert str(caught.value) == 'context "nope" does not exist'
    assert caught.value.context == "nope"


def test_dangling_current_context_is_reported(tmp_path: Path) -> None:
    document = simple()
    document["current-context"] = "gone"
    path = write(tmp_path / "config", document)

    with pytest.raises(ContextNotFoundError) as caught:
        load_kubeconfig(str(path))

    assert str(caught.value) == (
        "invalid configuration: [context was not found for specified context: gone, "
        "cluster has no server defined]"
    )
    # The other contexts stay usable.
    assert load_kubeconfig(str(path), context="ctx").server == "https://a.example:6443"


def test_relative_paths_resolve_against_the_file_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    directory = tmp_path / "configs"
    (directory / "pki").mkdir(parents=True)
    for name in ("ca.crt", "client.crt", "client.key"):
        (directory / "pki" / name).write_text("pem")
    (directory / "token").write_text("file-token\n")
    path = write(
        directory / "config",
        kubeconfig(
            clusters={"c": {"server": "https://x:6443", "certificate-authority": "pki/ca.crt"}},
            users={
                "cert": {"client-certificate": "pki/client.crt", "client-key": "pki/client.key"},
                "token": {"tokenFile": "token"},
            },
            contexts={
                "cert": {"cluster": "c", "user": "cert"},
                "tok": {"cluster": "c", "user": "token"},
            },
        ),
    )
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)

    cert = load_kubeconfig(str(path), context="cert")
    token = load_kubeconfig(str(path), context="tok")

    assert cert.ca_file == str(directory / "pki" / "ca.crt")
    assert cert.cert_file == str(directory / "pki" / "client.crt")
    assert cert.key_file == str(directory / "pki" / "client.key")
    assert token.token == "file-token"


def test_relative_paths_resolve_per_file_when_merging(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "b" / "ca.crt").parent.mkdir()
    (tmp_path / "b" / "ca.crt").write_text("pem")
    first = write(
        tmp_path / "a" / "config", kubeconfig(contexts={"x": {"cluster": "c"}}, current="x")
    )
    second = write(
        tmp_path / "b" / "config",
        kubeconfig(clusters={"c": {"server": "https://x:6443", "certificate-authority": "ca.crt"}}),
    )
    monkeypatch.setenv("KUBECONFIG", os.pathsep.join([str(first), str(second)]))

    assert load_kubeconfig().ca_file == str(tmp_path / "b" / "ca.crt")


def test_absolute_paths_are_kept(tmp_path: Path) -> None:
    ca = tmp_path / "abs-ca.crt"
    ca.write_text("pem")
    path = write(
        tmp_path / "sub" / "config",
        kubeconfig(
            clusters={"c": {"server": "https://x:6443", "certificate-authority": str(ca)}},
            contexts={"x": {"cluster": "c"}},
            current="x",
        ),
    )

    assert load_kubeconfig(str(path)).ca_file == str(ca)


def test_tls_and_basic_auth_fields(tmp_path: Path) -> None:
    ca_pem = b"-----BEGIN CERTIFICATE-----\n...\n-----END CERTIFICATE-----\n"
    path = write(
        tmp_path / "config",
        kubeconfig(
            clusters={
                "c": {
                    "server": "https://10.0.0.1:6443/",
                    "certificate-authority-data": base64.b64encode(ca_pem).decode(),
                    "tls-server-name": "kubernetes.default",
                },
                "insecure": {"server": "https://y:6443", "insecure-skip-tls-verify": True},
            },
            users={"basic": {"username": "admin", "password": "s3cret"}},
            contexts={
                "x": {"cluster": "c", "user": "basic"},
                "i": {"cluster": "insecure", "user": "basic"},
            },
            current="x",
        ),
    )

    config = load_kubeconfig(str(path))
    insecure = load_kubeconfig(str(path), context="i")

    assert config.server == "https://10.0.0.1:6443"
    assert config.ca_data == ca_pem
    assert config.tls_server_name == "kubernetes.default"
    expected = base64.b64encode(b"admin:s3cret").decode()
    assert config.auth_headers() == {"Authorization": f"Basic {expected}"}
    assert insecure.insecure_skip_tls_verify is True


def test_missing_user_means_anonymous(tmp_path: Path) -> None:
    path = write(
        tmp_path / "config",
        kubeconfig(
            clusters={"c": {"server": "http://x"}},
            contexts={"x": {"cluster": "c", "user": "ghost"}},
            current="x",
        ),
    )

    assert load_kubeconfig(str(path)).auth_headers() == {}


@pytest.mark.parametrize(
    ("cluster", "user", "message"),
    [
        (
            {},
            {},
            'invalid configuration: no server found for cluster "c"',
        ),
        (
            {"server": "https://x"},
            {"token": "t", "username": "a", "password": "b"},
            "invalid configuration: more than one authentication method found for u; "
            "found [token basicAuth], only one is allowed",
        ),
        (
            {"server": "https://x"},
            {"client-certificate-data": base64.b64encode(b"pem").decode()},
            "invalid configuration: client-key-data or client-key must be specified for u "
            "to use the clientCert authentication method.",
        ),
        (
            {"server": "https://x", "certificate-authority": "/nonexistent/ca.crt"},
            {},
            "invalid configuration: unable to read certificate-authority /nonexistent/ca.crt "
            "for c due to open /nonexistent/ca.crt: no such file or directory",
        ),
    ],
)
def test_unusable_context_uses_clientcmd_wording(
    tmp_path: Path, cluster: dict[str, Any], user: dict[str, Any], message: str
) -> None:
    path = write(
        tmp_path / "config",
        kubeconfig(
            clusters={"c": cluster},
            users={"u": user},
            contexts={"x": {"cluster": "c", "user": "u"}},
            current="x",
        ),
    )

    with pytest.raises(InvalidKubeconfigError) as caught:
        load_kubeconfig(str(path))

    assert str(caught.value) == message


def test_insecure_cluster_with_a_ca_is_refused(tmp_path: Path) -> None:
    cluster = {
        "server": "https://x",
        "insecure-skip-tls-verify": True,
        "certificate-authority-data": base64.b64encode(b"pem").decode(),
    }
    path = write(
        tmp_path / "config",
        kubeconfig(clusters={"c": cluster}, contexts={"x": {"cluster": "c"}}, current="x"),
    )

    with pytest.raises(KubeconfigError, match="insecure flag is not allowed"):
        load_kubeconfig(str(path))


def test_context_without_cluster_is_the_empty_configuration_error(tmp_path: Path) -> None:
    path = write(tmp_path / "config", kubeconfig(contexts={"x": {}}, current="x"))

    with pytest.raises(EmptyKubeconfigError):
        load_kubeconfig(str(path))


@pytest.mark.parametrize(
    ("content", "detail"),
    [
        ("clusters: [unclosed", "while parsing"),
        ("- just\n- a list\n", "a kubeconfig must be a mapping"),
        (
            yaml.safe_dump(kubeconfig(clusters={"c": {"server": "x"}}))
            + "\n"
            + "contexts: [{name: a, context: {}}, {name: a, context: {}}]\n",
            'duplicate name "a" in contexts',
        ),
        (
            yaml.safe_dump(kubeconfig(clusters={"c": {"certificate-authority-data": "%%%"}})),
            "certificate-authority-data: illegal base64 data",
        ),
    ],
)
def test_malformed_files_name_the_file(tmp_path: Path, content: str, detail: str) -> None:
    path = write(tmp_path / "config", content)

    with pytest.raises(KubeconfigError) as caught:
        read_kubeconfig(str(path))

    assert str(caught.value).startswith(f'error loading config file "{path}": ')
    assert detail in str(caught.value)


def test_empty_file_is_an_empty_config(tmp_path: Path) -> None:
    assert read_kubeconfig(str(write(tmp_path / "config", ""))).contexts == {}


def test_unreadable_token_file(tmp_path: Path) -> None:
    path = write(
        tmp_path / "config",
        kubeconfig(
            clusters={"c": {"server": "http://x"}},
            users={"u": {"tokenFile": "missing-token"}},
            contexts={"x": {"cluster": "c", "user": "u"}},
            current="x",
        ),
    )

    with pytest.raises(KubeconfigError, match=r"open .*missing-token: no such file or directory"):
        load_kubeconfig(str(path))


def test_ssl_context_trusts_only_the_configured_ca() -> None:
    ca_pem = Path(certifi.where()).read_bytes()

    context = ClientConfig("https://x", ca_data=ca_pem).ssl_context()

    assert context.verify_mode == ssl.CERT_REQUIRED
    assert context.check_hostname is True
    assert context.cert_store_stats()["x509_ca"] > 0


def test_ssl_context_insecure_skips_verification() -> None:
    context = ClientConfig("https://x", insecure_skip_tls_verify=True).ssl_context()

    assert context.verify_mode == ssl.CERT_NONE
    assert context.check_hostname is False


def test_insecure_with_a_ca_is_refused() -> None:
    with pytest.raises(ValueError, match="insecure flag is not allowed"):
        ClientConfig("https://x", ca_data=b"pem", insecure_skip_tls_verify=True)


def test_ssl_context_loads_client_certificate_from_data_and_files(tmp_path: Path) -> None:
    cert_pem, key_pem = _self_signed()
    (tmp_path / "c.crt").write_bytes(cert_pem)
    (tmp_path / "c.key").write_bytes(key_pem)

    ClientConfig("https://x", cert_data=cert_pem, key_data=key_pem).ssl_context()
    files = ClientConfig(
        "https://x", cert_file=str(tmp_path / "c.crt"), key_file=str(tmp_path / "c.key")
    )
    files.ssl_context()

    with pytest.raises(ssl.SSLError):
        ClientConfig("https://x", cert_data=cert_pem, key_data=b"not a key").ssl_context()


def _self_signed() -> tuple[bytes, bytes]:
    """A throwaway certificate and key (cryptography is a test dependency)."""
    from tests.tls import self_signed_pair

    return self_signed_pair()
