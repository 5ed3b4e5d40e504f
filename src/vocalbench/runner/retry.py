"""Bounded retries with exponential backoff and full jitter, and error classification.

Retried: rate limits (429), server errors (5xx), timeouts, connection failures and broken
streams. Everything else fails at once. The final error is always returned to the caller
with its type, message and the number of attempts: nothing is swallowed.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from vocalbench.systems.base import Collected, SystemFailure


@dataclass(frozen=True)
class RetryPolicy:
    max_attempts: int = 4
    base_delay: float = 0.5
    max_delay: float = 20.0

    def delay(self, attempt: int, rng: random.Random, retry_after: float | None = None) -> float:
        """Full-jitter backoff for the wait after failed ``attempt`` (1-based); honours Retry-After."""
        cap = min(self.max_delay, self.base_delay * (2 ** (attempt - 1)))
        d = rng.uniform(cap / 2, cap)
        if retry_after is not None:
            d = max(d, min(retry_after, self.max_delay))
        return d


def classify(exc: BaseException) -> tuple[str, bool, float | None]:
    """(error type, retryable, retry-after seconds) of an exception raised by an adapter."""
    if isinstance(exc, SystemFailure):
        return exc.type, exc.retryable, exc.retry_after
    if isinstance(exc, TimeoutError):
        return "timeout", True, None
    from vocalbench.audio import AudioError

    if isinstance(exc, AudioError):  # the query audio itself is unusable: retrying cannot help
        return "bad_query_audio", False, None
    try:
        import openai
    except ImportError:  # the openai SDK is a core dependency; guard only for odd installs
        openai = None  # type: ignore[assignment]
    if openai is not None:
        if isinstance(exc, openai.APITimeoutError):
            return "timeout", True, None
        if isinstance(exc, openai.APIConnectionError):
            return "connection", True, None
        if isinstance(exc, openai.APIStatusError):
            code = exc.status_code
            ra = retry_after(exc.response.headers.get("retry-after") if exc.response is not None else None)
            return f"http_{code}", code == 429 or code >= 500 or code == 408, ra
        if isinstance(exc, openai.APIError):  # an error event inside an SSE stream
            return "stream_error", True, None
    import httpx

    if isinstance(exc, httpx.TimeoutException):
        return "timeout", True, None
    if isinstance(exc, httpx.HTTPStatusError):
        code = exc.response.status_code
        return f"http_{code}", code == 429 or code >= 500, retry_after(exc.response.headers.get("retry-after"))
    if isinstance(exc, (httpx.RemoteProtocolError, httpx.ReadError)):
        return "broken_stream", True, None
    if isinstance(exc, httpx.TransportError):
        return "connection", True, None
    import aiohttp

    if isinstance(exc, aiohttp.ClientResponseError):
        return f"http_{exc.status}", exc.status == 429 or exc.status >= 500, None
    if isinstance(exc, (aiohttp.ClientPayloadError, aiohttp.ServerDisconnectedError)):
        return "broken_stream", True, None
    if isinstance(exc, aiohttp.ClientConnectionError):
        return "connection", True, None
    from websockets import exceptions as wsx

    if isinstance(exc, wsx.ConnectionClosed):
        return "broken_stream", True, None
    if isinstance(exc, wsx.InvalidStatus):
        code = exc.response.status_code
        return f"http_{code}", code == 429 or code >= 500, None
    if isinstance(exc, wsx.WebSocketException):
        return "websocket", True, None
    if isinstance(exc, (ConnectionError, OSError)):
        return "connection", True, None
    return type(exc).__name__, False, None


def retry_after(value: str | None) -> float | None:
    """Seconds of a ``Retry-After`` header value (None when absent or not a number)."""
    try:
        return None if value is None else max(0.0, float(value))
    except ValueError:
        return None


async def with_retries(
    attempt: Callable[[], Awaitable[Collected]],
    policy: RetryPolicy,
    rng: random.Random,
    on_retry: Callable[[int, Collected], None] | None = None,
) -> tuple[Collected, int]:
    """Call ``attempt`` until it succeeds, fails permanently or attempts run out.

    Returns the last outcome (successful or carrying the final error) and the attempt count.
    """
    n = 0
    while True:
        n += 1
        result = await attempt()
        if result.error is None or not result.retryable or n >= policy.max_attempts:
            return result, n
        if on_retry is not None:
            on_retry(n, result)
        await asyncio.sleep(policy.delay(n, rng, result.retry_after))
