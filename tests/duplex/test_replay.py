"""Real-time replay and playback alignment against the scripted realtime double.

The double is ``vocalbench serve`` of a scripted system with the energy turn detector (exact on
tones): with 32 ms VAD frames, a user turn ending at 0.96 s and 480 ms of silence, the turn ends at
1.44 s of input; a script whose first chunk comes 0.22 s after that starts the reply 0.70 s after
the user's end. Timing accuracy under load is measured in bench/duplex_jitter.py, not here.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from vocalbench.audio import first_audible, load
from vocalbench.components.vad import TurnSettings
from vocalbench.duplex.replay import replay
from vocalbench.systems.scripted import ScriptedSystem
from vocalbench.systems.serve import SystemServer

RATE = 24000
SETTINGS = TurnSettings(vad="energy", silence_duration_ms=480, prefix_padding_ms=0)


def tone(seconds: float) -> np.ndarray:
    t = np.arange(int(round(seconds * RATE))) / RATE
    return (0.3 * np.sin(2 * np.pi * 300 * t)).astype(np.float32)


def silence(seconds: float) -> np.ndarray:
    return np.zeros(int(round(seconds * RATE)), dtype=np.float32)


async def serve_script(tmp: Path, script: dict) -> tuple[SystemServer, str]:
    path = tmp / "double.jsonl"
    path.write_text(json.dumps({"id": "*", **script}) + "\n", encoding="utf-8")
    server = SystemServer(ScriptedSystem(path), turn_detection="energy")
    port = await server.start(0)
    return server, f"ws://127.0.0.1:{port}/v1/realtime?model=double"


def events(folder: Path) -> list[dict]:
    return [json.loads(line) for line in (folder / "events.jsonl").read_text(encoding="utf-8").splitlines()]


@pytest.mark.parametrize("chunk_ms", [20, 40])
async def test_reply_700_ms_after_the_user_reads_0_70(tmp_path: Path, chunk_ms: int) -> None:
    server, url = await serve_script(tmp_path, {"text": "fine thanks", "audio": {"tone": 440, "seconds": 1.0},
                                                "first_chunk_delay": 0.22, "chunk_seconds": 0.1})
    x = np.concatenate([silence(0.48), tone(0.48), silence(2.5)])
    try:
        res = await replay(url, x, tmp_path / "out", settings=SETTINGS, chunk_ms=chunk_ms)
    finally:
        await server.stop()
    assert res.error is None and res.responses == 1
    y, sr = load(tmp_path / "out" / "output.wav")
    x_in, _ = load(tmp_path / "out" / "input.wav")
    assert sr == RATE and y.size == x.size == x_in.size  # aligned: the input's length
    onset = first_audible(y, RATE) / RATE  # the reply plays 0.70 s after the user's end (0.96 s)
    assert onset - 0.96 == pytest.approx(0.70, abs=0.02)
    evs = events(tmp_path / "out")
    stopped = next(e for e in evs if e["type"] == "input_audio_buffer.speech_stopped")
    assert stopped["audio_end_ms"] == 960 and stopped["t"] == pytest.approx(1.44, abs=0.05)
    assert all(a["t"] <= b["t"] for a, b in zip(evs, evs[1:]))  # one monotonic clock
    assert len(res.send_lateness_ms) == -(-x.size // (RATE * chunk_ms // 1000))
    assert min(res.send_lateness_ms) >= 0  # never sent before its audio was "spoken"


async def test_barge_in_drops_unplayed_audio_and_truncates(tmp_path: Path) -> None:
    server, url = await serve_script(tmp_path, {"text": "a long answer", "audio": {"tone": 440, "seconds": 5.0},
                                                "first_chunk_delay": 0.22, "chunk_seconds": 0.1,
                                                "chunk_interval": 0.1})  # streamed in real time
    # the user's turn ends at 0.96 s (reply from 1.66 s), then barges in at 2.40 s
    x = np.concatenate([silence(0.48), tone(0.48), silence(1.44), tone(0.48), silence(1.6)])
    try:
        res = await replay(url, x, tmp_path / "out", settings=SETTINGS, chunk_ms=40)
    finally:
        await server.stop()
    assert res.truncations == 1 and res.cancelled >= 1
    evs = events(tmp_path / "out")
    cut = next(e for e in evs if e.get("truncated_item"))
    assert cut["type"] == "input_audio_buffer.speech_started"
    assert cut["played_ms"] == pytest.approx(780, abs=60)  # 1.66 s -> about 2.44 s
    assert any(e["type"] == "conversation.item.truncated" for e in evs)  # the server acknowledged it
    assert any(e["type"] == "response.done" and e["status"] == "cancelled" for e in evs)
    y, _ = load(tmp_path / "out" / "output.wav")
    assert y.size == x.size
    assert np.abs(y[int(1.8 * RATE):int(2.3 * RATE)]).max() > 0.1  # played before the barge-in
    # dropped after it, until the reply to the second turn (ends 2.88 s + 0.48 s + 0.22 s = 3.58 s)
    assert np.abs(y[int(2.55 * RATE):int(3.5 * RATE)]).max() == 0.0
    assert first_audible(y[int(3.5 * RATE):], RATE) / RATE + 3.5 == pytest.approx(3.58, abs=0.03)


async def test_a_reply_over_the_limits_is_cut_where_it_crosses_them(tmp_path: Path) -> None:
    from vocalbench.limits import ReplyLimits

    server, url = await serve_script(tmp_path, {"text": "a very long reply", "audio": {"tone": 440, "seconds": 3.0},
                                                "first_chunk_delay": 0.22, "chunk_seconds": 0.1})
    x = np.concatenate([silence(0.48), tone(0.48), silence(4.5)])
    try:
        await replay(url, x, tmp_path / "out", settings=SETTINGS, chunk_ms=40,
                     limits=ReplyLimits(audio_seconds=1.0))
    finally:
        await server.stop()
    evs = events(tmp_path / "out")
    assert any(e.get("dropped") == "reply_too_large" for e in evs)
    y, _ = load(tmp_path / "out" / "output.wav")
    played = np.count_nonzero(np.abs(y) > 1e-3) / RATE
    assert 0.9 <= played <= 1.01  # the first second only, never the 3 s the system sent
