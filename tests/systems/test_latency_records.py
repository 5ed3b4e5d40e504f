"""Latency records: a served scripted system with a configured first-chunk delay.

Only origin, ordering and consistency are asserted; accuracy is measured in bench/runner_bench.py.
"""

from __future__ import annotations

import pytest

from vocalbench.run_config import RunConfig
from vocalbench.runner.generate import LocalExecutor, generate
from vocalbench.runner.store import RunStore
from vocalbench.systems import resolve

DELAY = 0.3


@pytest.mark.parametrize("kind", ["openai-audio", "realtime", "http"])
async def test_fcl_and_rtf_records(kind, tmp_path, served, script, samples):
    path = script([{"id": "*", "text": "timed reply", "audio": {"tone": 250, "seconds": 2.0},
                    "first_text_delay": 0.1, "first_chunk_delay": DELAY, "chunk_seconds": 0.5, "chunk_interval": 0.1}])
    url = served(f"scripted:{path}")
    spec = {"openai-audio": f"openai-audio:m@{url}/v1", "realtime": f"realtime:m@{url}/v1",
            "http": f"http:{url}/v1/vocalbench/stream"}[kind]
    items = samples(3)
    cfg = RunConfig(quiet=True, concurrency=3)
    with RunStore(tmp_path / "run") as store:
        store.add_samples(items)
        res = await generate(store, items, cfg, LocalExecutor(resolve(spec), cfg), progress=False)
        assert res.succeeded == 3 and res.warmup["ok"]
        for r in store.replies().values():
            t = r.timings
            assert t.origin.startswith("monotonic:")
            assert t.request_sent == 0.0
            assert t.first_text < t.first_audio <= t.last_chunk  # text was scripted 0.2 s ahead of audio
            assert t.fcl_ms >= DELAY * 1000  # the harness can never see audio before it was sent
            assert t.last_chunk >= DELAY + 3 * 0.1
            assert r.audio_duration == pytest.approx(2.0, abs=1e-3)
            assert r.rtf == pytest.approx(t.last_chunk / r.audio_duration)
            assert r.extra["audio_chunks"] == 4
