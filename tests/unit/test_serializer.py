"""Request body decoding: duplicate fields, and syntax errors worded as Go's decoder."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kapi.runtime.serializer import JSON, SyntaxDecodeError, decode

_keys = st.text(alphabet=st.sampled_from('ab:"\\ {},'), min_size=0, max_size=4)
_json = st.recursive(
    st.none() | st.integers() | _keys,
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.lists(st.tuples(_keys, inner), max_size=4).map(lambda pairs: ("obj", pairs))
    ),
    max_leaves=12,
)


def _render(node: object, colon: str) -> str:
    """JSON text that may spell the same key twice in an object."""
    if isinstance(node, tuple):
        pairs = node[1]
        return "{" + ",".join(f"{json.dumps(k)}{colon}{_render(v, colon)}" for k, v in pairs) + "}"
    if isinstance(node, list):
        return "[" + ",".join(_render(v, colon) for v in node) + "]"
    return json.dumps(node)


def _has_duplicates(node: object) -> bool:
    if isinstance(node, tuple):
        keys = [k for k, _ in node[1]]
        return len(set(keys)) < len(keys) or any(_has_duplicates(v) for _, v in node[1])
    if isinstance(node, list):
        return any(_has_duplicates(v) for v in node)
    return False


@given(_json, st.sampled_from([":", ": ", " : ", "\n:"]))
def test_duplicates_are_found_whatever_the_keys_contain(node: object, colon: str) -> None:
    # Compact, Python's json.dumps and spaced-out colons take different fast paths.
    decoded = decode(_render(node, colon).encode(), JSON, find_duplicates=True)
    assert bool(decoded.duplicates) == _has_duplicates(node)


def test_duplicate_paths_name_the_field() -> None:
    body = b'{"metadata":{"name":"a","name":"b"},"data":{"k":"1"},"data":{"k":"2"}}'
    decoded = decode(body, JSON, find_duplicates=True)
    assert decoded.obj == {"metadata": {"name": "b"}, "data": {"k": "2"}}
    assert decoded.duplicates == ["metadata.name", "data"]


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (b'{"metadata":', "unexpected end of JSON input"),
        (b'{"a" 1}', "invalid character '1' after object key"),
        (b'{"a":1 "b":2}', "invalid character '\"' after object key:value pair"),
        (b"[1 2]", "invalid character '2' after array element"),
        (b"{a:1}", "invalid character 'a' looking for beginning of object key string"),
        (b"x", "invalid character 'x' looking for beginning of value"),
        (b"{}x", "invalid character 'x' after top-level value"),
        (b'{"a":"b\\q"}', "invalid character 'q' in string escape code"),
    ],
)
def test_syntax_errors_read_as_go_words_them(body: bytes, message: str) -> None:
    with pytest.raises(SyntaxDecodeError) as raised:
        decode(body, JSON, find_duplicates=False)
    assert str(raised.value) == f"couldn't get version/kind; json parse error: {message}"


# -- what Go's decoders read differently from Python's ---------------------------------------


@pytest.mark.parametrize(
    ("key", "text"),
    [
        ("1", "1"),
        ("-7", "-7"),
        ("1.5", "1.5"),
        ("0.1", "0.1"),
        ("100.0", "100"),
        ("1.0e+6", "1e+06"),
        ("123456.0", "123456"),
        ("1234567.0", "1.234567e+06"),
        ("0.00012", "0.00012"),
        ("0.00001", "1e-05"),
        ("3.14159265", "3.1415927"),
        (".inf", ".inf"),
        ("-.inf", "-.inf"),
        (".nan", ".nan"),
        ("true", "true"),
        ("false", "false"),
        ("2020-01-02", "2020-01-02"),
    ],
)
def test_yaml_keys_are_written_as_sigs_yaml_writes_them(key: str, text: str) -> None:
    # strconv.FormatFloat(f, 'g', -1, 32) for floats; timestamps stay text.
    assert decode(f"{key}: x\n".encode(), "application/yaml", find_duplicates=False).obj == {
        text: "x"
    }


def test_yaml_timestamp_values_stay_text() -> None:
    body = b"a: 2020-01-02\nb: 2001-12-14t21:59:43.10-05:00\n"
    assert decode(body, "application/yaml", find_duplicates=False).obj == {
        "a": "2020-01-02",
        "b": "2001-12-14t21:59:43.10-05:00",
    }


@pytest.mark.parametrize(
    ("body", "value"),
    [
        (rb'"\ud800"', "\ufffd"),
        (rb'"\udfff"', "\ufffd"),
        (rb'"\ud800\udc00"', "\U00010000"),
        (rb'"\ud800\ud800\udc00"', "\ufffd\U00010000"),
        (rb'"\ud800\u0041"', "\ufffdA"),
        (rb'"\\ud800"', "\\ud800"),
        (rb'"\\\ud800"', "\\\ufffd"),
        (b'"\xff"', "\ufffd"),
        (b'"\xc0\x80"', "\ufffd\ufffd"),
        (b'"\xf0\x9f\x98"', "\ufffd\ufffd\ufffd"),
        (b'"\xed\xa0\x80"', "\ufffd\ufffd\ufffd"),
        ('"é😀"'.encode(), "é😀"),
    ],
)
def test_json_strings_read_as_go_reads_them(body: bytes, value: str) -> None:
    document = b'{"k":' + body + b"}"
    assert decode(document, JSON, find_duplicates=True).obj == {"k": value}


def _nested(depth: int) -> bytes:
    return b'{"a":' * (depth - 1) + b"[]" + b"}" * (depth - 1)


def test_nesting_up_to_the_limit_is_read() -> None:
    assert decode(_nested(200), JSON, find_duplicates=True).obj is not None


@pytest.mark.parametrize("depth", [201, 1024, 1025, 10_000, 10_001])
def test_deeper_nesting_is_the_scanner_depth_error(depth: int) -> None:
    with pytest.raises(SyntaxDecodeError) as info:
        decode(_nested(depth), JSON, find_duplicates=True)
    assert info.value.detail.endswith("exceeded max depth")
    assert info.value.detail.startswith("invalid character ")


@pytest.mark.parametrize("depth", [201, 2_000, 100_000, 1_000_000])
@pytest.mark.parametrize("shape", ["flow", "block"])
def test_deep_yaml_is_refused_before_composing(depth: int, shape: str) -> None:
    # Composing 100,000 levels overflowed the C stack: the process died.
    if shape == "flow":
        body = b"a: " + b"[" * depth + b"]" * depth + b"\n"
    else:
        body = b"a:\n" + b"- " * depth + b"x\n"
    with pytest.raises(SyntaxDecodeError) as info:
        decode(body, "application/yaml", find_duplicates=False)
    assert str(info.value) == "error converting YAML to JSON: yaml: exceeded max depth of 200"


def _alias_bomb(levels: int) -> bytes:
    lines = ["x0: &a0 [x, x, x, x, x, x, x, x, x]"]
    lines += [f"x{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 9) + "]" for i in range(1, levels)]
    return ("\n".join(lines) + "\n").encode()


@pytest.mark.parametrize("levels", [5, 9, 30])
def test_yaml_alias_expansion_is_limited_as_goyaml_limits_it(levels: int) -> None:
    with pytest.raises(SyntaxDecodeError) as info:
        decode(_alias_bomb(levels), "application/yaml", find_duplicates=False)
    assert str(info.value) == (
        "error converting YAML to JSON: yaml: document contains excessive aliasing"
    )


def test_yaml_aliases_within_goyaml_ratio_are_read() -> None:
    three = decode(_alias_bomb(3), "application/yaml", find_duplicates=False).obj
    assert three["x2"] == [[["x"] * 9] * 9] * 9
    body = b"a: &x {k: [1, 2]}\nb: *x\nschedule: '* * * * *'\n"
    assert decode(body, "application/yaml", find_duplicates=False).obj == {
        "a": {"k": [1, 2]},
        "b": {"k": [1, 2]},
        "schedule": "* * * * *",
    }


@pytest.mark.parametrize(
    ("body", "reason"),
    [
        (b'a: "\xff"\n', "invalid leading UTF-8 octet"),
        (b'a: "\xe2\x82"\n', "invalid trailing UTF-8 octet"),
        (b"a: \x01\n", "control characters are not allowed"),
    ],
)
def test_yaml_reader_errors_are_worded_as_goyaml_words_them(body: bytes, reason: str) -> None:
    # Unlike JSON, YAML refuses invalid UTF-8 (libyaml's reader, which goyaml ports).
    with pytest.raises(SyntaxDecodeError) as info:
        decode(body, "application/yaml", find_duplicates=False)
    assert str(info.value) == f"error converting YAML to JSON: yaml: {reason}"
