"""Retry policy and error classification."""

from __future__ import annotations

import asyncio
import random

import httpx
import openai
import pytest

from vocalbench.records import ErrorInfo
from vocalbench.runner.retry import RetryPolicy, with_retries
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
