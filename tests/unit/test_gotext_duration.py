"""``parse_go_duration``: Go's ``time.ParseDuration``, as kube-apiserver's duration flags read."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kapi.apimachinery.gotext import go_duration, parse_go_duration


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        ("1h0m0s", 3600.0),
        ("90m", 5400.0),
        ("30s", 30.0),
        ("1.5h", 5400.0),
        ("2h45m", 9900.0),
        ("0", 0.0),
        ("-0", 0.0),
        ("+5s", 5.0),
        ("-1m30s", -90.0),
        ("1.s", 1.0),
        (".5s", 0.5),
        ("300ms", 0.3),
        ("1us", 1e-6),
        ("1\u00b5s", 1e-6),
        ("1\u03bcs", 1e-6),
        ("7ns", 7e-9),
        ("1h1h", 7200.0),
        # The most negative duration fits; its positive twin does not (below).
        ("-9223372036854775808ns", -9223372036854775808 / 1e9),
    ],
)
def test_parses_what_go_parses(text: str, seconds: float) -> None:
    assert parse_go_duration(text) == seconds


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", 'time: invalid duration ""'),
        ("abc", 'time: invalid duration "abc"'),
        ("-", 'time: invalid duration "-"'),
        (".", 'time: invalid duration "."'),
        (".s", 'time: invalid duration ".s"'),
        ("5s.", 'time: invalid duration "5s."'),
        ("1", 'time: missing unit in duration "1"'),
        ("1..5s", 'time: missing unit in duration "1..5s"'),
        ("1x", 'time: unknown unit "x" in duration "1x"'),
        ("1h ", 'time: unknown unit "h " in duration "1h "'),
        ("1e3s", 'time: unknown unit "e" in duration "1e3s"'),
        ("2562048h", 'time: invalid duration "2562048h"'),
        ("9223372036854775808ns", 'time: invalid duration "9223372036854775808ns"'),
        # The time package quotes non-ASCII and control characters byte by byte.
        ("\u00e9", 'time: invalid duration "\\xc3\\xa9"'),
        ('"1"', 'time: invalid duration "\\"1\\""'),
    ],
)
def test_rejects_with_gos_message(text: str, message: str) -> None:
    with pytest.raises(ValueError) as caught:
        parse_go_duration(text)
    assert str(caught.value) == message


@given(st.integers(min_value=0, max_value=10**6 * 3600))
def test_reads_back_what_go_duration_writes(seconds: int) -> None:
    assert parse_go_duration(go_duration(seconds)) == seconds
