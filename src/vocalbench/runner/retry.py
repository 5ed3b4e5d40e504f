"""Bounded retries with exponential backoff and full jitter.

What is retried is decided by :func:`vocalbench.systems.failures.classify` (rate limits, server
errors, timeouts, connection failures and broken streams); everything else fails at once. The final error is always returned to the caller
with its type, message and the number of attempts: nothing is swallowed.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from vocalbench.systems.base import Collected


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
