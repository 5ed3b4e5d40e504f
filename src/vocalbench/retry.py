"""The one retry policy: bounded attempts, exponential backoff with full jitter, one classification
of failures, and an optional deadline for all attempts and the waits between them together.

:func:`classify` decides what is worth retrying for every caller (rate limits, server errors,
timeouts, connection failures and broken streams of the OpenAI SDK, httpx, aiohttp and websockets);
everything else fails at once. The systems' adapters add their own failure type
(:func:`vocalbench.systems.failures.classify`), the judges and the components use it as it is.
Two loops share the policy: :func:`with_retries` over attempts that return an outcome carrying its
error (a system's reply), :func:`call_with_retries` over calls that raise (a judge's or a
component's request). The final error always reaches the caller: nothing is swallowed.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import NamedTuple, Protocol, TypeVar


class Failure(NamedTuple):
    """What a failed attempt was: its error type, whether retrying can help, a server's Retry-After."""

    type: str
    retryable: bool
    retry_after: float | None = None


def retry_after(value: str | None) -> float | None:
    """Seconds of a ``Retry-After`` header value (None when absent or not a number)."""
    try:
        return None if value is None else max(0.0, float(value))
    except ValueError:
        return None


def _retryable_status(code: int) -> bool:
    """HTTP statuses worth another try: request timeout, conflict, rate limit, server errors."""
    return code in (408, 409, 429) or code >= 500


# (library, exception class) -> the failure it is, transient every one; a class's most specific
# entry wins (its method resolution order), so a subclass may be told apart from its base
_TRANSIENT: dict[tuple[str, str], str] = {
    ("openai", "APITimeoutError"): "timeout", ("openai", "APIConnectionError"): "connection",
    ("openai", "APIError"): "stream_error",  # an error event inside an SSE stream
    ("httpx", "TimeoutException"): "timeout", ("httpx", "RemoteProtocolError"): "broken_stream",
    ("httpx", "ReadError"): "broken_stream", ("httpx", "TransportError"): "connection",
    ("aiohttp", "ClientPayloadError"): "broken_stream", ("aiohttp", "ServerDisconnectedError"): "broken_stream",
    ("aiohttp", "ClientConnectionError"): "connection",
    ("websockets", "ConnectionClosed"): "broken_stream", ("websockets", "WebSocketException"): "websocket",
}
# the classes whose exceptions carry the HTTP status of a refused request
_STATUS = {("openai", "APIStatusError"), ("httpx", "HTTPStatusError"), ("aiohttp", "ClientResponseError"),
           ("websockets", "InvalidStatus")}


def _refused(exc: BaseException) -> Failure:
    """The failure of a request refused with an HTTP status (and maybe a Retry-After header)."""
    response = getattr(exc, "response", None)
    found = getattr(exc, "status_code", None) or getattr(exc, "status", None) or getattr(response, "status_code", 0)
    code = found if isinstance(found, int) else 0
    headers = getattr(response, "headers", None)
    return Failure(f"http_{code}", _retryable_status(code),
                   retry_after(headers.get("retry-after")) if headers is not None else None)


def classify(exc: BaseException) -> Failure:
    """The :class:`Failure` of an exception raised by a network call (OpenAI SDK, httpx, aiohttp,
    websockets; recognised by class, so none of them is imported here)."""
    if isinstance(exc, TimeoutError):
        return Failure("timeout", True)
    for cls in type(exc).__mro__:
        key = (cls.__module__.split(".")[0], cls.__name__)
        if key in _STATUS:
            return _refused(exc)
        if key in _TRANSIENT:
            return Failure(_TRANSIENT[key], True)
    if isinstance(exc, (ConnectionError, OSError)):
        return Failure("connection", True)
    return Failure(type(exc).__name__, False)


@dataclass
class Deadline:
    """Seconds spent on one task's attempts and waits, against its budget (None: no deadline).
    Time queued for a shared endpoint is not counted: callers add what they measure."""

    seconds: float | None = None
    spent: float = 0.0

    @property
    def left(self) -> float | None:
        return None if self.seconds is None else self.seconds - self.spent

    @property
    def passed(self) -> bool:
        return self.seconds is not None and self.spent >= self.seconds

    def bound(self, seconds: float) -> float:
        """A wait of ``seconds``, no longer than what is left (none once the deadline passed)."""
        left = self.left
        return seconds if left is None else max(0.0, min(seconds, left))


@dataclass(frozen=True)
class RetryPolicy:
    """``max_attempts`` tries; after failed attempt k a wait drawn uniformly from [cap/2, cap] with
    cap = min(max_delay, base_delay·2^(k-1)), at least a server's Retry-After (up to max_delay)."""

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


class Outcome(Protocol):
    """An attempt's result that carries its own error (a system's collected reply)."""

    @property
    def error(self) -> object | None: ...

    @property
    def retryable(self) -> bool: ...

    @property
    def retry_after(self) -> float | None: ...


Result = TypeVar("Result", bound=Outcome)
T = TypeVar("T")


async def with_retries(attempt: Callable[[], Awaitable[Result]], policy: RetryPolicy, rng: random.Random,
                       on_retry: Callable[[int, Result], None] | None = None) -> tuple[Result, int]:
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


async def call_with_retries(call: Callable[[Deadline], Awaitable[T]], policy: RetryPolicy, deadline: Deadline,
                            rng: random.Random | None = None) -> T:
    """``call`` (given the deadline, to bound its own wait and add the seconds it spends) until it
    returns, raises what :func:`classify` calls permanent, or attempts or the deadline run out
    (then the last error is raised; a deadline passed before another attempt is a ``TimeoutError``)."""
    rng = rng or random.Random()
    for n in range(1, policy.max_attempts + 1):
        if deadline.passed:
            raise TimeoutError(f"no result within {deadline.seconds:g} s")
        try:
            return await call(deadline)
        except Exception as exc:
            failure = classify(exc)
            if not failure.retryable or n == policy.max_attempts:
                raise
            if deadline.passed:
                raise TimeoutError(f"no result within {deadline.seconds:g} s") from exc
            pause = deadline.bound(policy.delay(n, rng, failure.retry_after))
            await asyncio.sleep(pause)
            deadline.spent += pause
    raise AssertionError("unreachable")
