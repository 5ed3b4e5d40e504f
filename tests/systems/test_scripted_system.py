"""The scripted system on its own: replies, real audio chunks, schedule and faults."""

from __future__ import annotations

import pytest

from vocalbench.systems import resolve
from vocalbench.systems.base import collect
from vocalbench.systems.scripted import ScriptedSystem


async def test_reply_text_audio_and_schedule(script, samples):
    path = script([{"id": "*", "text": "You asked {question} with {turns} turns.", "audio": {"tone": 440, "seconds": 1.0},
                    "first_chunk_delay": 0.15, "chunk_seconds": 0.25, "chunk_interval": 0.05}])
    system = resolve(f"scripted:{path}")
    await system.start()
    [s] = samples(1, history=2)
    c = await collect(system, s)
    assert c.error is None
    assert c.text == "You asked question 0 with 2 turns."
    assert c.sample_rate == 24000 and c.chunks == 4
    assert c.audio_duration == pytest.approx(1.0)
    assert float(abs(c.audio).max()) > 0.2  # a real tone, not silence
    t = c.timings
    assert t.origin == "monotonic:scripted:request"
    assert t.first_audio >= 0.15 and t.last_chunk > t.first_audio and t.last_chunk >= 0.29  # 0.15 + 3 x 0.05
    assert t.first_text <= t.first_audio


async def test_match_order_and_wav_audio(tmp_path, script, samples):
    import numpy as np

    from vocalbench.audio import write

    t = np.arange(8000) / 16000  # a real 0.5 s tone at 16 kHz
    write(tmp_path / "reply.wav", (0.2 * np.sin(2 * np.pi * 330 * t)).astype(np.float32), 16000)
    path = script([{"id": "*", "text": "default"},
                   {"id": "single_round-001", "text": "by id", "audio": {"wav": "reply.wav"}, "sample_rate": 16000},
                   {"id": "single_round/single_round-002", "text": "by key", "audio": {"silence": 0.3}}])
    system = ScriptedSystem(path)
    await system.start()
    s0, s1, s2 = samples(3)
    assert (await collect(system, s0)).text == "default"
    c1 = await collect(system, s1)
    assert c1.text == "by id" and c1.sample_rate == 16000 and c1.audio_duration == pytest.approx(0.5)
    c2 = await collect(system, s2)
    assert c2.text == "by key" and c2.audio_duration == pytest.approx(0.3) and float(abs(c2.audio).max()) == 0.0


async def test_faults_fail_first_attempts_then_succeed(script, samples):
    path = script([{"id": "*", "text": "ok", "fault": {"type": "http_503", "fail_first": 2, "message": "busy"}}])
    system = ScriptedSystem(path)
    [s] = samples(1)
    outcomes = [await collect(system, s) for _ in range(3)]
    assert [o.error.type if o.error else None for o in outcomes] == ["http_503", "http_503", None]
    assert outcomes[0].retryable and outcomes[0].error.message == "busy"
    assert outcomes[2].text == "ok"


async def test_stall_is_cut_by_the_harness_timeout(script, samples):
    path = script([{"id": "*", "fault": {"type": "stall", "fail_first": -1, "stall_seconds": 30}}])
    [s] = samples(1)
    c = await collect(ScriptedSystem(path), s, timeout=5, stall_timeout=0.3)
    assert c.error is not None and c.error.type == "timeout" and c.retryable


async def test_drop_breaks_the_stream_midway(script, samples):
    path = script([{"id": "*", "text": "a b c d", "fault": {"type": "drop", "fail_first": -1}}])
    [s] = samples(1)
    c = await collect(ScriptedSystem(path), s)
    assert c.error is not None and c.error.type == "broken_stream" and c.retryable
    assert c.chunks >= 1  # some audio arrived before the break


def test_bad_script_lines_name_the_line(tmp_path):
    p = tmp_path / "bad.jsonl"
    p.write_text('{"id": "*", "text": "x"}\n{"id": "a", "colour": "red"}\n')
    with pytest.raises(ValueError, match=r"bad.jsonl:2.*colour"):
        ScriptedSystem(p)
    with pytest.raises(FileNotFoundError):
        ScriptedSystem(tmp_path / "missing.jsonl")


async def test_no_matching_script_is_a_recorded_failure(script, samples):
    path = script([{"id": "other", "text": "x"}])
    [s] = samples(1)
    c = await collect(ScriptedSystem(path), s)
    assert c.error is not None and c.error.type == "no_script" and not c.retryable
