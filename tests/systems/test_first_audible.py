"""First audible audio (FAA): leading silence is not an answer.

The scripted system streams a reply whose first chunk arrives after 50 ms and starts with 400 ms of
silence; FCL stays about 50 ms and FAA about 450 ms. The playback model and the silence threshold
are checked on constructed arrivals and levels.
"""

from __future__ import annotations

import numpy as np
import pytest

from vocalbench.audio import first_audible
from vocalbench.records import Reply, Timings
from vocalbench.run_config import RunConfig
from vocalbench.runner.generate import LocalExecutor, generate
from vocalbench.runner.store import RunStore
from vocalbench.scoring.subsets.latency import aggregate_latency
from vocalbench.systems import resolve
from vocalbench.systems.base import heard_at

SR = 24000


async def test_leading_silence_counts_in_faa_not_fcl(tmp_path, script, samples):
    path = script([
        {"id": "*", "text": "late", "audio": {"tone": 300, "seconds": 0.6, "lead_silence": 0.4},
         "first_chunk_delay": 0.05, "chunk_seconds": 0.1},
        {"id": "single_round-002", "text": "only silence", "audio": {"silence": 0.5}, "first_chunk_delay": 0.05},
    ])
    items = samples(3)
    cfg = RunConfig(quiet=True, concurrency=1)
    with RunStore(tmp_path / "run") as store:
        store.add_samples(items)
        res = await generate(store, items, cfg, LocalExecutor(resolve(f"scripted:{path}"), cfg), progress=False)
        assert res.succeeded == 3
        replies = store.replies()
    timed = [replies[("single_round", f"single_round-{i:03d}")].timings for i in (0, 1)]
    for t in timed:
        assert 50.0 <= t.fcl_ms < 150.0  # at least the scripted delay; a loaded machine may add a little
        assert t.faa_ms - t.fcl_ms == pytest.approx(400.0, abs=10.0)  # one 10 ms frame of resolution
    silent = replies[("single_round", "single_round-002")]
    assert silent.timings.fcl_ms is not None and silent.timings.faa_ms is None and silent.extra["audible"] is False
    rows = aggregate_latency(replies.values())
    faa, fcl = rows["faa_ms"], rows["fcl_ms"]
    assert faa.value == pytest.approx(fcl.value + 400.0, abs=60.0)
    assert (faa.scored, faa.unscored, faa.unscored_reasons) == (2, 1, {"silent_reply": 1})
    assert (fcl.scored, fcl.unscored) == (3, 0)
    assert set(faa.extra) >= {"mean", "p90", "p99", "origin"}


def test_playback_waits_when_the_stream_runs_dry():
    chunk = int(0.25 * SR)
    audio = np.zeros(4 * chunk, dtype=np.float32)
    audio[int(0.6 * SR):] = 0.3  # audible from 0.6 s of reply audio, inside the third chunk
    # chunks arrive every 0.5 s but last 0.25 s: the player waits for each one
    at = heard_at([0.1, 0.6, 1.1, 1.6], [chunk] * 4, SR, audio)
    assert at == pytest.approx(1.1 + 0.1)
    # all at once: continuous playback from the first arrival
    assert heard_at([0.1] * 4, [chunk] * 4, SR, audio) == pytest.approx(0.1 + 0.6)
    assert heard_at([0.1], [audio.size], SR, np.zeros_like(audio)) is None


@pytest.mark.parametrize(("dbfs", "audible"), [(-45.0, True), (-55.0, False)])
def test_silence_threshold_is_minus_50_dbfs_rms(dbfs, audible):
    amp = 10 ** (dbfs / 20) * np.sqrt(2)  # a sine's RMS is amplitude / sqrt(2)
    x = np.concatenate([np.zeros(SR // 5), amp * np.sin(2 * np.pi * 440 * np.arange(SR) / SR)]).astype(np.float32)
    assert first_audible(x, SR) == (SR // 5 if audible else None)


def test_replies_without_first_audible_are_no_timings():
    old = Reply(subset="single_round", sample_id="a", text="x", timings=Timings(first_audio=0.2, last_chunk=1.0),
                audio_duration=2.0)
    row = aggregate_latency([old])["faa_ms"]
    assert row.value is None and row.unscored_reasons == {"no_timings": 1}
