"""Retry policy and error classification."""

from __future__ import annotations

import asyncio
import random

import httpx
import openai
import pytest

from vocalbench.records import ErrorInfo
from vocalbench.retry import RetryPolicy, with_retries
from vocalbench.systems.base import Collected, SystemFailure
from vocalbench.systems.failures import classify


def _status_error(code: int, headers: dict[str, str] | None = None) -> openai.APIStatusError:
    req = httpx.Request("POST", "http://127.0.0.1/v1/chat/completions")
    resp = httpx.Response(code, request=req, headers=headers or {})
    return openai.APIStatusError(f"status {code}", response=resp, body=None)


@pytest.mark.parametrize("exc, kind, retryable", [
    (_status_error(429, {"retry-after": "2"}), "http_429", True),
    (_status_error(503), "http_503", True),
    (_status_error(400), "http_400", False),
    (TimeoutError(), "timeout", True),
    (httpx.RemoteProtocolError("peer closed"), "broken_stream", True),
    (httpx.ConnectError("refused"), "connection", True),
    (SystemFailure("asr_error", "bad", retryable=False), "asr_error", False),
    (KeyError("x"), "KeyError", False),
])
def test_classify(exc, kind, retryable):
    k, r, _ = classify(exc)
    assert (k, r) == (kind, retryable)


def test_retry_after_is_honoured_and_backoff_grows():
    assert classify(_status_error(429, {"retry-after": "2"}))[2] == 2.0
    p, rng = RetryPolicy(base_delay=0.5, max_delay=4), random.Random(0)
    for attempt, cap in [(1, 0.5), (2, 1.0), (3, 2.0), (5, 4.0)]:
        d = [p.delay(attempt, rng) for _ in range(200)]
        assert cap / 2 <= min(d) and max(d) <= cap
    assert p.delay(1, rng, retry_after=3.0) == 3.0
    assert p.delay(1, rng, retry_after=60.0) == 4.0  # bounded by max_delay


async def test_with_retries_is_bounded_and_keeps_the_last_error():
    calls = []

    async def failing() -> Collected:
        calls.append(1)
        return Collected(error=ErrorInfo(type="http_500", message=f"try {len(calls)}"), retryable=True)

    retried = []
    c, n = await with_retries(failing, RetryPolicy(max_attempts=3, base_delay=0.001), random.Random(0),
                              lambda i, _: retried.append(i))
    assert n == 3 and len(calls) == 3 and retried == [1, 2]
    assert c.error == ErrorInfo(type="http_500", message="try 3")


async def test_permanent_errors_are_not_retried():
    calls = []

    async def bad() -> Collected:
        calls.append(1)
        return Collected(error=ErrorInfo(type="http_400", message="no"), retryable=False)

    c, n = await with_retries(bad, RetryPolicy(max_attempts=5), random.Random(0))
    assert n == 1 and calls == [1] and c.error.type == "http_400"


async def test_named_limits_bound_concurrency():
    from vocalbench.concurrency import concurrency

    active, peak = 0, 0

    async def job() -> None:
        nonlocal active, peak
        async with concurrency("endpoint:test", 3):
            active += 1
            peak = max(peak, active)
            await asyncio.sleep(0.01)
            active -= 1

    await asyncio.gather(*(job() for _ in range(20)))
    assert peak == 3


@pytest.mark.parametrize("exc", [_status_error(429), _status_error(409), _status_error(503), _status_error(400),
                                 TimeoutError(), httpx.ConnectError("refused"), httpx.RemoteProtocolError("closed"),
                                 ConnectionResetError(), KeyError("x"), ValueError("bad json")])
def test_systems_judges_and_components_classify_alike(exc: BaseException) -> None:
    """One classification: the systems' adapters, the judges and the chat components retry the same failures."""
    from vocalbench.components.llm import is_transient
    from vocalbench.retry import classify as shared

    assert classify(exc) == shared(exc) and is_transient(exc) == shared(exc).retryable


async def test_a_call_is_retried_with_jitter_until_it_answers(monkeypatch: pytest.MonkeyPatch) -> None:
    from vocalbench.retry import Deadline, call_with_retries

    waits: list[float] = []

    async def no_wait(seconds: float) -> None:
        waits.append(seconds)

    monkeypatch.setattr(asyncio, "sleep", no_wait)
    answers = iter([_status_error(503), _status_error(429, {"retry-after": "3"}), "ok"])

    async def call(deadline: Deadline) -> str:
        got = next(answers)
        if isinstance(got, BaseException):
            raise got
        return got

    policy = RetryPolicy(max_attempts=4, base_delay=1.0, max_delay=8.0)
    assert await call_with_retries(call, policy, Deadline(), random.Random(0)) == "ok"
    assert 0.5 <= waits[0] <= 1.0 and waits[1] == 3.0  # full jitter, then the server's Retry-After


async def test_permanent_errors_and_the_last_error_reach_the_caller(monkeypatch: pytest.MonkeyPatch) -> None:
    from vocalbench.retry import Deadline, call_with_retries

    calls: list[int] = []

    async def bad(deadline: Deadline) -> str:
        calls.append(1)
        raise _status_error(400)

    async def down(deadline: Deadline) -> str:
        calls.append(1)
        raise _status_error(503)

    policy = RetryPolicy(max_attempts=3, base_delay=0.001)
    with pytest.raises(openai.APIStatusError, match="400"):
        await call_with_retries(bad, policy, Deadline())
    assert calls == [1]
    with pytest.raises(openai.APIStatusError, match="503"):
        await call_with_retries(down, policy, Deadline())
    assert len(calls) == 4  # 1 + the 3 attempts


async def test_the_deadline_bounds_attempts_and_waits_together(monkeypatch: pytest.MonkeyPatch) -> None:
    from vocalbench.retry import Deadline, call_with_retries

    async def slow_failure(deadline: Deadline) -> str:
        deadline.spent += 4.0  # what the attempt measured
        raise TimeoutError("endpoint timed out")

    waits: list[float] = []

    async def no_wait(seconds: float) -> None:
        waits.append(seconds)

    monkeypatch.setattr(asyncio, "sleep", no_wait)
    deadline = Deadline(10.0)
    with pytest.raises(TimeoutError, match="no result within 10 s"):
        await call_with_retries(slow_failure, RetryPolicy(max_attempts=10, base_delay=4.0, max_delay=4.0), deadline,
                                random.Random(1))
    # 4 s, a wait of 2-4 s, 4 s: the deadline passed, so no third attempt and no second wait
    assert deadline.passed and len(waits) == 1 and 2.0 <= waits[0] <= 4.0
