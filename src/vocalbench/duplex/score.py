"""Scoring replayed duplex scenarios: words and speech segments of each output, its measures, the intervals.

Per replay (a Reply of subset ``duplex`` in the run store, its recordings in its folder): the output's
speech segments and the input's by Silero VAD (:func:`~vocalbench.components.vad.speech_segments`),
the output's words with timings (a transcript imported with the recordings, else the run's Whisper,
:func:`~vocalbench.components.asr.timed_words`; only words that overlap a speech segment are kept,
so Whisper's hallucinations on silence never count as speech), then the measures of
:mod:`vocalbench.duplex.metrics` for the scenario's kind. They are saved as Score records under the
timing evaluator (a re-run reuses them; ``vocalbench score RUN`` measures again from the recordings).
Over a run: per kind and measure the mean over scenarios (each scenario's value first averaged over
its repeats) with a 95 % bootstrap interval over scenarios (:func:`vocalbench.stats.mean_ci`),
and time to first audio as p50/p95 with intervals from the same bootstrap engine.
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path
from typing import TYPE_CHECKING, NotRequired, TypedDict

import numpy as np
from pydantic import JsonValue

from vocalbench.duplex import metrics as m
from vocalbench.duplex.records import SUBSET, Analysis, Interval, TimedWord, Window
from vocalbench.duplex.scenarios import KINDS, Scenario
from vocalbench.records import Score
from vocalbench.runner.store import RunStore

if TYPE_CHECKING:
    from vocalbench.components.base import ASR
    from vocalbench.components.vad import Detector
    from vocalbench.scoring.base import Judge

SCORER_VERSION = "3"
SCORER = f"duplex-timing@{SCORER_VERSION}"
RELEVANCE_SCORER = "duplex-relevance@1"
SPEECH = "speech"  # the score that carries the analysis: seconds of output speech
# what each kind reports, in table order (take_over: a rate in [0, 1]; times in seconds)
MEASURES: dict[str, tuple[str, ...]] = {
    "pause": ("take_over",),
    "smooth": ("take_over", "latency", "word_latency"),
    "interruption": ("take_over", "latency", "word_latency", "stop_time", "stop_latency", "response_latency",
                     "relevance"),
    "backchannel": ("take_over", "frequency"),
}
LABELS = {"take_over": "take-over rate", "latency": "latency (s)", "word_latency": "latency, first word (s, FDB v1)",
          "stop_time": "time to stop (s)", "stop_latency": "stop latency (s, FDB v1.5)",
          "response_latency": "response latency (s, FDB v1.5)",
          "relevance": "relevance to the interruption (1-5, judge)",
          "frequency": "backchannels / s", "ttfa_p50": "first audio p50 (s)", "ttfa_p95": "first audio p95 (s)"}
KIND_LABELS = {"pause": "Pause handling", "smooth": "Smooth turn-taking", "interruption": "User interruption",
               "backchannel": "Backchannel"}


def timing_evaluator(words_from: str) -> str:
    return f"{SCORER}|words={words_from}"


def relevance_evaluator(judge_id: str) -> str:
    return f"{RELEVANCE_SCORER}|judge={judge_id}"


def reference(sc: Scenario) -> float:
    """The moment time to first audio counts from: the interruption's end, else the user's end of turn."""
    return sc.span[1] if sc.kind == "interruption" and sc.span is not None else sc.user_end


def measure(sc: Scenario, words: list[m.Word], segments: list[m.Span], user_segments: list[m.Span] | None = None
            ) -> m.Measures:
    """The measures of one replay of ``sc`` (pure: its words and the output's and input's speech given)."""
    lang = sc.lang
    if sc.kind == "pause":
        out = m.pause_handling(words, sc.user_end, lang)
    elif sc.kind == "smooth":
        out = m.smooth_turn_taking(words, segments, sc.user_end, lang)
    elif sc.kind == "interruption":
        assert sc.span is not None
        out = m.user_interruption(words, segments, m.Span(*sc.span), user_segments or [], lang)
    else:
        out = m.backchannel(words, segments, sc.user_end, sc.duration, lang)
    return {**out, "ttfa": m.first_audio_after(segments, reference(sc))}


def windows(sc: Scenario, values: m.Measures, end: float) -> list[Window]:
    """The stretch each measure read (``end``: the end of the recording)."""
    ref = reference(sc)
    out: list[Window] = []
    if sc.kind == "pause":
        out.append(Window(measure="take_over", start=0.0, end=sc.user_end))
    elif sc.kind == "smooth":
        out.append(Window(measure="take_over", start=0.0, end=end))
    elif sc.kind == "interruption" and sc.span is not None:
        out.append(Window(measure="take_over", start=sc.span[1], end=end))
        if values.get("stop_time") is not None:
            out.append(Window(measure="stop_time", start=sc.span[0], end=sc.span[0] + float(values["stop_time"] or 0)))
    elif sc.kind == "backchannel":
        out.append(Window(measure="take_over", start=0.0, end=sc.user_end))
    if values.get("ttfa") is not None:
        out.append(Window(measure="ttfa", start=ref, end=ref + float(values["ttfa"] or 0)))
    return out


def _segments(path: Path, vad: Detector) -> list[m.Span]:
    from vocalbench.audio import load
    from vocalbench.components.vad import speech_segments

    y16, _ = load(path, sample_rate=16000)
    return [m.Span(round(s.start, 3), round(s.end, 3)) for s in speech_segments(y16, vad)]


def analyse(sc: Scenario, folder: Path, asr: ASR | None, vad: Detector, supplied: list[TimedWord] | None = None
            ) -> tuple[Analysis, m.Measures]:
    """Read one replay's recordings: its speech segments, words (``supplied``, else ``asr``) and measures."""
    from vocalbench.audio import info
    from vocalbench.components.asr import timed_words

    segments = _segments(folder / "output.wav", vad)
    users = _segments(folder / "input.wav", vad) if sc.kind == "interruption" else []
    if supplied is not None:
        words = [m.Word(w.start, w.end, w.text) for w in supplied]
        words_from = "transcript"
    elif asr is None:
        raise ValueError(f"{folder}: no word timings were supplied and no ASR is given to hear them")
    else:
        words_from = str(getattr(asr, "id", "asr"))
        words = [] if not segments else [
            m.Word(round(a, 3), round(b, 3), w) for a, b, w in timed_words(asr, folder / "output.wav", sc.lang)
            if any(a < s.end and b > s.start for s in segments)]
    values = measure(sc, words, segments, users)
    analysis = Analysis(words_from=words_from, words=[TimedWord(start=w.start, end=w.end, text=w.text) for w in words],
                        segments=[Interval(start=s.start, end=s.end) for s in segments],
                        user_segments=[Interval(start=s.start, end=s.end) for s in users],
                        windows=windows(sc, values, info(folder / "output.wav").duration))
    return analysis, values


NOT_APPLICABLE = {"latency": "no take-over", "word_latency": "no take-over", "stop_time": "not talking when interrupted",
                  "stop_latency": "not talking over the interruption",
                  "response_latency": "no speech after the interruption", "ttfa": "no speech after the turn"}


def measure_scores(key: str, analysis: Analysis, values: m.Measures) -> list[Score]:
    """The Score records of one replay: ``speech`` (with the analysis) and one per measure."""
    speech = sum(s.end - s.start for s in analysis.segments)
    out = [Score(subset=SUBSET, sample_id=key, name=SPEECH, value=round(speech, 4), scorer=SCORER,
                 details={"analysis": analysis.model_dump()})]
    for name, v in values.items():
        out.append(Score(subset=SUBSET, sample_id=key, name=name, value=None if v is None else round(v, 4),
                         scorer=SCORER, details={} if v is not None else {"not_applicable": NOT_APPLICABLE.get(name, "")}))
    return out


def stored(store: RunStore, key: str, evaluator: str) -> tuple[Analysis, dict[str, float | None]] | None:
    """A replay's analysis and measures as scored before under ``evaluator`` (None: not scored)."""
    scores = store.scores_of(SUBSET, evaluator, [key])
    speech = next((s for s in scores if s.name == SPEECH), None)
    if speech is None:
        return None
    return (Analysis.model_validate(speech.details["analysis"]),
            {s.name: s.value for s in scores if s.name != SPEECH})


def relevance_fields(sc: Scenario, words: list[TimedWord]) -> dict[str, str] | None:
    """The judge's fields for an interruption replay: the interruption's own words (its script) as
    the request, and what the system said from the interruption's start on; None when it said nothing
    then (no answer to rate: its take-over is 0)."""
    if sc.kind != "interruption" or sc.span is None or len(sc.parts) < 2:
        return None
    said = " ".join(w.text.strip() for w in words if w.start >= sc.span[0]).strip()
    return {"question": sc.parts[-1].text, "reply": said} if said else None


async def judge_relevance(judge: Judge, store: RunStore, sc: Scenario, key: str, words: list[TimedWord]) -> Score | None:
    """The judge's 1-5 relevance of the answer to the interruption as a Score under the judge's
    evaluator (another judge asks again; a scored one is reused); None when there is no answer.
    An evaluator failure is recorded with its reason and counts as unscored, never as a 1."""
    from vocalbench.judge import rubrics

    fields = relevance_fields(sc, words)
    if fields is None:
        return None
    evaluator = relevance_evaluator(judge.id)
    before = next((s for s in store.scores_of(SUBSET, evaluator, [key]) if s.name == "relevance"), None)
    if before is not None and before.details.get("fields") == fields and before.value is not None:
        return before
    rubric = rubrics.load(f"duplex_relevance_{'zh' if sc.lang == 'zh' else 'en'}")
    verdict = await judge.evaluate(rubric, fields, subset=SUBSET, sample_id=key)
    score = Score(subset=SUBSET, sample_id=key, name="relevance", value=verdict.value,
                  unscored=None if verdict.value is not None else (verdict.error or "judge_unscored"),
                  scorer=RELEVANCE_SCORER, judge=verdict.trace, decided_by=verdict.decided_by,
                  details={"fields": dict[str, JsonValue](fields), "rubric": rubric.ref})
    store.put_score(score, evaluator)
    return score


class ReplayRow(TypedDict):
    """One scored replay: its scenario, kind, repeat and measures (None: the measure does not apply)."""

    scenario: str
    kind: str
    repeat: int
    metrics: dict[str, float | None]


class RelevanceValidity(TypedDict):
    """The judge's validity for the relevance family, from its latest judge-check."""

    family: str
    validated: bool
    status: str


class MeasureRow(TypedDict):
    """One measure of one scenario kind: value, 95 % interval, scenarios scored, and why others are not
    (relevance: the unscored answers by reason and the judge's validity)."""

    value: float | None
    ci95: list[float] | None
    n: int
    not_applicable: int
    unscored: NotRequired[dict[str, int]]
    validity: NotRequired[RelevanceValidity]


KindResult = dict[str, int | MeasureRow]  # "scenarios" and "replays" (counts), and a MeasureRow per measure
DuplexResult = dict[str, KindResult]  # by scenario kind


def _percentile_ci(x: np.ndarray, q: float) -> tuple[float, float] | None:
    from vocalbench.stats import interval, replicate_values

    if x.size < 2:
        return None
    ci = interval(replicate_values(x, lambda a: np.percentile(a, q, axis=1)))
    return None if ci is None else (round(ci[0], 4), round(ci[1], 4))


def aggregate(rows: list[ReplayRow]) -> DuplexResult:
    """Per kind and measure: value, 95 % interval, scenarios scored, and why others are not.

    ``rows``: one per replay, ``{"scenario", "kind", "metrics": {...}}``; a measure that is None for a
    replay (it does not apply: no take-over, not talking when interrupted, no audio) is left out of
    that scenario's mean and counted under ``not_applicable``."""
    from vocalbench.stats import mean_ci

    out: DuplexResult = {}
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
        body: KindResult = {"scenarios": len(scenarios), "replays": sum(r["kind"] == kind for r in rows)}
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


def table(result: DuplexResult) -> str:
    """The duplex table as Markdown: one row per kind and measure, value [95 % CI] (n)."""
    lines = ["| scenario kind | measure | value | 95 % CI | n |", "|---|---|---|---|---|"]
    notes: list[str] = []
    for kind, body in result.items():
        for name in (*MEASURES[kind], "ttfa_p50", "ttfa_p95"):
            row = body.get(name)
            if not isinstance(row, dict):  # not measured (a run scored before the measure existed)
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
