"""Scoring replayed duplex scenarios: words and VAD segments of each output, its metrics, the intervals.

Per replay folder (``RUN/duplex/<scenario>/r<k>/``): the output's speech segments by Silero VAD
(:func:`~vocalbench.components.vad.speech_segments`), its words with timings by Whisper
(:func:`~vocalbench.components.asr.timed_words`; only words that overlap a speech segment are kept,
so Whisper's hallucinations on silence never count as speech), then the measures of
:mod:`vocalbench.duplex.metrics` for the scenario's kind. They are saved as ``metrics.json`` (a
re-run reuses them). Over a run: per kind and measure the mean over scenarios (each scenario's
value first averaged over its repeats) with a 95 % bootstrap interval over scenarios
(:func:`vocalbench.scoring.stats.mean_ci`), and time to first audio as p50/p95 with intervals
from the same bootstrap engine.
"""

from __future__ import annotations

import json
from collections import defaultdict
from dataclasses import asdict
from pathlib import Path
from typing import Any

import numpy as np

from vocalbench.duplex import metrics as m
from vocalbench.duplex.scenarios import KINDS, RATE, Scenario

METRICS_FILE = "metrics.json"
RELEVANCE_FILE = "relevance.json"
SCORER_VERSION = "2"
# what each kind reports, in table order (take_over: a rate in [0, 1]; times in seconds)
MEASURES: dict[str, tuple[str, ...]] = {
    "pause": ("take_over",),
    "smooth": ("take_over", "latency"),
    "interruption": ("take_over", "latency", "stop_time", "relevance"),
    "backchannel": ("take_over", "frequency"),
}
LABELS = {"take_over": "take-over rate", "latency": "latency (s)", "stop_time": "time to stop (s)",
          "relevance": "relevance to the interruption (1-5, judge)",
          "frequency": "backchannels / s", "ttfa_p50": "first audio p50 (s)", "ttfa_p95": "first audio p95 (s)"}
KIND_LABELS = {"pause": "Pause handling", "smooth": "Smooth turn-taking", "interruption": "User interruption",
               "backchannel": "Backchannel"}


def reference(sc: Scenario) -> float:
    """The moment time to first audio counts from: the interruption's end, else the user's end of turn."""
    return sc.span[1] if sc.kind == "interruption" and sc.span is not None else sc.user_end


def measure(sc: Scenario, words: list[m.Word], segments: list[m.Span], onset: float | None) -> dict[str, float | None]:
    """The measures of one replay of ``sc`` (pure: words, segments and the first audio onset given)."""
    if sc.kind == "pause":
        out = m.pause_handling(words, sc.user_end)
    elif sc.kind == "smooth":
        out = m.smooth_turn_taking(words, sc.user_end)
    elif sc.kind == "interruption":
        assert sc.span is not None
        out = m.user_interruption(words, segments, m.Span(*sc.span))
    else:
        out = m.backchannel(words, [s for s in segments if s.start < sc.duration], sc.duration)  # not in a --tail
    return {**out, "ttfa": m.first_audio_after(onset, reference(sc))}


def score_replay(sc: Scenario, folder: Path, asr: Any, vad: Any) -> dict[str, Any]:
    """Words, segments and measures of one replay folder; cached in its ``metrics.json``."""
    from vocalbench.audio import first_audible, load
    from vocalbench.components.asr import timed_words
    from vocalbench.components.vad import speech_segments
    from vocalbench.files import write_json

    path = folder / METRICS_FILE
    if path.exists():
        body = json.loads(path.read_text(encoding="utf-8"))
        if body.get("version") == SCORER_VERSION:
            return dict(body)
    y, _ = load(folder / "output.wav", sample_rate=RATE)
    y16, _ = load(folder / "output.wav", sample_rate=16000)
    segments = [m.Span(round(s.start, 3), round(s.end, 3)) for s in speech_segments(y16, vad)]
    words: list[m.Word] = []
    if segments:
        words = [m.Word(round(a, 3), round(b, 3), w) for a, b, w in timed_words(asr, folder / "output.wav", sc.lang)
                 if any(a < s.end and b > s.start for s in segments)]
    ref = reference(sc)
    i = int(round(ref * RATE))
    rel = first_audible(y[i:], RATE) if i < y.size else None
    onset = None if rel is None else ref + rel / RATE
    body = {"version": SCORER_VERSION, "scenario": sc.id, "kind": sc.kind, "asr": getattr(asr, "id", "asr"),
            "vad": getattr(vad, "name", "vad"), "words": [asdict(w) for w in words],
            "segments": [asdict(s) for s in segments], "onset": onset,
            "metrics": {k: None if v is None else round(v, 4) for k, v in measure(sc, words, segments, onset).items()}}
    write_json(path, body)
    return body


def relevance_fields(sc: Scenario, words: list[m.Word]) -> dict[str, str] | None:
    """The judge's fields for an interruption replay: the interruption's own words (its script) as
    the request, and what the system said from the interruption's start on; None when it said nothing
    then (no answer to rate: its take-over is 0)."""
    if sc.kind != "interruption" or sc.span is None or len(sc.parts) < 2:
        return None
    said = " ".join(w.text.strip() for w in words if w.start >= sc.span[0]).strip()
    return {"question": sc.parts[-1].text, "reply": said} if said else None


async def judge_relevance(judge: Any, sc: Scenario, folder: Path, words: list[m.Word]) -> dict[str, Any] | None:
    """The judge's 1-5 relevance of the answer to the interruption, cached in the replay folder's
    ``relevance.json`` under the judge's id (another judge asks again); None when there is no answer.
    An evaluator failure is recorded with its reason and counts as unscored, never as a 1."""
    from vocalbench.files import write_json
    from vocalbench.judge import rubrics

    fields = relevance_fields(sc, words)
    if fields is None:
        return None
    path = folder / RELEVANCE_FILE
    if path.exists():
        body = json.loads(path.read_text(encoding="utf-8"))
        if body.get("judge") == judge.id and body.get("fields") == fields and body.get("value") is not None:
            return dict(body)
    rubric = rubrics.load(f"duplex_relevance_{'zh' if sc.lang == 'zh' else 'en'}")
    verdict = await judge.evaluate(rubric, fields, subset="duplex", sample_id=f"{sc.id}/{folder.name}")
    decided = verdict.decided_by.model_dump(exclude_none=True) if verdict.decided_by is not None else None
    body = {"judge": judge.id, "rubric": rubric.ref, "fields": fields, "value": verdict.value,
            "unscored": verdict.error, "decided_by": decided}
    write_json(path, body)
    return body


def _percentile_ci(x: np.ndarray, q: float) -> tuple[float, float] | None:
    from vocalbench.scoring.stats import interval, replicate_values

    if x.size < 2:
        return None
    ci = interval(replicate_values(x, lambda a: np.percentile(a, q, axis=1)))
    return None if ci is None else (round(ci[0], 4), round(ci[1], 4))


def aggregate(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Per kind and measure: value, 95 % interval, scenarios scored, and why others are not.

    ``rows``: one per replay, ``{"scenario", "kind", "metrics": {...}}``; a measure that is None for a
    replay (it does not apply: no take-over, not talking when interrupted, no audio) is left out of
    that scenario's mean and counted under ``not_applicable``."""
    from vocalbench.scoring.stats import mean_ci

    out: dict[str, Any] = {}
    for kind in KINDS:
        per: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
        missing: dict[str, int] = defaultdict(int)
        scenarios = sorted({r["scenario"] for r in rows if r["kind"] == kind})
        if not scenarios:
            continue
        for r in rows:
            if r["kind"] != kind:
                continue
            for name in (*MEASURES[kind], "ttfa"):
                v = r["metrics"].get(name)
                if v is None:
                    missing[name] += 1
                else:
                    per[name][r["scenario"]].append(float(v))
        body: dict[str, Any] = {"scenarios": len(scenarios), "replays": sum(r["kind"] == kind for r in rows)}
        for name in MEASURES[kind]:
            x = np.array([np.mean(v) for v in per[name].values()], dtype=float)
            ci = mean_ci(x)
            body[name] = {"value": round(float(x.mean()), 4) if x.size else None,
                          "ci95": list(ci) if ci else None, "n": int(x.size), "not_applicable": missing[name]}
        t = np.array([np.mean(v) for v in per["ttfa"].values()], dtype=float)
        for q, key in ((50, "ttfa_p50"), (95, "ttfa_p95")):
            ci = _percentile_ci(t, q)
            body[key] = {"value": round(float(np.percentile(t, q)), 4) if t.size else None,
                         "ci95": list(ci) if ci else None, "n": int(t.size), "not_applicable": missing["ttfa"]}
        out[kind] = body
    return out


def table(result: dict[str, Any]) -> str:
    """The duplex table as Markdown: one row per kind and measure, value [95 % CI] (n)."""
    lines = ["| scenario kind | measure | value | 95 % CI | n |", "|---|---|---|---|---|"]
    notes: list[str] = []
    for kind, body in result.items():
        for name in (*MEASURES[kind], "ttfa_p50", "ttfa_p95"):
            row = body.get(name)
            if row is None:
                continue
            if row.get("validity") is not None and not row["validity"].get("validated"):
                notes.append(f"§ {LABELS[name]}: the judge is not validated for {row['validity']['family']} "
                             f"({row['validity']['status']}): not a measurement")
            v = "—" if row["value"] is None else f"{row['value']:.3f}"
            ci = "—" if not row["ci95"] else f"[{row['ci95'][0]:.3f}, {row['ci95'][1]:.3f}]"
            validity = row.get("validity")
            mark = " §" if validity is not None and not validity.get("validated") else ""
            lines.append(f"| {KIND_LABELS[kind]} | {LABELS[name]}{mark} | {v} | {ci} | {row['n']} |")
    return "\n".join(lines + notes)
