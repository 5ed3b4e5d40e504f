"""Each injected fault reaches each network adapter as a typed, retryable error (no hangs)."""

from __future__ import annotations

import pytest

from vocalbench.systems import resolve
from vocalbench.systems.base import collect

EXPECTED = {"429": "http_429", "500": "http_500", "timeout": "timeout", "drop": "broken_stream"}


@pytest.mark.parametrize("fault", ["429", "500", "timeout", "drop"])
@pytest.mark.parametrize("kind", ["openai-audio", "realtime", "http"])
async def test_injected_fault_is_typed(kind, fault, served, script, samples):
    path = script([{"id": "*", "text": "a b c d e f", "audio": {"tone": 250, "seconds": 1.0}, "chunk_seconds": 0.1,
                    "chunk_interval": 0.01}])
    url = served(f"scripted:{path}", faults=f"{fault}:1.0", hang_seconds=30)
    spec = {"openai-audio": f"openai-audio:m@{url}/v1", "realtime": f"realtime:m@{url}/v1",
            "http": f"http:{url}/v1/vocalbench/stream"}[kind]
    system = resolve(spec)
    await system.start()
    try:
        [s] = samples(1)
        c = await collect(system, s, timeout=1.5, stall_timeout=1.0)
        assert c.error is not None and c.error.type == EXPECTED[fault], c.error
        assert c.retryable
    finally:
        await system.close()
