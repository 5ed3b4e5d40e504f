"""Recordings made by another harness: Full-Duplex-Bench's own example recordings (a real full-duplex
system, ../shared/fdb_v1_examples, CC BY-NC 4.0, used in place) imported with ``vocalbench import
--format fdb`` and measured by ``vocalbench score``. The figures FDB's scripts give on them (listed
in its LICENSE-data.txt) come back from FDB's own transcripts, and from the recordings alone (our
Silero speech segments and Whisper words)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from vocalbench.cli import main

EXAMPLES = Path(__file__).resolve().parents[2].parent / "shared" / "fdb_v1_examples"
pytestmark = pytest.mark.skipif(not EXAMPLES.is_dir(), reason=f"{EXAMPLES} is not there")


def _measured(tmp: Path, src: Path) -> dict[str, dict[str, float | None]]:
    run = tmp / "run"
    assert main(["import", "--format", "fdb", str(src), "--lang", "en", "--out", str(run), "--quiet"]) == 0
    assert main(["score", str(run), "--judge", "none", "--quiet"]) == 0
    kinds = json.loads((run / "duplex.json").read_text())["kinds"]
    return {k: {m: v["value"] for m, v in body.items() if isinstance(v, dict)} for k, body in kinds.items()}


def _silero_or_skip() -> None:
    from vocalbench.components.vad import silero_model_path

    try:
        silero_model_path()
    except (ImportError, FileNotFoundError) as exc:
        pytest.skip(f"Silero VAD missing: {exc}")


def test_fdb_figures_from_fdb_transcripts(tmp_path: Path) -> None:
    _silero_or_skip()
    got = _measured(tmp_path, EXAMPLES)
    assert got["pause"]["take_over"] == 1.0
    assert got["smooth"]["take_over"] == 1.0 and got["smooth"]["word_latency"] == pytest.approx(1.350, abs=1e-4)
    assert got["interruption"]["take_over"] == 1.0
    assert got["interruption"]["word_latency"] == pytest.approx(4.080, abs=1e-4)
    # v1.5 timing (get_timing.py): the reply's 100 ms gap at the interruption is bridged
    assert got["interruption"]["stop_latency"] == pytest.approx(0.124, abs=0.005)
    assert got["interruption"]["stop_time"] is not None
    # times read from speech: close to FDB's word timings, never before them
    assert 1.350 <= got["smooth"]["latency"] <= 1.350 + 0.06  # type: ignore[operator]
    assert 4.080 <= got["interruption"]["latency"] <= 4.080 + 0.08  # type: ignore[operator]


def _asr_or_skip() -> None:
    from vocalbench import components
    from vocalbench.components.base import ComponentUnavailable

    try:
        components.resolve("asr", "offline")
    except (ComponentUnavailable, ImportError) as exc:
        pytest.skip(f"offline ASR missing: {exc}")


def test_fdb_figures_from_the_recordings_alone(tmp_path: Path) -> None:
    _silero_or_skip()
    _asr_or_skip()
    plain = tmp_path / "recordings"
    shutil.copytree(EXAMPLES, plain, ignore=shutil.ignore_patterns("output.json", "LICENSE*"))
    got = _measured(tmp_path, plain)
    assert got["pause"]["take_over"] == 1.0 and got["smooth"]["take_over"] == 1.0
    assert got["interruption"]["take_over"] == 1.0
    assert got["smooth"]["latency"] == pytest.approx(1.350, abs=0.06)
    assert got["interruption"]["latency"] == pytest.approx(4.080, abs=0.08)
    assert got["interruption"]["stop_latency"] == pytest.approx(0.124, abs=0.005)


def test_a_folder_of_unknown_task_is_named(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    odd = tmp_path / "odd" / "1"
    odd.mkdir(parents=True)
    for name in ("input.wav", "output.wav"):
        shutil.copyfile(EXAMPLES / "smooth_turn_taking_example" / "1" / name, odd / name)
    assert main(["import", "--format", "fdb", str(tmp_path / "odd"), "--lang", "en", "--out", str(tmp_path / "run")]) != 0
    err = capsys.readouterr().err
    assert str(odd) in err and "turn_taking.json" in err
    assert not (tmp_path / "run" / "store.sqlite").exists()


def test_a_runs_replay_folders_import_again_and_measure_the_same(tmp_path: Path) -> None:
    """``RUN/duplex`` (scenarios.jsonl and <scenario>/r<k>/) is a replay-folder layout: imported as
    ``--format replays`` and scored, its speech timings are those of the run it came from."""
    _silero_or_skip()
    first = _measured(tmp_path / "a", EXAMPLES)
    again = tmp_path / "again"
    assert main(["import", "--format", "replays", str(tmp_path / "a" / "run" / "duplex"), "--lang", "en",
                 "--out", str(again), "--quiet"]) == 0
    from vocalbench.duplex.run import scenarios_of
    from vocalbench.runner.store import RunStore

    with RunStore(again) as store:
        assert sorted(scenarios_of(store)) == ["interruption-user_interruption_example-1",
                                               "pause-pause_handling_example-1", "smooth-smooth_turn_taking_example-1"]
        assert all(r.source == "imported:replays" and "transcript" not in r.extra for r in store.replies("duplex").values())
    _asr_or_skip()
    assert main(["score", str(again), "--judge", "none", "--quiet"]) == 0
    kinds = json.loads((again / "duplex.json").read_text())["kinds"]
    for kind, measure in (("smooth", "latency"), ("interruption", "stop_latency"), ("interruption", "latency")):
        assert kinds[kind][measure]["value"] == pytest.approx(first[kind][measure], abs=1e-3)
