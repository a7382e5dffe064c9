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
