"""Request-body media types as Go's ``mime.ParseMediaType`` reads them (kube-apiserver's
``NegotiateInputSerializer`` answers 415 where it fails)."""

from __future__ import annotations

import pytest

from kapi.apimachinery.errors import StatusError
from kapi.endpoints.negotiation import body_media_type, go_media_type, patch_media_type


@pytest.mark.parametrize(
    ("header", "media"),
    [
        ("application/json", "application/json"),
        ("Application/JSON", "application/json"),
        ("application/json;", "application/json"),
        ("application/json ; charset=utf-8", "application/json"),
        ('application/json; charset="utf;8"', "application/json"),
        ('application/json; x=""', "application/json"),
        ("application/json; a=1; a=1", "application/json"),
        ("application/json; a=1;", "application/json"),
        ("json", "json"),
    ],
)
def test_parsable(header: str, media: str) -> None:
    assert go_media_type(header) == media


@pytest.mark.parametrize(
    "header",
    [
        "application/json;;;",
        "application/json;;",
        "application/json;charset",
        "application/json;charset=",
        "application/json;=utf-8",
        "application/json; a=1; a=2",
        'application/json; x="unterminated',
        "application/",
        "/json",
        "application/json/x",
        "app lication/json",
        "",
    ],
)
def test_unparsable(header: str) -> None:
    assert go_media_type(header) is None


def test_body_type_refuses_what_go_cannot_parse() -> None:
    with pytest.raises(StatusError) as refused:
        body_media_type("application/json;;;", ("application/json",))
    assert refused.value.code == 415
    assert body_media_type(None, ("application/json",)) == "application/json"


def test_patch_type_reads_only_up_to_the_first_semicolon() -> None:
    allowed = ("application/merge-patch+json",)
    assert patch_media_type("application/merge-patch+json;;;", allowed) == allowed[0]
