"""String formats: verdicts of the Go functions kube-openapi's strfmt registry calls."""

from __future__ import annotations

import pytest

from kapi.validation.formats import effective_format, string_format_checker

CASES = {
    "bsonobjectid": (["507f1f77bcf86cd799439011"], ["507f1f77bcf86cd79943901", "zz" * 12]),
    "uri": (["http://example.com/a?b=c", "/abs/path", "mailto:x@y"], ["", "rel/path", ":x"]),
    "email": (["a@b.com", "Name <a.b@c.org>"], ["a", "a@", "@b.com"]),
    "hostname": (["example.com", "a", "xn--bcher-kva.example"], ["-a.com", "a_b.com", "a." * 2]),
    "ipv4": (["1.2.3.4", "010.1.1.1", "::ffff:1.2.3.4"], ["1.2.3", "256.1.1.1", "::1"]),
    "ipv6": (["::1", "fe80::1", "::ffff:1.2.3.4"], ["1.2.3.4", "fe80::1%eth0", ":::"]),
    "cidr": (["10.0.0.0/8", "::/0", "010.0.0.0/8"], ["10.0.0.0", "10.0.0.0/33", "x/1"]),
    "mac": (["01:23:45:67:89:ab", "01-23-45-67-89-ab", "0123.4567.89ab"], ["01:23:45", "0123"]),
    "uuid": (["123e4567-e89b-12d3-a456-426614174000", "123E4567E89B12D3A456426614174000"], ["x"]),
    "uuid3": (["123e4567-e89b-32d3-a456-426614174000"], ["123e4567-e89b-12d3-a456-426614174000"]),
    "uuid4": (["123e4567-e89b-42d3-a456-426614174000"], ["123e4567-e89b-42d3-c456-426614174000"]),
    "uuid5": (["123e4567-e89b-52d3-8456-426614174000"], ["123e4567-e89b-42d3-8456-426614174000"]),
    "isbn10": (["0321751043", "0-321-75104-3"], ["0321751044"]),
    "isbn13": (["978-0321751041"], ["9780321751042"]),
    "isbn": (["0321751043", "9780321751041"], ["123"]),
    "creditcard": (["4111 1111 1111 1111"], ["4111 1111 1111 1112"]),
    "ssn": (["123-45-6789", "123 45 6789"], ["123456789", "123-45-678\n"]),
    "hexcolor": (["#fff", "FFFFFF"], ["#ffff", "ggg"]),
    "rgbcolor": (["rgb(255,0, 10)"], ["rgb(256,0,0)", "rgb(1,2)"]),
    "byte": (["aGVsbG8=", "YWJj"], ["aGVsbG8", "!!!!"]),
    "password": (["anything"], []),
    "date": (["2024-02-29", "2023-12-31"], ["2023-02-29", "2023-1-01", "2023-13-01"]),
    "datetime": (["2024-01-02T03:04:05Z", "2024-01-02t03:04:05.123+01:00"], ["2024-01-02", "x"]),
    "duration": (["1h30m", "-1.5s", "0", "3 days", "2 weeks"], ["", "1x", "h"]),
    "k8s-short-name": (["my-name"], ["My-name", "-a", "a" * 64]),
    "k8s-long-name": (["a.b-c.d"], ["a..b", "A.b", "a" * 254]),
}


@pytest.mark.parametrize("fmt", sorted(CASES))
def test_format_verdicts(fmt: str) -> None:
    check = string_format_checker(fmt)
    assert check is not None
    valid, invalid = CASES[fmt]
    assert [v for v in valid if not check(v)] == []
    assert [v for v in invalid if check(v)] == []


def test_dashed_and_dashless_names_are_the_same_format() -> None:
    assert string_format_checker("date-time") is string_format_checker("datetime")


@pytest.mark.parametrize(
    ("fmt", "types", "kept"),
    [
        ("date", ("string",), "date"),
        ("color", ("string",), ""),
        ("int32", ("integer",), "int32"),
        ("uuid", ("integer",), ""),
        ("double", ("number",), "double"),
        ("date", ("boolean",), ""),
        ("uuid", ("integer", "string"), "uuid"),
    ],
)
def test_unsupported_formats_are_stripped(fmt: str, types: tuple[str, ...], kept: str) -> None:
    assert effective_format(fmt, types) == kept
