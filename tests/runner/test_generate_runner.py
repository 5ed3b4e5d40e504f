"""The generator: replies and audio as they arrive, resume, retries, error threshold, robust reuse."""

from __future__ import annotations

import pytest

from vocalbench.audio import info
from vocalbench.records import Sample
from vocalbench.run_config import RunConfig
from vocalbench.runner.generate import LocalExecutor, RunAborted, generate
from vocalbench.runner.store import RunStore
from vocalbench.systems import resolve


def cfg(**kw) -> RunConfig:
    return RunConfig(quiet=True, concurrency=4, **kw)


async def run(store: RunStore, samples: list[Sample], script_path, **kw):
    c = cfg(**kw)
    store.add_samples(samples)
    return await generate(store, samples, c, LocalExecutor(resolve(f"scripted:{script_path}"), c), progress=False)


async def test_replies_audio_retries_and_resume(tmp_path, script, samples):
    items = samples(6)
    path = script([{"id": "*", "text": "ok {id}", "audio": {"tone": 200, "seconds": 0.5}},
                   {"id": "single_round-001", "text": "late", "fault": {"type": "http_503", "fail_first": 2}},
                   {"id": "single_round-002", "fault": {"type": "http_500", "fail_first": -1, "message": "down"}}])
    with RunStore(tmp_path / "run") as store:
        res = await run(store, items, path, max_attempts=3, warmup=False)
        assert (res.succeeded, res.failed, res.retries) == (5, 1, 2 + 2)
        replies = store.replies()
        assert len(replies) == 6
        late = replies[("single_round", "single_round-001")]
        assert late.text == "late" and late.attempts == 3 and late.error is None
        down = replies[("single_round", "single_round-002")]
        assert down.failed and down.error.type == "http_500" and down.error.message == "down" and down.attempts == 3
        assert down.text is None and down.audio is None
        ok = replies[("single_round", "single_round-000")]
        assert ok.text == "ok single_round-000" and ok.source == "generated"
        assert ok.audio.path.endswith("audio/single_round/single_round-000.wav")
        assert info(ok.audio.path).duration == pytest.approx(0.5) and ok.audio_duration == pytest.approx(0.5)
        assert ok.rtf is not None and ok.timings.fcl_ms is not None

    # the system recovers: a re-run answers only the failed sample
    fixed = script([{"id": "*", "text": "ok {id}", "audio": {"tone": 200, "seconds": 0.5}}])
    with RunStore(tmp_path / "run") as store:
        res2 = await run(store, items, fixed, warmup=False)
        assert (res2.skipped, res2.succeeded, res2.failed) == (5, 1, 0)
        replies = store.replies()
        assert len(replies) == 6 and not any(r.failed for r in replies.values())
        assert replies[("single_round", "single_round-001")].text == "late"  # kept, not redone
        assert store.counts()["replies"] == 6


async def test_error_threshold_stops_and_keeps_finished_work(tmp_path, script, samples):
    items = samples(40)
    path = script([{"id": "*", "fault": {"type": "http_400", "fail_first": -1, "retryable": False}}])
    with RunStore(tmp_path / "run") as store:
        with pytest.raises(RunAborted, match=r"failed \(> 50%.*re-run the same command"):
            await run(store, items, path, error_min_count=10, warmup=False)
        n = store.counts()["replies"]
        assert 10 <= n < 40  # stopped early, finished work saved
        assert all(r.error.type == "http_400" for r in store.replies().values())


async def test_robust_clean_reuses_single_round_replies(tmp_path, script, samples):
    sr = samples(3)
    clean = [s.model_copy(update={"subset": "robust_clean", "id": f"robust-{i:03d}"}) for i, s in enumerate(sr[:2])]
    clean.append(sr[2].model_copy(update={"subset": "robust_clean", "id": "robust-009", "question": "another"}))
    path = script([{"id": "*", "text": "answer {id}", "audio": {"tone": 200, "seconds": 0.3}}])
    with RunStore(tmp_path / "run") as store:
        res = await run(store, sr + clean, path, warmup=False)
        assert (res.reused, res.succeeded) == (2, 4)
        r0 = store.get_reply("robust_clean", "robust-000")
        assert r0.source == "reused:single_round/single_round-000" and r0.text == "answer single_round-000"
        assert r0.audio.path == store.get_reply("single_round", "single_round-000").audio.path
        r9 = store.get_reply("robust_clean", "robust-009")
        assert r9.source == "generated" and r9.text == "answer robust-009"


async def test_warmup_is_recorded_not_counted(tmp_path, script, samples):
    items = samples(2)
    path = script([{"id": "*", "text": "hi", "audio": {"tone": 200, "seconds": 0.2}}])
    with RunStore(tmp_path / "run") as store:
        res = await run(store, items, path)
        assert res.warmup["ok"] and res.warmup["sample"] == "single_round/single_round-000"
        assert store.get_meta("warmup")["ok"]
        assert res.succeeded == 2 and store.counts()["replies"] == 2
        assert store.get_meta("generate")["succeeded"] == 2
