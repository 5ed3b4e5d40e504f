"""The duplex replay under faults of a realtime session (``serve --faults`` with server-side turn
detection, against the scripted double): every replay ends within its bound, with a named reason
when it could not measure and with what it recorded written; the suite goes on, and a resume
replays only the failed ones."""

from __future__ import annotations

import json
import random
import time
from pathlib import Path

import numpy as np
import pytest

from vocalbench.audio import load, write
from vocalbench.components.vad import TurnSettings
from vocalbench.duplex.replay import CLOSE_TIMEOUT, PING_TIMEOUT, ReplayFailed, replay
from vocalbench.systems.scripted import ScriptedSystem
from vocalbench.systems.serve import FaultPlan, SystemServer

RATE = 24000
SETTINGS = TurnSettings(vad="energy", silence_duration_ms=480, prefix_padding_ms=0)
GRACE = 1.0
REPLY = {"id": "*", "text": "fine thanks", "audio": {"tone": 440, "seconds": 1.0}, "first_chunk_delay": 0.22,
         "chunk_seconds": 0.1}


def turn() -> np.ndarray:
    """0.48 s of silence, a 0.48 s user turn, 2.5 s of silence: one reply at about 1.66 s."""
    t = np.arange(int(0.48 * RATE)) / RATE
    tone = (0.3 * np.sin(2 * np.pi * 300 * t)).astype(np.float32)
    return np.concatenate([np.zeros(tone.size, np.float32), tone, np.zeros(int(2.5 * RATE), np.float32)])


async def serve(tmp: Path, faults: str | None, seed: int = 0) -> tuple[SystemServer, str]:
    path = tmp / "double.jsonl"
    path.write_text(json.dumps(REPLY) + "\n", encoding="utf-8")
    plan = FaultPlan.parse(faults)
    server = SystemServer(ScriptedSystem(path), FaultPlan(plan.rates, hang_seconds=60.0), seed,
                          turn_detection="energy")
    port = await server.start(0)
    return server, f"ws://127.0.0.1:{port}/v1/realtime?model=double"


def events(folder: Path) -> list[dict]:
    return [json.loads(line) for line in (folder / "events.jsonl").read_text(encoding="utf-8").splitlines()]


@pytest.mark.parametrize(("fault", "reason"), [("drop", "connection_closed"), ("malformed", "malformed_event"),
                                               ("timeout", "stalled")])
async def test_a_broken_session_ends_in_bounded_time_with_a_named_reason(tmp_path: Path, fault: str,
                                                                         reason: str) -> None:
    server, url = await serve(tmp_path, f"{fault}:1.0")
    x = turn()
    t0 = time.monotonic()
    try:
        with pytest.raises(ReplayFailed) as failed:
            await replay(url, x, tmp_path / "out", settings=SETTINGS, grace=GRACE)
    finally:
        await server.stop()
    elapsed = time.monotonic() - t0
    assert failed.value.type == reason, failed.value
    assert elapsed < x.size / RATE + GRACE + PING_TIMEOUT + CLOSE_TIMEOUT + 2.0
    # what was recorded up to the fault is written, on the input's timeline
    y, _ = load(tmp_path / "out" / "output.wav")
    assert y.size == x.size
    kinds = [e["type"] for e in events(tmp_path / "out")]
    if fault == "timeout":  # set up, then silent
        assert kinds == []
    else:  # the session got as far as the reply
        assert "input_audio_buffer.speech_stopped" in kinds and "response.created" in kinds


async def test_unknown_events_are_kept_and_change_no_measure(tmp_path: Path) -> None:
    measured = {}
    for fault in (None, "unknown:1.0"):
        server, url = await serve(tmp_path, fault)
        try:
            measured[fault] = await replay(url, turn(), tmp_path / str(fault), settings=SETTINGS, grace=GRACE)
        finally:
            await server.stop()
    clean, odd = measured[None], measured["unknown:1.0"]
    assert odd.error is None and odd.responses == clean.responses == 1 and odd.unfinished_responses == 0
    assert odd.first_audio == pytest.approx(clean.first_audio, abs=0.05)
    assert any(e["type"] == "vocalbench.fault.unknown_event" for e in events(tmp_path / "unknown:1.0"))


@pytest.mark.parametrize("fault", ["overlong", "endless"])
async def test_reply_audio_beyond_the_input_or_without_end_is_cut_at_the_replays_end(tmp_path: Path,
                                                                                     fault: str) -> None:
    server, url = await serve(tmp_path, f"{fault}:1.0")
    x = turn()
    t0 = time.monotonic()
    try:
        res = await replay(url, x, tmp_path / "out", settings=SETTINGS, grace=GRACE)
    finally:
        await server.stop()
    assert time.monotonic() - t0 < x.size / RATE + GRACE + PING_TIMEOUT + CLOSE_TIMEOUT + 2.0
    y, _ = load(tmp_path / "out" / "output.wav")
    assert y.size == x.size and np.abs(y[-RATE // 10:]).max() > 0.1  # heard until the input's end, no further
    if fault == "overlong":
        assert res.beyond_input_s > 1.0 and res.unfinished_responses == 0
    else:
        assert res.unfinished_responses == 1


async def test_the_suite_goes_on_and_a_resume_replays_only_the_failed(tmp_path: Path) -> None:
    from vocalbench.duplex.records import replay_key
    from vocalbench.duplex.run import SUBSET, add_scenarios, replay_all, replay_dir
    from vocalbench.duplex.scenarios import Part, Scenario
    from vocalbench.run_config import RunConfig
    from vocalbench.runner.store import RunStore
    from vocalbench.systems import resolve

    wav = write(tmp_path / "in.wav", turn(), RATE)
    scenarios = [Scenario(f"smooth-{i:03d}", "smooth", "en", str(wav), turn().size / RATE,
                          [Part("q", 0.48, 0.96, "v", 0.0, True)], 0.96, None) for i in range(3)]
    rng = random.Random(0)
    dropped = {sc.id for sc in scenarios if rng.random() < 0.5}  # the double's draws, one per session in order
    assert 0 < len(dropped) < len(scenarios)
    cfg = RunConfig(system="realtime:double", lang="en", concurrency=1, quiet=True)
    run = tmp_path / "run"
    run.mkdir()
    kept: dict[str, int] = {}
    with RunStore(run) as store:
        add_scenarios(store, scenarios)
        for faults in ("drop:0.5", None):
            server, url = await serve(tmp_path, faults)
            try:
                system = resolve(f"realtime:double@{url.split('/v1/')[0].replace('ws://', 'http://')}/v1")
                await replay_all(system, scenarios, store, SETTINGS, 40, 1, cfg)
            finally:
                await server.stop()
            replies = store.replies(SUBSET)
            if faults:
                for sc in scenarios:
                    reply = replies[(SUBSET, replay_key(sc.id, 1))]
                    folder = replay_dir(run, sc.id, 1)
                    if sc.id in dropped:  # a named reason; what it recorded is kept until redone
                        assert reply.error is not None and reply.error.type == "connection_closed"
                        assert any(e["type"] == "response.created" for e in events(folder))
                    else:
                        assert reply.error is None
                        kept[sc.id] = (folder / "output.wav").stat().st_mtime_ns
        replies = store.replies(SUBSET)
    assert all(replies[(SUBSET, replay_key(sc.id, 1))].error is None for sc in scenarios)
    assert {sid: (replay_dir(run, sid, 1) / "output.wav").stat().st_mtime_ns for sid in kept} == kept  # not replayed


def test_a_duplex_run_that_measured_nothing_exits_4(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    """Every session of the served double is cut: the run names the reason and exits 4, as a run
    whose every sample failed; each replay's stored error names the reason. (The scenarios are the
    tone turns above, not the synthesised mini set: its build has its own test.)"""
    from vocalbench.cli import main
    from vocalbench.duplex import scenarios as built
    from vocalbench.duplex.records import replay_key
    from vocalbench.duplex.run import SUBSET
    from vocalbench.duplex.scenarios import Part, Scenario
    from vocalbench.runner.store import RunStore
    from vocalbench.systems.serve import ServeProcess

    wav = write(tmp_path / "in.wav", turn(), RATE)
    tones = [Scenario(f"smooth-{i:03d}", "smooth", "en", str(wav), turn().size / RATE,
                      [Part("q", 0.48, 0.96, "v", 0.0, True)], 0.96, None) for i in range(2)]
    monkeypatch.setattr(built, "ensure", lambda lang, which, progress=True: tones)
    script = tmp_path / "double.jsonl"
    script.write_text(json.dumps(REPLY) + "\n", encoding="utf-8")
    with ServeProcess(f"scripted:{script}", faults="drop:1.0", extra_args=["--turn-detection", "energy"]) as url:
        code = main(["run", "--subsets", "duplex", "--system", f"realtime:double@{url}/v1", "--lang", "en",
                     "--judge", "none", "--tail", "0", "--out", str(tmp_path / "run"), "--quiet"])
    assert code == 4
    err = capsys.readouterr().err
    assert "nothing was measured in en" in err and "connection_closed" in err
    with RunStore(tmp_path / "run") as store:
        replies = store.replies(SUBSET)
    for sc in tones:
        error = replies[(SUBSET, replay_key(sc.id, 1))].error
        assert error is not None and error.type == "connection_closed"
