"""The offline cascade held in a Ray actor (models loaded once, in the actor), driven by
`vocalbench generate --executor ray`. Slow: real models on CPU."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from release import make_release

from vocalbench.config import cache_dir
from vocalbench.runner.store import RunStore

pytestmark = pytest.mark.slow


def test_offline_cascade_in_a_ray_actor(tmp_path):
    pytest.importorskip("ray")
    from vocalbench import components, registry
    from vocalbench.audio import write
    from vocalbench.components.base import ComponentUnavailable

    if registry.get("system", "offline").missing():
        pytest.skip("offline system not installed: pip install 'vocalbench[offline]'")
    try:
        tts = components.resolve("tts", "offline")
    except (ComponentUnavailable, registry.MissingDependency) as exc:
        pytest.skip(f"offline models not assembled: {exc}")
    rel = make_release(tmp_path / "rel", 1)
    x, sr = tts.synthesize("What is the capital of France?", "en")
    write(rel / "audio" / "knowledge" / "0000.wav", x, sr)
    out = tmp_path / "run"
    env = {**os.environ, "VOCALBENCH_CACHE": str(cache_dir())}  # the models' cache, explicit for Ray workers
    r = subprocess.run([sys.executable, "-m", "vocalbench.cli", "generate", "--system", "offline", "--data", str(rel),
                        "--lang", "en", "--out", str(out), "--executor", "ray", "--max-reply-tokens", "48", "--quiet"],
                       capture_output=True, text=True, timeout=900, check=False, env=env)
    assert r.returncode == 0, r.stderr
    with RunStore(out) as store:
        [reply] = store.replies().values()
    assert reply.error is None and "paris" in (reply.text or "").lower()
    assert reply.audio is not None and reply.audio_duration > 0.5
    assert reply.timings.origin == "monotonic:audio-handed-to-cascade"
    details = json.loads((out / "config.json").read_text())["system_details"]
    assert details["executor"] == "ray" and details["system"]["asr"].startswith("faster-whisper")

