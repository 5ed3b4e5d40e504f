"""Run folders built for report tests: a real RunStore, real WAV audio, a hand-written summary."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from vocalbench import audio
from vocalbench.records import (
    AudioRef,
    ErrorInfo,
    JudgeTrace,
    Reply,
    Sample,
    Score,
    Timings,
    Turn,
)
from vocalbench.runner.store import RunStore

XSS_REPLY = 'Sure! <script>window.__pwned=1</script> and <img src=x onerror="window.__pwned=1"> done'
FAMILY_LEVELS = {
    "background_noise": ["snr_-5", "snr_0", "snr_5", "snr_10", "snr_15", "snr_20"],
    "white_noise": ["snr_-5", "snr_0", "snr_5", "snr_10", "snr_15", "snr_20"],
    "reverberation": ["rt60_05", "rt60_10", "rt60_15", "rt60_20", "rt60_25", "rt60_30"],
    "farfield": [f"filter_{f}hz" for f in range(100, 900, 100)],
    "packet_loss": ["dropping_10", "dropping_30", "dropping_50", "dropping_70", "dropping_90"],
    "distortion": ["clipping_0.0001", "clipping_0.0010", "clipping_0.0100", "clipping_0.1000", "clipping_0.5000"],
}


def tone(path: Path, freq: float, seconds: float = 0.6, sr: int = 16000) -> Path:
    t = np.arange(int(seconds * sr)) / sr
    return audio.write(path, 0.3 * np.sin(2 * np.pi * freq * t).astype(np.float32), sr)


def _judge(raw: str, rubric: str = "single_round@1") -> JudgeTrace:
    return JudgeTrace(model="qwen2.5-1.5b@127.0.0.1", prompt_hash="abc123", rubric=rubric, raw=raw)


def make_run(
    root: Path,
    *,
    lang: str = "en",
    system: str = "scripted:demo",
    acc: float = 0.7,
    seed: int = 0,
    n_knowledge: int = 40,
    subsets: tuple[str, ...] = ("knowledge", "reasoning", "creativity", "single_round", "instruction_following",
                                "emotion", "safety", "robust", "multi_round"),
    unscored_subsets: tuple[str, ...] = (),
    comparable: bool = False,
    xss: bool = True,
    robust_levels: dict[str, list[str]] | None = None,
    intervals: bool = True,
) -> Path:
    """A scored language run folder with audio, replies, scores and a summary.json.

    The summary's values are the simple means of the item scores written here (or null for
    subsets not run), so tests know what the report must show.
    """
    rng = np.random.default_rng(seed)
    root.mkdir(parents=True, exist_ok=True)
    qdir = root.parent / f"_queries_{lang}"
    store = RunStore(root)
    samples: list[Sample] = []
    replies: list[Reply] = []
    scores: list[tuple[Score, str]] = []
    item_values: dict[str, list[float]] = {}

    def add(subset: str, i: int, sid: str, value: float | None, *, category: str | None = None,
            name: str = "main", question: str | None = None, with_audio: bool = False,
            history: list[Turn] | None = None, metadata: dict[str, Any] | None = None,
            reply_text: str | None = None, details: dict[str, Any] | None = None, judge: bool = True) -> None:
        aref = None
        if with_audio:
            aref = AudioRef(path=str(tone(qdir / subset / f"{sid}.wav", 220 + 10 * i)), sample_rate=16000, duration=0.6)
        samples.append(Sample(id=sid, subset=subset, lang=lang, index=i, audio=aref,  # type: ignore[arg-type]
                              question=question or f"Question {i} of {subset}?", reference=f"answer {i}",
                              history=history or [], category=category, metadata=metadata or {}))
        text = reply_text if reply_text is not None else f"Reply {i} to {subset}."
        rep_audio = None
        dur = None
        if subset == "single_round":
            p = tone(root / "audio" / subset / f"{sid}.wav", 330 + 5 * i, seconds=0.8)
            rep_audio, dur = AudioRef(path=str(p.relative_to(root)), sample_rate=16000, duration=0.8), 0.8
        first_audio = 0.2 + 0.02 * i + 0.05 * rng.random()
        timings = Timings(request_sent=0.0, first_text=0.1 + 0.01 * i, first_audio=first_audio,
                          first_audible=first_audio + 0.1, last_chunk=0.9 + 0.01 * i)
        replies.append(Reply(subset=subset, sample_id=sid, text=text, audio=rep_audio, audio_duration=dur,
                             timings=timings))
        unscored = subset in unscored_subsets
        sc = Score(subset=subset, sample_id=sid, name=name, value=None if unscored else value,
                   unscored="judge_unavailable" if unscored else None, scorer=f"{subset}@1",
                   judge=_judge(f'{{"verdict": {value}}}', f"{subset}@1") if judge else None,
                   details=details or {})
        scores.append((sc, f"{subset}@1|judge"))
        if not unscored and value is not None:
            item_values.setdefault(subset, []).append(value)

    if "knowledge" in subsets:
        cats = ["geography", "history", "science", "sports"]
        for i in range(n_knowledge):
            add("knowledge", i, f"knowledge-{i:04d}", float(rng.random() < acc), category=cats[i % 4],
                with_audio=i < 3, judge=False)
    if "reasoning" in subsets:
        for i in range(20):
            add("reasoning", i, f"reasoning-{i:03d}", float(rng.random() < acc * 0.6),
                category=["math", "logic"][i % 2])
    if "creativity" in subsets:
        for i in range(10):
            add("creativity", i, f"creativity-{i:03d}", float(rng.integers(2, 6)), category="poem")
    if "single_round" in subsets:
        for i in range(20):
            sid = f"single_round-{i:03d}"
            text = XSS_REPLY if (xss and i == 0) else None
            add("single_round", i, sid, float(rng.integers(3, 6)), with_audio=True, reply_text=text)
            scores.append((Score(subset="single_round", sample_id=sid, name="utmos", value=float(3.5 + rng.random()),
                                 scorer="utmos@1"), "utmos@1"))
            scores.append((Score(subset="single_round", sample_id=sid, name="clarity", value=5.0, scorer="acoustic_en@1",
                                 details={"dist": 1, "len": 20, "hyp": f"reply {i} to single round"}), "acoustic@1"))
    if "instruction_following" in subsets:
        for i in range(20):
            add("instruction_following", i, f"instruction-{i:03d}", float(rng.random() < 0.5),
                category=["Num", "Keywords", "Situation"][i % 3])
    if "emotion" in subsets:
        for i in range(10):
            probs = {"angry": 0.1, "happy": 0.5, "neutral": 0.2, "sad": 0.1, "surprised": 0.1}
            sid = f"emotion-{i:03d}"
            sem = float(rng.integers(1, 6))
            add("emotion", i, sid, sem, name="semantic")
            aco = float(2.0 + 2.0 * rng.random())
            unscored = "emotion" in unscored_subsets
            scores.append((Score(subset="emotion", sample_id=sid, name="acoustic", value=None if unscored else aco,
                                 unscored="emotion_not_configured" if unscored else None, scorer="emotion@1",
                                 details={"distribution": probs}), "emotion@1"))
            if not unscored:
                item_values.setdefault("emotion_eer", []).append(float(sem >= 3 and aco >= 3))
    if "safety" in subsets:
        for i in range(10):
            add("safety", i, f"safety-{i:03d}", float(rng.random() < 0.8) if i else 0.0)
        # the system under test timed out on safety-000: failed reply, worst value, counted
        replies[-10] = Reply(subset="safety", sample_id="safety-000", error=ErrorInfo(type="timeout", message="60 s"))
        first = next(k for k, (sc, _) in enumerate(scores) if sc.sample_id == "safety-000")
        scores[first] = (scores[first][0].model_copy(update={"system_error": "timeout", "judge": None}), scores[first][1])
    if "multi_round" in subsets:
        for i in range(6):
            hist = [Turn(role="user", text=f"dialogue {i // 2} opening"), Turn(role="assistant", text="ok")]
            add("multi_round", i, f"multi_round-{i:03d}", float(rng.random() < 0.5), history=hist)
    if "robust" in subsets:
        for q in range(5):
            add("robust_clean", q, f"robust-{q:03d}", 4.0)
        idx = 0
        for fam, levels in (robust_levels or FAMILY_LEVELS).items():
            for li, lev in enumerate(levels):
                for q in range(5):
                    v = float(np.clip(4.0 - 0.3 * li + rng.normal(0, 0.3), 1, 5))
                    add("robust", idx, f"robust-{fam}-{lev}-{q:03d}", v, category=fam, metadata={"Level": lev})
                    idx += 1
    store.add_samples(samples)
    store.put_replies(replies)
    store.put_scores(scores)
    store.close()

    def mean(s: str, scale: float = 1.0) -> float | None:
        v = item_values.get(s)
        return None if not v else round(scale * float(np.mean(v)), 4)

    metric = {"knowledge": "accuracy", "reasoning": "accuracy", "creativity": "mean_score",
              "single_round": "mean_score", "instruction_following": "following_rate", "emotion": "eer",
              "safety": "refusal_rate", "multi_round": "accuracy", "robust": "preserve_rate",
              "robust_clean": "mean_score"}
    subs: dict[str, Any] = {}
    for s in {sc.subset for sc, _ in scores}:
        n = sum(1 for sc, _ in scores if sc.subset == s and sc.name in ("main", "semantic"))
        uns = n if s in unscored_subsets else 0
        scale = 100.0 if metric[s] in ("accuracy", "following_rate", "eer", "refusal_rate") else 1.0
        value = mean("emotion_eer" if s == "emotion" else s, scale)
        subs[s] = {"metric": metric[s], "value": value, "n": n, "scored": n - uns, "unscored": uns,
                   "system_errors": 0, "complete": uns == 0, "ci95": None, "extra": {}}
    if "single_round" in subsets:
        clar = "per" if lang == "zh" else "wer"
        for row, val in (("utmos", 4.0), (clar, 5.0), ("rtf", 1.2), ("fcl_ms", 400.0), ("faa_ms", 500.0)):
            subs[row] = {"metric": row, "value": val, "n": 20, "scored": 20, "unscored": 0, "system_errors": 0,
                         "complete": True, "ci95": None, "extra": {}}
    pr = None
    if "robust" in item_values:
        pr = 85.0
        subs["robust"]["value"] = pr
    dims = {
        "knowledge": subs.get("knowledge", {}).get("value"), "reasoning": subs.get("reasoning", {}).get("value"),
        "creativity": subs.get("creativity", {}).get("value"), "single_round": subs.get("single_round", {}).get("value"),
        "multi_round": subs.get("multi_round", {}).get("value"),
        "instruction_following": subs.get("instruction_following", {}).get("value"),
        "empathy": subs.get("emotion", {}).get("value"), "safety": subs.get("safety", {}).get("value"),
        "robust": pr, "utmos": 4.0 if "single_round" in subsets else None,
        ("per" if lang == "zh" else "wer"): 5.0 if "single_round" in subsets else None,
        "rtf": 1.2 if "single_round" in subsets else None, "fcl_ms": 400.0 if "single_round" in subsets else None,
        "faa_ms": 500.0 if "single_round" in subsets else None,
    }
    if lang == "zh":
        dims.update(code_switching=None, dialect=None)
    needed = ["knowledge", "reasoning", "creativity", "single_round", "instruction_following", "empathy", "safety",
              "robust", "utmos", "per" if lang == "zh" else "wer"]
    missing = [d for d in needed if dims.get(d) is None or any(s in unscored_subsets for s in [d])]
    overall: dict[str, Any] = {"version": "v2", "value": None, "missing": missing, "partial": None}
    if not missing:
        overall["value"] = 61.234
    else:
        overall["partial"] = {"value": 41.2, "max": 80.0}
    meta: dict[str, Any] = {}
    if intervals:  # hand-set CIs (what scoring writes), so a report that recomputes them shows
        if "knowledge" in subs:
            subs["knowledge"]["ci95"] = [70.25, 84.75]
        if pr is not None:
            subs["robust"]["ci95"] = [80.5, 89.5]
        if overall["value"] is not None:
            overall["ci95"] = [58.5, 63.75]
    summary = {"lang": lang, "protocol": "v2", "system": system, "subsets": subs, "dimensions": dims,
               "overall": overall, "meta": meta,
               "provenance": {"asr": "whisper-base", "mos": "distillmos", "emotion": "none",
                              "judge": "qwen2.5-1.5b+cal-test@127.0.0.1", "leaderboard_comparable": comparable,
                              "judge_validity": _validity(system)}}
    (root / "summary.json").write_text(json.dumps(summary, ensure_ascii=False, indent=2))
    (root / "config.json").write_text(json.dumps({"system": system, "lang": lang, "protocol": "v2",
                                                   "judge": "local", "data": "mini"}))
    return root


def _validity(system: str) -> dict[str, Any]:
    """A judge_validity block as the scoring engine writes it (scoring/summary.judge_provenance)."""
    return {
        "judge": "qwen2.5-1.5b+cal-test@127.0.0.1", "checked_at": "2026-12-01T00:00:00+00:00",
        "families": {
            "safety_en": {"n": 140, "kappa": 0.71, "kappa_ci95": [0.6, 0.8], "bias": 3.0, "validated": True,
                          "agreement_validated": True, "status": "validated",
                          "stress": {"passed": True, "why": "every transformation within its bar", "transformations": {
                              "padding": {"n": 140, "value": -1.4, "ci95": [-4.0, 1.2], "bar": 5.0, "passed": True},
                              "off_topic": {"n": 140, "value": 6.4, "ci95": [2.9, 10.0], "bar": 10.0,
                                            "passed": True}}},
                          "by_source": {"llama-omni": {"n": 60, "kappa": 0.65}, "authored": {"n": 80, "kappa": 0.75}}},
            "creativity_en": {"n": 30, "spearman": 0.31, "mean_diff": 0.2, "validated": False,
                              "status": "below the bar", "criterion": "rho 0.31 (>= 0.5)"},
        },
        "unvalidated_subsets": {"creativity": "creativity_en: below the bar (rho 0.31 (>= 0.5))"},
        "same_model_as_system": system == "offline-cascade",
    }


@pytest.fixture(scope="session")
def two_runs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """Two English runs of different systems on the same samples."""
    base = tmp_path_factory.mktemp("runs")
    a = make_run(base / "sysA", system="scripted:alpha", acc=0.8, seed=1)
    b = make_run(base / "sysB", system="offline-cascade", acc=0.5, seed=2, comparable=True)
    return a, b


@pytest.fixture(scope="session")
def run_factory() -> Any:
    """``make_run`` for tests that build their own run folders."""
    return make_run
