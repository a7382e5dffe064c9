"""The server's KEP-1693 warning recorder: encoding, de-duplication, size limits, round trips."""

from __future__ import annotations

import contextvars
import logging

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kapi import request
from kapi import warning as recorder_module
from kapi.apimachinery.warningheader import (
    WarningHeader,
    new_warning_header,
    parse_warning_headers,
)
from kapi.warning import (
    TRUNCATE_AT_TOTAL_RUNES,
    TRUNCATE_ITEM_RUNES,
    WarningRecorder,
)


def written(recorder: WarningRecorder) -> list[str]:
    """The header values as text, as a client would see them on the wire."""
    return [value.decode() for name, value in recorder.headers() if name == b"warning"]


def texts(recorder: WarningRecorder) -> list[str]:
    """What a client parses back out of the recorder's headers."""
    parsed, errors = parse_warning_headers(value for _, value in recorder.headers())
    assert errors == []
    return [warning.text for warning in parsed]


def record(*items: str) -> WarningRecorder:
    recorder = WarningRecorder()
    for text in items:
        recorder.add_warning(text)
    return recorder


# -- encoding -----------------------------------------------------------------------------


def test_header_is_code_299_agent_dash_and_quoted_text() -> None:
    recorder = record("policy/v1beta1 PodDisruptionBudget is deprecated")
    assert recorder.headers() == [
        (b"warning", b'299 - "policy/v1beta1 PodDisruptionBudget is deprecated"')
    ]
    # Each call is a fresh list: the handler chain appends audit-id to what it gets.
    recorder.headers().append((b"audit-id", b"x"))
    assert len(recorder.headers()) == 1


def test_quotes_and_backslashes_are_escaped_and_nothing_else() -> None:
    recorder = record('unknown field "spec.x"', "path C:\\tmp", "it's <ok> & {fine}; a,b")
    assert written(recorder) == [
        '299 - "unknown field \\"spec.x\\""',
        '299 - "path C:\\\\tmp"',
        '299 - "it\'s <ok> & {fine}; a,b"',
    ]


def test_non_ascii_text_goes_on_the_wire_as_utf8() -> None:
    recorder = record("Iñtërnâtiônàlizætiøn ☃ 𝄞")
    assert recorder.headers() == [
        (b"warning", '299 - "Iñtërnâtiônàlizætiøn ☃ 𝄞"'.encode()),
    ]


def test_agent_is_written_when_given_and_refused_when_not_a_token() -> None:
    recorder = WarningRecorder()
    recorder.add_warning("a", agent="my-agent")
    recorder.add_warning("b", agent="my agent")
    recorder.add_warning("c", agent='say"')
    recorder.add_warning("d", agent="back\\slash")
    recorder.add_warning("e", agent="tab\tagent")
    assert written(recorder) == ['299 my-agent "a"']


@pytest.mark.parametrize(
    "text",
    [
        "line\nbreak",
        "carriage\rreturn",
        "tab\there",  # Go's unicode.IsControl includes TAB: upstream refuses it too
        "nul\x00",
        "del\x7f",
        "c1 \x85 next line",
        "c1 \x9f",
        "escape \x1b[31m",
        "lone surrogate \udc80",  # invalid UTF-8 (a bad byte kept by surrogateescape)
    ],
)
def test_text_with_control_characters_or_bad_utf8_is_dropped_not_repaired(text: str) -> None:
    recorder = record(text, "kept")
    assert written(recorder) == ['299 - "kept"']
    assert recorder.texts == [text, "kept"]


def test_unicode_separators_are_not_control_characters() -> None:
    # U+2028 and U+00A0 are Zl / Zs, not Cc: upstream writes them as they are.
    assert texts(record("a\u2028b\xa0c")) == ["a\u2028b\xa0c"]


def test_new_warning_header_validates_code() -> None:
    assert new_warning_header(7, "", "x") == b'007 - "x"'
    assert new_warning_header(1000, "", "x") is None
    assert new_warning_header(-1, "", "x") is None


# -- de-duplication and helpers -----------------------------------------------------------


def test_empty_text_is_ignored() -> None:
    assert record("", "").headers() == []


def test_duplicates_are_written_once_in_first_added_order() -> None:
    recorder = record("b", "a", "b", "a", "c")
    recorder.add_warning("a", agent="other-agent")
    assert written(recorder) == ['299 - "b"', '299 - "a"', '299 - "c"']


def test_request_helpers_reach_the_current_requests_recorder() -> None:
    context = request.RequestContext(request.RequestInfo(is_resource_request=True, path="/x"))

    def serve() -> None:
        request.bind(context)
        request.add_warning("deprecated")
        request.add_warning("spec.template[app]: is ignored")
        request.current().add_warning("metadata.name: is long")
        request.current().add_warning("deprecated")

    contextvars.copy_context().run(serve)
    assert written(context.warning_recorder) == [
        '299 - "deprecated"',
        '299 - "spec.template[app]: is ignored"',
        '299 - "metadata.name: is long"',
    ]
    assert context.warnings == [
        "deprecated",
        "spec.template[app]: is ignored",
        "metadata.name: is long",
    ]


def test_warnings_outside_a_request_are_dropped_quietly(caplog: pytest.LogCaptureFixture) -> None:
    served = request.RequestContext(request.RequestInfo(is_resource_request=True, path="/x"))

    def serve() -> None:
        request.bind(served)
        request.add_warning("for the client")

    def background() -> list[str]:
        """A controller's work: no request is bound."""
        request.add_warning("nobody listens")
        return request.current().warnings

    contextvars.copy_context().run(serve)
    with caplog.at_level(logging.DEBUG, logger="kapi"):
        kept = contextvars.copy_context().run(background)
    assert kept == []
    assert served.warnings == ["for the client"]
    assert caplog.records == []


# -- the 4096-rune budget and 256-rune truncation -----------------------------------------


def test_limits_are_upstreams() -> None:
    assert (TRUNCATE_AT_TOTAL_RUNES, TRUNCATE_ITEM_RUNES) == (4096, 256)


def test_exactly_the_budget_is_written_whole() -> None:
    long = "x" * TRUNCATE_AT_TOTAL_RUNES
    assert texts(record(long)) == [long]


def test_one_rune_over_the_budget_truncates_to_256_without_ellipsis() -> None:
    assert texts(record("x" * (TRUNCATE_AT_TOTAL_RUNES + 1))) == ["x" * 256]


def test_many_warnings_filling_the_budget_exactly_stay_whole() -> None:
    items = [f"{i:02d}" + "w" * 254 for i in range(16)]  # 16 x 256 = 4096
    assert texts(record(*items)) == items


def test_the_warning_that_overflows_truncates_every_warning_so_far() -> None:
    first = "a" * 4000
    second = "b" * 97  # 4097 in all
    assert texts(record(first, second)) == ["a" * 256, "b" * 97]


def test_the_budget_counts_runes_not_bytes() -> None:
    two_byte = "é" * TRUNCATE_AT_TOTAL_RUNES  # 8192 bytes of UTF-8, 4096 runes
    assert texts(record(two_byte)) == [two_byte]
    four_byte = "𝄞" * (TRUNCATE_AT_TOTAL_RUNES + 1)
    assert texts(record(four_byte)) == ["𝄞" * 256]


def test_truncating_keeps_adding_until_the_budget_then_drops() -> None:
    # 17 distinct 300-rune warnings: the 14th overflows (13 x 300 = 3900 fit), all become 256.
    items = [chr(ord("A") + i) * 300 for i in range(17)]
    got = texts(record(*items))
    # 16 x 256 = 4096 reaches the budget exactly; the 17th is dropped.
    assert got == [item[:256] for item in items[:16]]
    recorder = record(*items[:15], "short", *items[15:])
    # 15 x 256 + 5 = 3845 < 4096, so the 16th (crossing to 4101) is still written; the 17th not.
    assert texts(recorder) == [item[:256] for item in items[:15]] + ["short", items[15][:256]]


def test_after_the_budget_is_reached_even_new_short_warnings_are_dropped() -> None:
    recorder = record("x" * 5000, *[f"{i}" * 256 for i in range(1, 16)])
    assert len(texts(recorder)) == 16
    recorder.add_warning("late")
    assert "late" not in texts(recorder)
    assert "late" not in recorder.texts  # dropped before it is even recorded, as upstream


def test_upstream_truncation_sequence(monkeypatch: pytest.MonkeyPatch) -> None:
    """Upstream's own TestTruncation scenario, with its budget of 25 and item limit of 5."""
    monkeypatch.setattr(recorder_module, "TRUNCATE_AT_TOTAL_RUNES", 25)
    monkeypatch.setattr(recorder_module, "TRUNCATE_ITEM_RUNES", 5)
    recorder = WarningRecorder()
    recorder.add_warning("aaaaaaaaaa")
    recorder.add_warning("aaaaaaaaaa", agent="-")
    recorder.add_warning("bb")
    recorder.add_warning("ccc")
    recorder.add_warning("Iñtërnâtiô")
    assert texts(recorder) == ["aaaaaaaaaa", "bb", "ccc", "Iñtërnâtiô"]
    recorder.add_warning("e")  # 26 > 25: truncate everything so far, 16 in all
    recorder.add_warning("ffffffffff")  # 21
    recorder.add_warning("ffffffffff")  # duplicate
    recorder.add_warning("gggggggggg")  # 26: crosses the budget, still written
    recorder.add_warning("h")  # over budget: dropped
    assert texts(recorder) == ["aaaaa", "bb", "ccc", "Iñtër", "e", "fffff", "ggggg"]


def test_truncating_repairs_long_invalid_utf8_as_upstreams_rune_slice_does() -> None:
    # Go's []rune conversion turns each bad byte into U+FFFD, but only for texts it cuts.
    bad_long = "\udcff" + "x" * 300
    recorder = record("bad \udcff short", bad_long, "y" * 4097)
    assert texts(recorder) == ["\ufffd" + "x" * 255, "y" * 256]


def test_refused_warnings_do_not_count_towards_the_budget() -> None:
    assert texts(record("bad\n" + "x" * 5000, "y" * 4096)) == ["y" * 4096]


# -- round trip: what the recorder writes, the client parser reads back --------------------

_TEXT = st.text(min_size=1, max_size=300)


@given(_TEXT)
def test_any_text_round_trips_or_is_refused(text: str) -> None:
    parsed = texts(record(text))
    refused = any(ord(ch) < 0x20 or 0x7F <= ord(ch) <= 0x9F for ch in text)
    if refused:
        assert parsed == []
    elif "=?" not in text:  # RFC 2047 encoded words are decoded by the parser, as upstream
        assert parsed == [text]
    else:
        assert len(parsed) == 1


@given(st.lists(_TEXT.filter(lambda t: t.isprintable() and "=?" not in t), max_size=30))
def test_many_texts_round_trip_in_order_within_the_budget(items: list[str]) -> None:
    distinct = list(dict.fromkeys(items))
    parsed = texts(record(*items))
    if sum(map(len, distinct)) <= TRUNCATE_AT_TOTAL_RUNES:
        assert parsed == distinct
    else:
        assert parsed == [text[:TRUNCATE_ITEM_RUNES] for text in distinct[: len(parsed)]]
        assert sum(map(len, parsed[:-1])) <= TRUNCATE_AT_TOTAL_RUNES


@given(st.text(min_size=1, max_size=50).filter(str.isprintable))
def test_parsed_warning_carries_code_and_agent(text: str) -> None:
    header = new_warning_header(299, "kapi", text.replace("=?", "=!"))
    assert header is not None
    parsed, errors = parse_warning_headers([header])
    assert errors == []
    assert parsed == [WarningHeader(299, "kapi", text.replace("=?", "=!"))]
