"""``tests.helpers.wait.eventually``: the one way tests wait for background work."""

from __future__ import annotations

import pytest

from tests.helpers.wait import eventually


def test_returns_the_first_truthy_value_of_the_probe() -> None:
    answers = iter([None, 0, "", [], {"ready": True}, "never asked"])
    asked: list[object] = []

    def probe() -> object:
        asked.append(answer := next(answers))
        return answer

    assert eventually(probe, what="readiness", interval=0) == {"ready": True}
    assert asked == [None, 0, "", [], {"ready": True}]


def test_times_out_with_what_was_awaited_and_the_last_value() -> None:
    with pytest.raises(AssertionError) as raised:
        eventually(lambda: [], what="the list to fill", timeout=0, details=lambda: "log: empty")
    assert str(raised.value) == (
        "timed out after 0s waiting for the list to fill; last probe: []\nlog: empty"
    )


def test_an_exception_of_the_probe_ends_the_wait_at_once() -> None:
    calls = 0

    def probe() -> bool:
        nonlocal calls
        calls += 1
        raise RuntimeError("the process died")

    with pytest.raises(RuntimeError, match="the process died"):
        eventually(probe, what="anything", timeout=60)
    assert calls == 1
