"""Client-side KEP-1693: parsing ``Warning`` headers, handlers, and how the clients use them."""

from __future__ import annotations

import asyncio
import io
import logging
from collections.abc import Iterator

import httpx
import pytest

from kapi.apimachinery.warningheader import (
    WarningHeader,
    parse_warning_header,
    parse_warning_headers,
)
from kapi.client import (
    AsyncClient,
    Client,
    ClientConfig,
    NotFoundError,
    NoWarnings,
    WarningHandler,
    WarningLogger,
    WarningWriter,
    get_default_warning_handler,
    set_default_warning_handler,
)

W = WarningHeader


def parse(*headers: str | bytes) -> list[WarningHeader]:
    return parse_warning_headers(headers)[0]


# -- parsing --------------------------------------------------------------------------------


def test_parses_one_warning() -> None:
    assert parse('299 - "deprecated"') == [W(299, "-", "deprecated")]


def test_parses_agent_and_ignores_a_date() -> None:
    assert parse('299 kube-apiserver "x" "Sat, 25 Aug 2012 23:34:45 GMT"') == [
        W(299, "kube-apiserver", "x")
    ]


def test_parses_several_values_per_header_and_several_headers() -> None:
    assert parse(
        '299 - "a", 299 - "b" "Sat, 25 Aug 2012 23:34:45 GMT",299 - "c"',
        '199 agent "d"',
        "",
        '299 - "e",',
    ) == [
        W(299, "-", "a"),
        W(299, "-", "b"),
        W(299, "-", "c"),
        W(199, "agent", "d"),
        W(299, "-", "e"),
    ]


def test_keeps_other_codes_for_the_handlers_to_filter() -> None:
    assert [w.code for w in parse('110 - "stale", 000 - "zero", 999 - "max"')] == [110, 0, 999]


def test_unescapes_quotes_and_backslashes_and_any_escaped_character() -> None:
    assert parse(r'299 - "say \"hi\" to C:\\tmp \x"') == [W(299, "-", 'say "hi" to C:\\tmp x')]


def test_tolerates_surrounding_whitespace() -> None:
    assert parse('   299 - "a"  ,   299 - "b"   ') == [W(299, "-", "a"), W(299, "-", "b")]


def test_reads_utf8_bytes_as_sent() -> None:
    assert parse('299 - "Iñtërnâtiôn ☃"'.encode()) == [W(299, "-", "Iñtërnâtiôn ☃")]


def test_returns_the_remainder_after_the_first_value() -> None:
    assert parse_warning_header('299 - "a" , 299 - "b"') == (W(299, "-", "a"), '299 - "b"')


@pytest.mark.parametrize(
    "header",
    [
        "garbage",
        "299 -",  # fewer than three segments
        '299  "missing agent"',  # two spaces: empty agent
        '2990 - "four digits"',
        '29a - "not digits"',
        "299 - unquoted",
        '299 - "unterminated',
        '299 - "text" "unterminated date',
        '299 - "text" junk',
        '299 - "tab\tinside"',  # control characters are refused after unescaping
        '299 - "nul\\\x00"',
        '299 ag\x01ent "control in agent"',
        "   ",
    ],
)
def test_malformed_values_raise_from_the_single_value_parser(header: str) -> None:
    with pytest.raises(ValueError, match="invalid warning header"):
        parse_warning_header(header)


def test_invalid_utf8_is_refused() -> None:
    with pytest.raises(ValueError, match="invalid text"):
        parse_warning_header(b'299 - "bad \xff byte"')
    with pytest.raises(ValueError, match="invalid agent"):
        parse_warning_header(b'299 \xc3 "bad agent"')


def test_a_malformed_value_skips_the_rest_of_its_header_only() -> None:
    warnings, errors = parse_warning_headers(
        [
            '299 - "first", 299 - "unterminated, 299 - "lost"',
            '299  "no agent", 299 - "lost too"',
            "garbage",
            '299 - "kept"',
        ]
    )
    assert warnings == [W(299, "-", "first"), W(299, "-", "kept")]
    assert len(errors) == 3


@pytest.mark.parametrize(
    ("text", "decoded"),
    [
        ("=?utf-8?q?caf=C3=A9?=", "café"),
        ("=?UTF-8?Q?a_b?=", "a b"),
        ("=?utf-8?b?Y2Fmw6k=?=", "café"),
        ("=?iso-8859-1?q?caf=E9?=", "café"),
        ("=?us-ascii?q?caf=E9?=", "caf\ufffd"),
        ("x =?utf-8?q?a?= =?utf-8?q?b?= y", "x ab y"),  # space between two words is dropped
        ("=?utf-8?q?=C3?= =?utf-8?q?=A9?=", "é"),  # a character split across words
        ("=?utf-8?x?bad?=", "=?utf-8?x?bad?="),  # unknown encoding: left as it is
        ("=?utf-8?b?not base64?=", "=?utf-8?b?not base64?="),
        ("=?koi8-r?q?abc?=", "=?koi8-r?q?abc?="),  # unknown charset: the text stays encoded
        ("a =? b", "a =? b"),
    ],
)
def test_rfc2047_encoded_text_is_decoded_as_client_go_does(text: str, decoded: str) -> None:
    assert parse(f'299 - "{text}"') == [W(299, "-", decoded)]


def test_rfc2047_text_decoding_to_control_characters_is_refused() -> None:
    assert parse('299 - "=?utf-8?q?a=0Ab?="') == []


# -- handlers -------------------------------------------------------------------------------


class Recording:
    def __init__(self) -> None:
        self.seen: list[tuple[int, str, str]] = []

    def handle_warning(self, code: int, agent: str, text: str) -> None:
        self.seen.append((code, agent, text))


@pytest.fixture(autouse=True)
def restore_default_handler() -> Iterator[None]:
    before = get_default_warning_handler()
    yield
    set_default_warning_handler(before)


def test_handlers_satisfy_the_protocol() -> None:
    for handler in (NoWarnings(), WarningLogger(), WarningWriter(io.StringIO()), Recording()):
        assert isinstance(handler, WarningHandler)


def test_process_default_is_the_logger() -> None:
    assert isinstance(get_default_warning_handler(), WarningLogger)


def test_logger_logs_code_299_warnings_only(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="kapi.client.warnings"):
        logger = WarningLogger()
        logger.handle_warning(299, "-", "deprecated")
        logger.handle_warning(199, "-", "other code")
        logger.handle_warning(299, "-", "")
    assert [(r.levelno, r.getMessage()) for r in caplog.records] == [
        (logging.WARNING, "deprecated")
    ]


def test_writer_prefixes_and_counts() -> None:
    out = io.StringIO()
    writer = WarningWriter(out)
    for text in ("a", "b", "a"):
        writer.handle_warning(299, "-", text)
    writer.handle_warning(110, "-", "not 299")
    writer.handle_warning(299, "-", "")
    assert out.getvalue() == "Warning: a\nWarning: b\nWarning: a\n"
    assert writer.count == 3


def test_writer_deduplicates_when_asked() -> None:
    out = io.StringIO()
    writer = WarningWriter(out, deduplicate=True)
    for text in ("a", "b", "a", "b", "c"):
        writer.handle_warning(299, "-", text)
    assert out.getvalue() == "Warning: a\nWarning: b\nWarning: c\n"
    assert writer.count == 3


def test_writer_colours_the_prefix_as_kubectl() -> None:
    out = io.StringIO()
    WarningWriter(out, color=True).handle_warning(299, "-", "careful")
    assert out.getvalue() == "\x1b[33;1mWarning:\x1b[0m careful\n"


def test_no_warnings_ignores_everything(
    caplog: pytest.LogCaptureFixture, capsys: pytest.CaptureFixture[str]
) -> None:
    handler = NoWarnings()
    assert isinstance(handler, WarningHandler)
    with (
        caplog.at_level(logging.DEBUG, logger="kapi"),
        client(serve('299 - "a"', '199 x "b"'), handler) as c,
    ):
        response = c.request("GET", "/api")
    # The warnings are still parsed onto the response; nothing is logged or printed.
    assert response.warnings == [W(299, "-", "a"), W(199, "x", "b")]
    assert [r for r in caplog.records if r.name.startswith("kapi")] == []
    assert capsys.readouterr() == ("", "")


# -- the clients ----------------------------------------------------------------------------


def serve(*warnings: str | bytes, status: int = 200) -> httpx.MockTransport:
    def respond(request: httpx.Request) -> httpx.Response:
        headers = [
            (b"warning", value if isinstance(value, bytes) else value.encode())
            for value in warnings
        ]
        if status >= 400:
            body = {
                "kind": "Status",
                "apiVersion": "v1",
                "status": "Failure",
                "reason": "NotFound",
                "message": "not found",
                "code": status,
            }
            return httpx.Response(status, json=body, headers=headers)
        return httpx.Response(status, json={"kind": "ConfigMap"}, headers=headers)

    return httpx.MockTransport(respond)


def client(transport: httpx.MockTransport, handler: WarningHandler | None = None) -> Client:
    config = ClientConfig("https://kapi.test:6443", namespace="ns")
    return Client(config, transport=transport, warning_handler=handler)


def test_response_carries_parsed_warnings_and_the_handler_sees_each() -> None:
    recording = Recording()
    set_default_warning_handler(recording)
    with client(serve('299 - "a", 299 - "b"', "garbage", '199 x "c"')) as c:
        response = c.request("GET", "/api/v1/namespaces/ns/configmaps")
    assert response.warnings == [W(299, "-", "a"), W(299, "-", "b"), W(199, "x", "c")]
    assert recording.seen == [(299, "-", "a"), (299, "-", "b"), (199, "x", "c")]
    assert c.last_warnings == response.warnings


def test_a_response_without_warnings_has_none() -> None:
    with client(serve()) as c:
        assert c.request("GET", "/api").warnings == []
        assert c.last_warnings == []


def test_per_client_handler_wins_over_the_process_default() -> None:
    process, own = Recording(), Recording()
    set_default_warning_handler(process)
    with client(serve('299 - "x"'), own) as c:
        c.resource("v1", "configmaps").get("cm")
    assert own.seen == [(299, "-", "x")]
    assert process.seen == []


def test_changing_the_process_default_takes_effect_for_existing_clients() -> None:
    first, second = Recording(), Recording()
    set_default_warning_handler(first)
    with client(serve('299 - "x"')) as c:
        c.resource("v1", "configmaps").get("cm")
        set_default_warning_handler(second)
        c.resource("v1", "configmaps").get("cm")
    assert first.seen == [(299, "-", "x")]
    assert second.seen == [(299, "-", "x")]


def test_resource_calls_expose_warnings_on_the_client() -> None:
    set_default_warning_handler(NoWarnings())
    with client(serve('299 - "deprecated"')) as c:
        c.resource("policy/v1beta1", "poddisruptionbudgets").list()
        assert c.last_warnings == [W(299, "-", "deprecated")]


def test_warnings_of_failed_requests_are_handled_before_the_error() -> None:
    recording = Recording()
    with client(serve('299 - "about to fail"', status=404), recording) as c:
        with pytest.raises(NotFoundError):
            c.resource("v1", "configmaps").get("missing")
        assert c.last_warnings == [W(299, "-", "about to fail")]
    assert recording.seen == [(299, "-", "about to fail")]


def test_malformed_headers_never_fail_a_request() -> None:
    recording = Recording()
    junk = serve('299 - "unterminated', b"\x00\xff", b'299 - "\xff"', "999", '299 - "ok"')
    with client(junk, recording) as c:
        assert c.request("GET", "/api").body == {"kind": "ConfigMap"}
    assert recording.seen == [(299, "-", "ok")]


def test_deduplicating_writer_across_requests() -> None:
    out = io.StringIO()
    writer = WarningWriter(out, deduplicate=True)
    with client(serve('299 - "deprecated", 299 - "other"'), writer) as c:
        for _ in range(3):
            c.resource("v1", "configmaps").get("cm")
    assert out.getvalue() == "Warning: deprecated\nWarning: other\n"
    assert writer.count == 2


def test_watch_start_warnings_are_handled() -> None:
    recording = Recording()
    transport = httpx.MockTransport(
        lambda request: httpx.Response(200, content=b"", headers={"warning": '299 - "watch"'})
    )
    with client(transport, recording) as c:
        assert list(c.resource("v1", "configmaps").watch()) == []
    assert recording.seen == [(299, "-", "watch")]


def test_async_client_handles_warnings_the_same_way() -> None:
    own = Recording()

    async def main() -> list[WarningHeader]:
        config = ClientConfig("https://kapi.test:6443", namespace="ns")
        async with AsyncClient(config, transport=serve('299 - "async"'), warning_handler=own) as c:
            response = await c.request("GET", "/api")
            await c.resource("v1", "configmaps").get("cm")
            assert c.last_warnings == [W(299, "-", "async")]
            return response.warnings

    assert asyncio.run(main()) == [W(299, "-", "async")]
    assert own.seen == [(299, "-", "async")] * 2
