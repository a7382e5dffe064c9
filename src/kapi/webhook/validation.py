"""Checks of a webhook's address: a URL, or a reference to an in-cluster service.

The counterpart of upstream ``k8s.io/apiserver/pkg/util/webhook/validation.go``.
Admission webhook configurations and CRD conversion webhooks both use these, so
the rules (and their error texts) live beside the webhook client rather than
with either API.
"""

from __future__ import annotations

from typing import Any, Final
from urllib.parse import urlsplit

from kapi.apimachinery import field_errors
from kapi.apimachinery.field_errors import FieldError, Path
from kapi.apimachinery.gotext import go_quote
from kapi.apimachinery.validation import inclusive_range_error, is_dns1123_subdomain

_URL_FORM: Final = "; desired format: https://host[/path]"


def validate_webhook_url(path: Path, url: str, *, force_https: bool) -> list[FieldError]:
    """Upstream ``webhook.ValidateWebhookURL`` (k8s.io/apiserver/pkg/util/webhook)."""
    parse_error = _go_url_parse_error(url)
    if parse_error:
        return [field_errors.required(path, "url must be a valid URL: " + parse_error + _URL_FORM)]
    parts = urlsplit(url)
    errs: list[FieldError] = []
    if force_https and parts.scheme.lower() != "https":
        detail = "'https' is the only allowed URL scheme" + _URL_FORM
        errs.append(field_errors.invalid(path, parts.scheme.lower(), detail))
    userinfo, at, host = parts.netloc.rpartition("@")
    if not host:
        errs.append(field_errors.invalid(path, host, "host must be specified" + _URL_FORM))
    if at:
        errs.append(
            field_errors.invalid(path, userinfo, "user information is not permitted in the URL")
        )
    if parts.fragment:
        errs.append(
            field_errors.invalid(path, parts.fragment, "fragments are not permitted in the URL")
        )
    if parts.query:
        errs.append(
            field_errors.invalid(path, parts.query, "query parameters are not permitted in the URL")
        )
    return errs


def _go_url_parse_error(url: str) -> str:
    """The ``url.Parse`` failures worth reporting: control characters and a bare ``:scheme``."""
    if any(ord(c) < 0x20 or ord(c) == 0x7F for c in url):
        return f"parse {go_quote(url)}: net/url: invalid control character in URL"
    if url.startswith(":"):
        return f"parse {go_quote(url)}: missing protocol scheme"
    return ""


def validate_webhook_service(
    path: Path, namespace: str, name: str, url_path: Any, port: Any
) -> list[FieldError]:
    """Upstream ``webhook.ValidateWebhookService``: a service reference and its URL path."""
    errs: list[FieldError] = []
    if not name:
        errs.append(field_errors.required(path.child("name"), ""))
    if not namespace:
        errs.append(field_errors.required(path.child("namespace"), ""))
    if not isinstance(port, int) or isinstance(port, bool) or not 1 <= port <= 65535:
        detail = "port is not valid: " + inclusive_range_error(1, 65535)
        errs.append(field_errors.invalid(path.child("port"), port, detail))
    if isinstance(url_path, str):
        errs += _service_path_errors(url_path, path.child("path"))
    return errs


def _service_path_errors(url_path: str, path: Path) -> list[FieldError]:
    if url_path in ("", "/"):
        return []
    if url_path == "//":
        return [field_errors.invalid(path, url_path, "segment[0] may not be empty")]
    errs = []
    if not url_path.startswith("/"):
        errs.append(field_errors.invalid(path, url_path, "must start with a '/'"))
    to_check = url_path[1:]
    if to_check.endswith("/"):
        to_check = to_check[:-1]
    for i, step in enumerate(to_check.split("/")):
        if not step:
            errs.append(field_errors.invalid(path, url_path, f"segment[{i}] may not be empty"))
            continue
        errs += [
            field_errors.invalid(path, url_path, f"segment[{i}]: {m}")
            for m in is_dns1123_subdomain(step)
        ]
    return errs
