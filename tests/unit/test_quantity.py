"""``resource.Quantity`` parsing and canonical text, against upstream's own table tests.

The tables are ported from ``k8s.io/apimachinery/pkg/api/resource/quantity_test.go``
(v0.36.3); each names the upstream test it comes from.  Then the two places kapi
decodes built-in bodies: JSON (``kapi.runtime.pruning``) and protobuf.
"""

from __future__ import annotations

import copy
from decimal import Decimal
from typing import Any

import pytest

from kapi.apimachinery.quantity import (
    ERR_FORMAT_WRONG,
    ERR_NUMERIC,
    ERR_SUFFIX,
    Format,
    Quantity,
    QuantityError,
    parse_quantity,
    unmarshal_json,
)
from kapi.apis.batch import CronJobV1
from kapi.apis.core_v1 import ConfigMap
from kapi.runtime import protobuf
from kapi.runtime.pruning import DecodeTypeError, prune

DSI, BSI, DEX = Format.DECIMAL_SI, Format.BINARY_SI, Format.DECIMAL_EXPONENT
MAX_INT64 = 2**63 - 1


def dec(mantissa: int, exponent: int) -> Decimal:
    """Upstream's ``decQuantity`` value: ``mantissa * 10^exponent``."""
    return Decimal(mantissa).scaleb(exponent)


# -- TestQuantityParse: value and format -------------------------------------------------------

PARSED = [
    ("0", dec(0, 0), DSI),
    ("0n", dec(0, 0), DSI),
    ("0u", dec(0, 0), DSI),
    ("0m", dec(0, 0), DSI),
    ("0Ki", dec(0, 0), BSI),
    ("0k", dec(0, 0), DSI),
    ("0Mi", dec(0, 0), BSI),
    ("0Ti", dec(0, 0), BSI),
    ("1", dec(1, 0), DSI),
    ("1Ki", dec(1024, 0), BSI),
    ("8Ki", dec(8 * 1024, 0), BSI),
    ("7Mi", dec(7 * 1024**2, 0), BSI),
    ("6Gi", dec(6 * 1024**3, 0), BSI),
    ("5Ti", dec(5 * 1024**4, 0), BSI),
    ("4Pi", dec(4 * 1024**5, 0), BSI),
    ("3Ei", dec(3 * 1024**6, 0), BSI),
    ("100Ti", dec(100 * 1024**4, 0), BSI),
    ("5n", dec(5, -9), DSI),
    ("4u", dec(4, -6), DSI),
    ("3m", dec(3, -3), DSI),
    ("50k", dec(5, 4), DSI),
    ("40T", dec(4, 13), DSI),
    ("2P", dec(2, 15), DSI),
    ("1E", dec(1, 18), DSI),
    ("1E-3", dec(1, -3), DEX),
    ("1e3", dec(1, 3), DEX),
    ("1E6", dec(1, 6), DEX),
    ("1e14", dec(1, 14), DEX),
    ("100.035k", dec(100035, 0), DSI),
    ("0.001", dec(1, -3), DSI),
    ("0.0005k", dec(5, -1), DSI),
    ("0.00050k", dec(5, -1), DSI),
    ("0.5e-2", dec(5, -3), DEX),
    ("10.035M", dec(10035, 3), DSI),
    ("1.3E+6", dec(13, 5), DEX),
    ("1.53E12", dec(153, 10), DEX),
    ("6.987654321G", dec(6987654321, 0), DSI),
    ("1.01E", dec(101, 16), DSI),
    # Things that saturate/round
    ("3.001n", dec(4, -9), DSI),
    ("1.1E-9", dec(2, -9), DEX),
    ("0.0000000001", dec(1, -9), DSI),
    ("0.00000000050", dec(1, -9), DSI),
    ("0.5e-9", dec(1, -9), DEX),
    ("0.9n", dec(1, -9), DSI),
    ("0.00000012345", dec(124, -9), DSI),
    ("9Ei", Decimal(MAX_INT64), BSI),
    ("9223372036854775807Ki", Decimal(MAX_INT64), BSI),
    ("12E", dec(12, 18), DSI),
    # We'll accept fractional binary stuff, too.
    ("100.035Ki", dec(10243584, -2), BSI),
    ("0.5Mi", dec(512 * 1024, 0), BSI),
    ("0.025Ti", dec(274877906944, -1), BSI),
    # Things written by trolls
    ("0.000000000001Ki", dec(2, -9), DSI),  # rounds up, changes format
    (".001", dec(1, -3), DSI),
    (".0001k", dec(100, -3), DSI),
    ("1.", dec(1, 0), DSI),
    ("1.G", dec(1, 9), DSI),
]


@pytest.mark.parametrize(("text", "amount", "format_"), PARSED)
def test_parse_value_and_format(text: str, amount: Decimal, format_: Format) -> None:
    """TestQuantityParse, with its negative and explicit ``+`` variants."""
    for sign, expected in (("", amount), ("+", amount), ("-", -amount)):
        parsed = parse_quantity(sign + text)
        assert parsed.amount == expected, sign + text
        assert parsed.format is format_, sign + text


@pytest.mark.parametrize(
    ("text", "error"),
    [
        # TestQuantityParse's invalid inputs; upstream checks only that they fail.
        ("", ERR_FORMAT_WRONG),
        ("1.1.M", ERR_FORMAT_WRONG),
        ("1+1.0M", ERR_FORMAT_WRONG),
        ("0.1mi", ERR_SUFFIX),
        ("0.1am", ERR_FORMAT_WRONG),
        ("aoeu", ERR_FORMAT_WRONG),
        (".5i", ERR_SUFFIX),
        ("1i", ERR_SUFFIX),
        ("-3.01i", ERR_SUFFIX),
        ("-3.01e-", ERR_SUFFIX),
        (" 1", ERR_FORMAT_WRONG),  # trailing whitespace is forbidden
        ("1 ", ERR_FORMAT_WRONG),
        # A suffix of the right letters that means nothing, and an exponent past int64.
        ("32MMi", ERR_SUFFIX),
        ("1e99999999999999999999", ERR_SUFFIX),
        # A binary suffix with no digits at all reaches the arbitrary-precision parser.
        ("Ei", ERR_NUMERIC),
    ],
)
def test_parse_errors(text: str, error: str) -> None:
    with pytest.raises(QuantityError) as raised:
        parse_quantity(text)
    assert str(raised.value) == error


def test_format_error_names_upstreams_pattern() -> None:
    assert ERR_FORMAT_WRONG == (
        "quantities must match the regular expression "
        "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
    )


# -- TestQuantityString: canonical text of a value, kept when parsed back ---------------------

STRINGS = [
    (dec(1024**3, 0), BSI, "1Gi", "1024Mi"),
    (dec(300 * 1024**2, 0), BSI, "300Mi", "307200Ki"),
    (dec(6 * 1024, 0), BSI, "6Ki", ""),
    (dec(1001 * 1024**3, 0), BSI, "1001Gi", "1025024Mi"),
    (dec(1024**4, 0), BSI, "1Ti", "1024Gi"),
    (dec(5, 0), BSI, "5", "5000m"),
    (dec(500, -3), BSI, "500m", "0.5"),
    (dec(1, 9), DSI, "1G", "1000M"),
    (dec(1000, 6), DSI, "1G", "0.001T"),
    (dec(1000000, 3), DSI, "1G", ""),
    (dec(1, -3), DSI, "1m", "1000u"),
    (dec(80, -3), DSI, "80m", ""),
    (dec(1080, -3), DSI, "1080m", "1.08"),
    (dec(108, -2), DSI, "1080m", "1080000000n"),
    (dec(10800, -4), DSI, "1080m", ""),
    (dec(300, 6), DSI, "300M", ""),
    (dec(1234567, 6), DSI, "1234567M", ""),
    (dec(1234567, -3), BSI, "1234567m", ""),
    (dec(3, 3), DSI, "3k", ""),
    (dec(1025, 0), BSI, "1025", ""),
    (dec(0, 0), DSI, "0", ""),
    (dec(0, 0), BSI, "0", ""),
    (dec(1, 9), DEX, "1e9", ".001e12"),
    (dec(1, -3), DEX, "1e-3", "0.001e0"),
    (dec(1, -9), DEX, "1e-9", "1000e-12"),
    (dec(80, -3), DEX, "80e-3", ""),
    (dec(300, 6), DEX, "300e6", ""),
    (dec(3, 3), DEX, "3e3", ""),
    (dec(0, 0), DEX, "0", "00"),
    (dec(1, -9), DSI, "1n", ""),
    (dec(108, -8), DSI, "1080n", ""),
    (dec(10800, -10), DSI, "1080n", ""),
    (dec(1, -6), DSI, "1u", ""),
    (dec(1080, -6), DSI, "1080u", ""),
]


@pytest.mark.parametrize(("amount", "format_", "expected", "alternate"), STRINGS)
def test_canonical_string(amount: Decimal, format_: Format, expected: str, alternate: str) -> None:
    """TestQuantityString: the value's text; the text parses back kept as sent."""
    assert str(Quantity(amount, format_)) == expected
    assert parse_quantity(expected).text == expected
    if amount:
        assert str(Quantity(-amount, format_)) == "-" + expected
    if alternate:
        parsed = parse_quantity(alternate)
        assert parsed.text is None
        assert str(parsed) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # TestQuantityParseEmit
        ("1Ki", "1Ki"),
        ("1Mi", "1Mi"),
        ("1Gi", "1Gi"),
        ("1024Mi", "1Gi"),
        ("1000M", "1G"),
        (".001Ki", "1024m"),
        (".000001Ki", "1024u"),
        (".000000001Ki", "1024n"),
        (".000000000001Ki", "2n"),
    ],
)
def test_parse_emit(text: str, expected: str) -> None:
    """TestQuantityParseEmit, with its negative variants."""
    assert str(parse_quantity(text)) == expected
    assert str(parse_quantity("-" + text)) == "-" + expected


@pytest.mark.parametrize(
    ("text", "canonical"),
    [
        # TestParseQuantity: min/max 18, 19 and 20 digits, and around int64's limits.
        ("-999999999999999999", None),
        ("999999999999999999.0", "999999999999999999"),
        ("-999999999999999999.1", "-999999999999999999100m"),
        ("9999999999999999999", None),
        ("-1E", None),
        ("1000000000000000000", "1E"),
        ("-1.0E", "-1E"),
        ("9999999999999999999000m", "9999999999999999999"),
        ("9999999999999999999.1", "9999999999999999999100m"),
        ("-1.0000000000000000001E", "-1000000000000000000100m"),
        ("1.000000000000000001E", "1000000000000000001"),
        ("10E", None),
        ("-10000000000000000000", "-10E"),
        ("10000000000000000000000m", "10E"),
        ("10.0000000000000000001E", "10000000000000000000100m"),
        ("-10.000000000000000001E", "-10000000000000000001"),
        ("-9223372036854775809", None),
        ("9223372036854775806000m", "9223372036854775806"),
        ("-9223372036854775808.1", "-9223372036854775808100m"),
        ("9223372036854775807.0", "9223372036854775807"),
        ("9223372036854775808", None),
        ("9223372036854775808.1", "9223372036854775808100m"),
    ],
)
def test_parse_quantity_reserializes(text: str, canonical: str | None) -> None:
    """TestParseQuantity: the text itself, or its ``canonical`` form."""
    assert str(parse_quantity(text)) == (canonical or text)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("1000m", "1"),
        ("0.5", "500m"),
        ("1.5Gi", "1536Mi"),
        ("1e3", "1e3"),
        ("100M", "100M"),
        # Rounded up to the nano (Nano, not Milli, since apimachinery 1.3).
        ("0.0001", "100u"),
        ("1.1Ki", "1126400m"),  # not an integer: binary falls back to DecimalSI
        ("1023Ki", "1023Ki"),
        ("0.5Ki", "512"),  # under 1024: no binary suffix
        ("-0", "0"),
        # Text that upstream's cheap check finds canonical is kept as sent.
        ("+1", "+1"),
        ("012", "012"),
        ("1E3", "1E3"),
        ("1.G", "1.G"),
        # A bare binary suffix reads as zero where the int64 path takes it.
        ("Gi", "0"),
        # Past E upstream finds no suffix and drops the magnitude (kubernetes#141249).
        ("1000E", "1"),
    ],
)
def test_canonical_forms(text: str, expected: str) -> None:
    assert str(parse_quantity(text)) == expected


def test_canonical_form_parses_to_itself() -> None:
    for text, _, _ in PARSED:
        canonical = str(parse_quantity(text))
        assert str(parse_quantity(canonical)) == canonical, text


# -- TestJSONWhitespace and the other JSON values ----------------------------------------------


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (" 1", "1"),
        ("1 ", "1"),
        ("\t1500m\n", "1500m"),
        (1, "1"),
        (10, "10"),
        (-1, "-1"),
        (0.5, "500m"),
        (1.5e-7, "150n"),
        (1e16, "10P"),
        (None, "0"),
    ],
)
def test_unmarshal_json(value: Any, expected: str) -> None:
    assert str(unmarshal_json(value)) == expected


@pytest.mark.parametrize("value", [True, False, {}, [], {"cpu": 1}])
def test_unmarshal_json_refuses_other_values(value: Any) -> None:
    with pytest.raises(QuantityError, match="regular expression"):
        unmarshal_json(value)


# -- JSON bodies: the CronJob's pod template -------------------------------------------------


def cronjob(pod_spec: dict[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": "batch/v1",
        "kind": "CronJob",
        "metadata": {"name": "q"},
        "spec": {
            "schedule": "* * * * *",
            "jobTemplate": {"spec": {"template": {"spec": pod_spec}}},
        },
    }


def pod_spec_of(obj: dict[str, Any]) -> dict[str, Any]:
    spec: dict[str, Any] = obj["spec"]["jobTemplate"]["spec"]["template"]["spec"]
    return spec


def resources(cpu: Any, memory: Any) -> dict[str, Any]:
    return {"limits": {"cpu": cpu, "memory": memory}, "requests": {"cpu": cpu}}


def test_json_body_quantities_are_canonical() -> None:
    sent = {
        "containers": [{"name": "c", "resources": resources("1000m", "1.5Gi")}],
        "initContainers": [{"name": "i", "resources": resources(0.5, 2048)}],
        "overhead": {"cpu": "0.25"},
        "volumes": [
            {"name": "scratch", "emptyDir": {"sizeLimit": "1024Mi"}},
            {"name": "empty", "emptyDir": {"sizeLimit": None}},
            {
                "name": "api",
                "downwardAPI": {
                    "items": [
                        {
                            "path": "cpu",
                            "resourceFieldRef": {"resource": "limits.cpu", "divisor": "1000m"},
                        }
                    ]
                },
            },
            {
                "name": "claim",
                "ephemeral": {
                    "volumeClaimTemplate": {
                        "spec": {"resources": {"requests": {"storage": "1000Mi"}}}
                    }
                },
            },
        ],
    }
    obj = cronjob(copy.deepcopy(sent))
    prune(obj, CronJobV1)
    spec = pod_spec_of(obj)
    assert spec["containers"][0]["resources"] == {
        "limits": {"cpu": "1", "memory": "1536Mi"},
        "requests": {"cpu": "1"},
    }
    assert spec["initContainers"][0]["resources"] == {
        "limits": {"cpu": "500m", "memory": "2048"},
        "requests": {"cpu": "500m"},
    }
    assert spec["overhead"] == {"cpu": "250m"}
    volumes = spec["volumes"]
    assert volumes[0]["emptyDir"] == {"sizeLimit": "1Gi"}
    assert volumes[1]["emptyDir"] == {}  # a nil *Quantity
    assert volumes[2]["downwardAPI"]["items"][0]["resourceFieldRef"]["divisor"] == "1"
    claim = volumes[3]["ephemeral"]["volumeClaimTemplate"]["spec"]["resources"]
    assert claim == {"requests": {"storage": "1000Mi"}}


def test_json_body_null_quantities_are_zero() -> None:
    obj = cronjob({"containers": [{"name": "c", "resources": {"limits": {"cpu": None}}}]})
    prune(obj, CronJobV1)
    assert pod_spec_of(obj)["containers"][0]["resources"] == {"limits": {"cpu": "0"}}


@pytest.mark.parametrize(
    ("cpu", "error"),
    [("2 cores", ERR_FORMAT_WRONG), ("32MMi", ERR_SUFFIX), (True, ERR_FORMAT_WRONG)],
)
def test_json_body_invalid_quantity_fails_decoding(cpu: Any, error: str) -> None:
    obj = cronjob({"containers": [{"name": "c", "resources": resources(cpu, "1Gi")}]})
    with pytest.raises(DecodeTypeError) as raised:
        prune(obj, CronJobV1)
    assert str(raised.value) == error


def test_kinds_without_quantities_are_left_alone() -> None:
    obj = {"apiVersion": "v1", "kind": "ConfigMap", "data": {"cpu": "1000m"}}
    prune(obj, ConfigMap)
    assert obj["data"] == {"cpu": "1000m"}


# -- protobuf bodies ------------------------------------------------------------------------


def test_protobuf_body_quantities_are_canonical() -> None:
    sent = cronjob({"containers": [{"name": "c", "resources": resources("1000m", "1.5Gi")}]})
    decoded = protobuf.decode(protobuf.encode(sent))
    assert pod_spec_of(decoded)["containers"][0]["resources"] == {
        "limits": {"cpu": "1", "memory": "1536Mi"},
        "requests": {"cpu": "1"},
    }


@pytest.mark.parametrize(
    ("cpu", "error"),
    [
        (" 1", ERR_FORMAT_WRONG),  # protobuf's unmarshaller does not trim, JSON's does
        ("", ERR_FORMAT_WRONG),
        ("1Qi", ERR_FORMAT_WRONG),
        ("1ki", ERR_SUFFIX),
    ],
)
def test_protobuf_body_invalid_quantity_fails_decoding(cpu: str, error: str) -> None:
    body = protobuf.encode(
        cronjob({"containers": [{"name": "c", "resources": resources(cpu, "1Gi")}]})
    )
    with pytest.raises(protobuf.ObjectDecodeError) as raised:
        protobuf.decode(body)
    assert str(raised.value) == error
    assert (raised.value.api_version, raised.value.kind) == ("batch/v1", "CronJob")
