"""Named concurrency limits (one event loop, one semaphore per resource name): the one place
where the project bounds concurrent work (systems, local models, the judge's endpoint).

``async with concurrency("endpoint:api.openai.com", 8): ...`` bounds the work on a resource
across every caller in the loop, like inspect_ai's ``concurrency()``. The first caller fixes the
limit of a name; later callers share it. Systems use it for their local models (``local:asr``,
``local:tts``, ``local:llm``), the generator for the system itself and the judge for its endpoint.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from weakref import WeakKeyDictionary

_LIMITS: WeakKeyDictionary[asyncio.AbstractEventLoop, dict[str, asyncio.Semaphore]] = WeakKeyDictionary()


def limiter(name: str, limit: int) -> asyncio.Semaphore:
    """The semaphore of resource ``name`` in the running loop (created with ``limit`` on first use)."""
    if limit < 1:
        raise ValueError(f"concurrency limit of {name} must be >= 1, got {limit}")
    loop = asyncio.get_running_loop()
    table = _LIMITS.setdefault(loop, {})
    if name not in table:
        table[name] = asyncio.Semaphore(limit)
    return table[name]


@contextlib.asynccontextmanager
async def concurrency(name: str, limit: int) -> AsyncIterator[None]:
    """Hold one slot of resource ``name`` (at most ``limit`` holders at a time)."""
    async with limiter(name, limit):
        yield

