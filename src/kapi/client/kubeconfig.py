"""Kubeconfig files, loaded and resolved with client-go ``clientcmd``'s rules.

kapi reads the same files as kubectl, so a context works with both only if the
rules match exactly:

* an explicit path (``--kubeconfig``) is the only file read and must exist;
* otherwise ``KUBECONFIG`` (an ``os.pathsep``-separated list; empty entries,
  duplicates and missing files skipped) or else ``~/.kube/config``;
* merging: the first file to set a value wins, for ``current-context`` and for
  each cluster, user and context *by name*; a later file's entry of the same
  name is dropped whole, never merged field by field;
* relative file references (CA, client certificate and key, token file) are
  resolved against the directory of the file that holds them;
* the context (``--context`` or ``current-context``) is validated the way
  kubectl does, with its error wording.
"""

from __future__ import annotations

import base64
import binascii
import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import yaml

from kapi.client.config import ClientConfig

_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

#: Per section: the list key, the entry's payload key, its file references, its inline data.
_SECTIONS = {
    "clusters": ("cluster", ("certificate-authority",), ("certificate-authority-data",)),
    "users": (
        "user",
        ("client-certificate", "client-key", "tokenFile"),
        ("client-certificate-data", "client-key-data"),
    ),
    "contexts": ("context", (), ()),
}

_EMPTY_CLUSTER = "cluster has no server defined"


class KubeconfigError(Exception):
    """A kubeconfig that cannot be read or does not yield a usable client configuration."""


class KubeconfigNotFoundError(KubeconfigError):
    """The explicitly given kubeconfig file does not exist."""

    def __init__(self, path: str) -> None:
        super().__init__(f"stat {path}: no such file or directory")
        self.path = path


class InvalidKubeconfigError(KubeconfigError):
    """The selected context cannot be used (clientcmd's "invalid configuration")."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__(_invalid_configuration(problems))
        self.problems = problems


class EmptyKubeconfigError(InvalidKubeconfigError):
    """No kubeconfig provides a server: kubectl's "no configuration has been provided"."""

    def __init__(self) -> None:
        super().__init__(
            [
                "no configuration has been provided, "
                "try setting KUBERNETES_MASTER environment variable"
            ]
        )


class ContextNotFoundError(KubeconfigError):
    """The requested context is not defined in any loaded file."""

    def __init__(self, context: str, message: str) -> None:
        super().__init__(message)
        self.context = context


@dataclass(slots=True)
class Kubeconfig:
    """The merged content of the loaded files.

    Entries are the files' own mappings, with relative paths already made
    absolute and ``*-data`` fields already base64-decoded to bytes.
    """

    clusters: dict[str, dict[str, Any]] = field(default_factory=dict)
    users: dict[str, dict[str, Any]] = field(default_factory=dict)
    contexts: dict[str, dict[str, Any]] = field(default_factory=dict)
    current_context: str = ""

    def client_config(self, context: str | None = None) -> ClientConfig:
        """The :class:`ClientConfig` of ``context`` (default: ``current-context``)."""
        if context and context not in self.contexts:
            raise ContextNotFoundError(context, f'context "{context}" does not exist')
        name = context or self.current_context
        problems: list[str] = []
        selected = self.contexts.get(name)
        # A dangling current-context: reported with whatever else is then unusable.
        dangling = bool(name) and selected is None
        if dangling:
            problems.append(f"context was not found for specified context: {name}")
        selected = selected or {}
        user_name = str(selected.get("user") or "")
        cluster_name = str(selected.get("cluster") or "")
        user = self.users.get(user_name, {})
        cluster = self.clusters.get(cluster_name)
        problems += _user_problems(user_name, user)
        problems += _cluster_problems(cluster_name, cluster)
        if problems == [_EMPTY_CLUSTER]:
            raise EmptyKubeconfigError()
        if dangling:
            raise ContextNotFoundError(name, _invalid_configuration(problems))
        if problems:
            raise InvalidKubeconfigError(problems)
        assert cluster is not None  # _cluster_problems reports a missing cluster
        try:
            return ClientConfig(
                str(cluster["server"]).rstrip("/"),
                namespace=str(selected.get("namespace") or "default"),
                ca_file=cluster.get("certificate-authority"),
                ca_data=cluster.get("certificate-authority-data"),
                insecure_skip_tls_verify=bool(cluster.get("insecure-skip-tls-verify")),
                tls_server_name=cluster.get("tls-server-name"),
                cert_file=user.get("client-certificate"),
                cert_data=user.get("client-certificate-data"),
                key_file=user.get("client-key"),
                key_data=user.get("client-key-data"),
                token=user.get("token") or _read_token_file(user.get("tokenFile")),
                username=user.get("username"),
                password=user.get("password"),
            )
        except ValueError as err:
            raise KubeconfigError(str(err)) from err

    def _absorb(self, other: Kubeconfig) -> None:
        """Merge a lower-precedence file: only names and values not yet set are taken."""
        for mine, theirs in (
            (self.clusters, other.clusters),
            (self.users, other.users),
            (self.contexts, other.contexts),
        ):
            for name, entry in theirs.items():
                mine.setdefault(name, entry)
        self.current_context = self.current_context or other.current_context


def kubeconfig_paths(path: str | None = None) -> list[str]:
    """The files to load, highest precedence first."""
    if path:
        return [path]
    env = os.environ.get("KUBECONFIG", "")
    if env:
        return list(dict.fromkeys(entry for entry in env.split(os.pathsep) if entry))
    return [os.path.join(os.path.expanduser("~"), ".kube", "config")]


def read_kubeconfig(path: str | None = None) -> Kubeconfig:
    """Load and merge the kubeconfig files (see the module docstring for the rules)."""
    if path and not os.path.exists(path):
        raise KubeconfigNotFoundError(path)
    merged = Kubeconfig()
    for filename in kubeconfig_paths(path):
        try:
            loaded = load_kubeconfig_file(filename)
        except FileNotFoundError:
            continue
        merged._absorb(loaded)
    return merged


def load_kubeconfig(path: str | None = None, context: str | None = None) -> ClientConfig:
    """The client configuration kubectl would use with ``--kubeconfig path --context context``."""
    return read_kubeconfig(path).client_config(context)


def load_kubeconfig_file(filename: str) -> Kubeconfig:
    """One file, its relative paths resolved against its directory.

    Raises ``FileNotFoundError`` for a missing file (which merging skips) and
    :class:`KubeconfigError` for anything unreadable or malformed.
    """
    try:
        with open(filename, "rb") as handle:
            data = handle.read()
    except FileNotFoundError:
        raise
    except OSError as err:
        raise _load_error(filename, _os_message("read", filename, err)) from err
    try:
        document = yaml.load(data, Loader=_Loader) or {}
    except yaml.YAMLError as err:
        raise _load_error(filename, str(err)) from err
    if not isinstance(document, dict):
        raise _load_error(filename, "a kubeconfig must be a mapping")
    base = os.path.dirname(os.path.abspath(filename))
    sections = {
        section: _named_entries(filename, document, section, *spec, base)
        for section, spec in _SECTIONS.items()
    }
    return Kubeconfig(
        clusters=sections["clusters"],
        users=sections["users"],
        contexts=sections["contexts"],
        current_context=str(document.get("current-context") or ""),
    )


def _named_entries(
    filename: str,
    document: dict[str, Any],
    section: str,
    payload: str,
    file_keys: Iterable[str],
    data_keys: Iterable[str],
    base: str,
) -> dict[str, dict[str, Any]]:
    entries: dict[str, dict[str, Any]] = {}
    for item in document.get(section) or []:
        if not isinstance(item, dict) or not isinstance(item.get(payload) or {}, dict):
            raise _load_error(filename, f"malformed entry in {section}: {item!r}")
        name = str(item.get("name") or "")
        if name in entries:
            raise _load_error(filename, f'duplicate name "{name}" in {section}')
        entry = dict(item.get(payload) or {})
        for key in file_keys:
            if entry.get(key):
                entry[key] = os.path.join(base, str(entry[key]))
        for key in data_keys:
            if entry.get(key):
                entry[key] = _decode_data(filename, key, entry[key])
        entries[name] = entry
    return entries


def _decode_data(filename: str, key: str, value: Any) -> bytes:
    try:
        return base64.b64decode(str(value), validate=True)
    except binascii.Error as err:
        raise _load_error(filename, f"{key}: illegal base64 data: {err}") from err


def _user_problems(name: str, user: dict[str, Any]) -> list[str]:
    """clientcmd's ``validateAuthInfo`` for the credentials kapi supports."""
    problems: list[str] = []
    if "exec" in user or "auth-provider" in user:
        problems.append(f"exec and auth-provider credentials are not supported (user {name!r})")
    methods = []
    if user.get("token"):
        methods.append("token")
    if user.get("username") or user.get("password"):
        methods.append("basicAuth")
    if user.get("client-certificate") or user.get("client-certificate-data"):
        if user.get("client-certificate") and user.get("client-certificate-data"):
            problems.append(
                f"client-cert-data and client-cert are both specified for {name}. "
                "client-cert-data will override."
            )
        if user.get("client-key") and user.get("client-key-data"):
            problems.append(
                f"client-key-data and client-key are both specified for {name}; "
                "client-key-data will override"
            )
        if not (user.get("client-key") or user.get("client-key-data")):
            problems.append(
                f"client-key-data or client-key must be specified for {name} "
                "to use the clientCert authentication method."
            )
        problems += _unreadable(user.get("client-certificate"), "client-cert", name)
        problems += _unreadable(user.get("client-key"), "client-key", name)
    if len(methods) > 1:
        problems.append(
            f"more than one authentication method found for {name}; "
            f"found [{' '.join(methods)}], only one is allowed"
        )
    return problems


def _cluster_problems(name: str, cluster: dict[str, Any] | None) -> list[str]:
    """clientcmd's ``validateClusterInfo``; a missing cluster is the "empty" one."""
    if cluster is None:
        return [_EMPTY_CLUSTER]
    problems: list[str] = []
    if not cluster.get("server"):
        if name:
            problems.append(f'no server found for cluster "{name}"')
        else:
            problems.append("default cluster has no server defined")
    if cluster.get("certificate-authority") and cluster.get("certificate-authority-data"):
        problems.append(
            f"certificate-authority-data and certificate-authority are both specified for {name}. "
            "certificate-authority-data will override."
        )
    problems += _unreadable(cluster.get("certificate-authority"), "certificate-authority", name)
    return problems


def _unreadable(path: str | None, what: str, owner: str) -> list[str]:
    if not path:
        return []
    try:
        with open(path, "rb"):
            return []
    except OSError as err:
        return [f"unable to read {what} {path} for {owner} due to {_os_message('open', path, err)}"]


def _read_token_file(path: str | None) -> str | None:
    """The bearer token in ``tokenFile``, whitespace-trimmed as client-go's file token source."""
    if not path:
        return None
    try:
        with open(path, encoding="utf-8") as handle:
            return handle.read().strip()
    except OSError as err:
        raise KubeconfigError(_os_message("open", path, err)) from err


def _os_message(operation: str, path: str, err: OSError) -> str:
    """An OS error worded like Go's ``*PathError`` (``open /x: no such file or directory``)."""
    reason = (err.strerror or str(err)).lower()
    return f"{operation} {path}: {reason}"


def _invalid_configuration(problems: list[str]) -> str:
    """clientcmd's wording; Go's error aggregate shows one error bare, several in brackets."""
    text = problems[0] if len(problems) == 1 else f"[{', '.join(problems)}]"
    return f"invalid configuration: {text}"


def _load_error(filename: str, detail: str) -> KubeconfigError:
    return KubeconfigError(f'error loading config file "{filename}": {detail}')
