"""A duplex run that measured nothing says so (``vocalbench run --subsets duplex`` against the scripted
realtime double served by ``vocalbench serve``): every replay failed -> a non-zero exit naming the
reason; no reply speech inside any window -> a warning naming when the first audio came and the
``--tail`` that covers it; no ``--tail`` -> one from a warm-up replay's first audio, and then the
reply is heard. The scenarios are tone bursts (building spoken ones needs the TTS: not the point
here); the double replies with 2 s of a real system's speech."""

from __future__ import annotations

import json
import socket
from pathlib import Path

import numpy as np
import pytest

from vocalbench.audio import load, to_wav_bytes
from vocalbench.cli import main
from vocalbench.duplex.scenarios import Part, Scenario
from vocalbench.systems.serve import ServeProcess

RATE = 24000
SPEECH = Path(__file__).resolve().parents[2].parent / "shared" / "fdb_v1_examples" / "smooth_turn_taking_example" / "1" / "output.wav"
pytestmark = pytest.mark.skipif(not SPEECH.is_file(), reason=f"{SPEECH} is not there (a real reply's speech)")


def _scenarios(tmp: Path) -> list[Scenario]:
    x = np.zeros(int(3.0 * RATE), dtype=np.float32)
    t = np.arange(int(0.96 * RATE)) / RATE
    x[int(0.48 * RATE):int(0.48 * RATE) + t.size] = 0.3 * np.sin(2 * np.pi * 300 * t)
    path = tmp / "smooth-001.wav"
    path.write_bytes(to_wav_bytes(x, RATE))
    return [Scenario("smooth-001", "smooth", "en", str(path), 3.0, [Part("tone", 0.48, 1.44, "tone", 0.0, True)], 1.44,
                     None)]


@pytest.fixture
def slow_double(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """A served double that answers 2.5 s after the end of the turn, with the duplex set replaced by one
    tone scenario; yields the realtime system spec."""
    speech, _ = load(SPEECH, sample_rate=RATE)
    (tmp_path / "reply.wav").write_bytes(to_wav_bytes(speech[int(3.3 * RATE):int(5.3 * RATE)], RATE))
    script = tmp_path / "double.jsonl"
    script.write_text(json.dumps({"id": "*", "text": "a reply", "audio": {"wav": "reply.wav"},
                                  "first_chunk_delay": 2.5, "chunk_seconds": 0.1, "chunk_interval": 0.05}) + "\n")
    scenarios = _scenarios(tmp_path)
    monkeypatch.setattr("vocalbench.duplex.scenarios.ensure", lambda lang, which, progress=True: scenarios)
    return str(script)


def _run(system: str, out: Path, *extra: str) -> int:
    return main(["run", "--system", system, "--subsets", "duplex", "--data", "mini", "--lang", "en", "--out", str(out),
                 "--judge", "none", "--quiet", "--vad-silence-ms", "480", *extra])


def test_every_replay_failed_is_an_error_naming_the_reason(tmp_path: Path, slow_double: str,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    code = _run(f"realtime:double@http://127.0.0.1:{port}/v1", tmp_path / "run", "--tail", "0")
    err = capsys.readouterr().err
    assert code != 0
    assert "every replay failed" in err and "1 of 1" in err and "Connect" in err, err
    assert not (tmp_path / "run" / "duplex.json").exists()
    # without --tail the warm-up is the first to fail, and says so
    assert _run(f"realtime:double@http://127.0.0.1:{port}/v1", tmp_path / "run2") != 0
    assert "warm-up replay failed" in capsys.readouterr().err


def test_no_speech_in_any_window_warns_and_the_warm_up_tail_covers_it(tmp_path: Path, slow_double: str,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    with ServeProcess(f"scripted:{slow_double}", extra_args=["--turn-detection", "energy"]) as url:
        system = f"realtime:double@{url}/v1"
        assert _run(system, tmp_path / "short", "--tail", "0") == 0
        err = capsys.readouterr().err
        assert "smooth: no reply speech fell inside any replay's window" in err and "--tail" in err, err
        short = json.loads((tmp_path / "short" / "duplex.json").read_text())["kinds"]["smooth"]
        assert short["latency"]["n"] == 0 and short["ttfa_p50"]["n"] == 0

        assert _run(system, tmp_path / "auto") == 0  # no --tail: the warm-up measures the reply's delay
        err = capsys.readouterr().err
        before = (tmp_path / "auto" / "store.sqlite").read_bytes()
        assert _run(system, tmp_path / "auto") == 0  # resumed: the tail is the run's, nothing replayed again
        assert "warm-up" not in capsys.readouterr().err
        from vocalbench.runner.store import RunStore

        with RunStore(tmp_path / "auto") as store:
            [reply] = store.replies("duplex").values()
            assert reply.extra["replay"]["first_audio"] is not None and len(before) > 0
            assert store.counts()["replies"] == 1
    assert "warm-up (smooth-001): first audio" in err and "no reply speech" not in err, err
    record = json.loads((tmp_path / "auto" / "config.json").read_text())["duplex"]
    assert record["warmup"]["first_audio_s"] == pytest.approx(2.5 + 0.48, abs=0.5)  # + the server's 480 ms silence
    assert record["tail_s"] > 0
    smooth = json.loads((tmp_path / "auto" / "duplex.json").read_text())["kinds"]["smooth"]
    assert smooth["take_over"]["value"] == 1.0 and smooth["latency"]["n"] == 1
    assert smooth["latency"]["value"] == pytest.approx(record["warmup"]["first_audio_s"], abs=0.4)
