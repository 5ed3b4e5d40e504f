"""The duplex report: a table per system (measures with 95 % intervals) and a playable timeline per scenario.

``write_duplex_report(runs, out)`` writes ``out/duplex.html`` and copies each replay's input and
output audio under ``out/duplex_audio/`` (the page is self-contained beside them). The timeline
draws the input (user) and the output (system) waveforms on one time axis, with the scenario's
parts, the pause or interruption span, the server's turn events (speech started / stopped,
responses created / done, truncations) and the output's words marked; "play" plays input and
output together from the cursor, with a moving playhead.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import TypedDict

import numpy as np
from pydantic import JsonValue

from vocalbench.duplex.records import SUBSET, Analysis, ReplayEvent, replay_log, split_key
from vocalbench.duplex.score import KIND_LABELS, LABELS, MEASURES, SCORER, SPEECH
from vocalbench.records import Score

PEAKS_PER_SECOND = 50
MARKED_EVENTS = {"input_audio_buffer.speech_started": "speech started", "input_audio_buffer.speech_stopped":
                 "speech stopped", "response.created": "response", "response.done": "done"}


class Marker(TypedDict):
    """A server event marked on a timeline: when (s, input timeline) and what."""

    t: float
    label: str


class PartMark(TypedDict):
    """A scenario part drawn on a timeline."""

    start: float
    end: float
    text: str


class Timeline(TypedDict):
    """One scored replay as the page draws it: its audio, waveforms, parts, events, words and measures."""

    id: str
    kind: str
    repeat: str
    duration: float
    input: str
    output: str
    peaks_in: list[float]
    peaks_out: list[float]
    parts: list[PartMark]
    user_end: float
    span: tuple[float, float] | None
    events: list[Marker]
    words: list[dict[str, JsonValue]]
    segments: list[dict[str, JsonValue]]
    user_segments: list[dict[str, JsonValue]]
    windows: list[dict[str, JsonValue]]
    words_from: str
    metrics: dict[str, float | None]


def _peaks(path: Path) -> list[float]:
    """Peak amplitude per 20 ms of a wav (the drawn waveform)."""
    from vocalbench.audio import load

    x, sr = load(path)
    step = max(1, sr // PEAKS_PER_SECOND)
    n = x.size // step
    return [round(float(v), 3) for v in np.abs(x[:n * step]).reshape(n, step).max(axis=1)] if n else []


def _events(events: list[ReplayEvent]) -> list[Marker]:
    out: list[Marker] = []
    for ev in events:
        label = MARKED_EVENTS.get(ev.type)
        if ev.truncated_item:
            label = f"barge-in: truncated at {ev.played_ms} ms"
        if ev.type == "response.done" and ev.status not in (None, "completed"):
            label = f"response {ev.status}"
        if label:
            out.append({"t": ev.t, "label": label})
    return out


def _timelines(run_dir: Path, audio_dir: Path, key: str) -> list[Timeline]:
    """One timeline per scored replay, from what scoring wrote into the run store."""
    from vocalbench.audio import info
    from vocalbench.duplex.run import played, scenarios_of
    from vocalbench.runner.store import RunStore

    out: list[Timeline] = []
    if not (run_dir / "store.sqlite").is_file():  # a run made before replays were stored: its table only
        return out
    with RunStore(run_dir) as store:
        scenarios = scenarios_of(store)
        by_key: dict[str, dict[str, Score]] = {}
        for score in store.scores(SUBSET):
            by_key.setdefault(score.sample_id, {})[f"{score.scorer.split('@')[0]}:{score.name}"] = score
        for (_, rkey), reply in sorted(store.replies(SUBSET).items()):
            scenario, k = split_key(rkey)
            sc = scenarios.get(scenario)
            scores = by_key.get(rkey, {})
            speech = scores.get(f"{SCORER.split('@')[0]}:{SPEECH}")
            if sc is None or speech is None or not played(reply) or reply.audio is None:
                continue
            analysis = Analysis.model_validate(speech.details["analysis"])
            folder = Path(reply.audio.path).parent
            name = f"{key}-{scenario}-r{k}"
            for which in ("input", "output"):
                shutil.copyfile(folder / f"{which}.wav", audio_dir / f"{name}-{which}.wav")
            log = replay_log(reply)
            metrics = {n.split(":", 1)[1]: s.value for n, s in scores.items() if not n.endswith(f":{SPEECH}")}
            out.append({
                "id": scenario, "kind": sc.kind, "repeat": f"r{k}", "duration": info(folder / "input.wav").duration,
                "input": f"duplex_audio/{name}-input.wav", "output": f"duplex_audio/{name}-output.wav",
                "peaks_in": _peaks(folder / "input.wav"), "peaks_out": _peaks(folder / "output.wav"),
                "parts": [{"start": p.start, "end": p.end, "text": p.text} for p in sc.parts],
                "user_end": sc.user_end, "span": sc.span, "events": [] if log is None else _events(log.events),
                "words": [w.model_dump() for w in analysis.words],
                "segments": [s.model_dump() for s in analysis.segments],
                "user_segments": [s.model_dump() for s in analysis.user_segments],
                "windows": [w.model_dump() for w in analysis.windows], "words_from": analysis.words_from,
                "metrics": {n: metrics.get(n) for n in (*MEASURES[sc.kind], "ttfa") if n in metrics},
            })
    return out


def split_duplex(paths: Sequence[str | Path]) -> tuple[list[Path], list[str | Path]]:
    """(duplex run folders among ``paths`` or their en/ and zh/, the other paths as given)."""
    duplex: list[Path] = []
    rest: list[str | Path] = []
    for raw in paths:
        p = Path(raw)
        found = [q for q in (p, p / "en", p / "zh") if (q / "duplex.json").is_file()]
        if found:
            duplex += found
        else:
            rest.append(raw)
    return duplex, rest


def write_duplex_report(runs: Sequence[Path], out_dir: Path) -> Path:
    """Write ``out_dir/duplex.html`` for the duplex run folders ``runs``; returns its path."""
    from vocalbench.report.site import _env

    out_dir.mkdir(parents=True, exist_ok=True)
    audio_dir = out_dir / "duplex_audio"
    audio_dir.mkdir(exist_ok=True)
    systems = []
    for i, run in enumerate(runs):
        body = json.loads((run / "duplex.json").read_text(encoding="utf-8"))
        rows = []
        for kind, res in body["kinds"].items():
            for name in (*MEASURES[kind], "ttfa_p50", "ttfa_p95"):
                r = res.get(name)
                if r is None:  # a run scored before the measure existed
                    continue
                rows.append({"kind": KIND_LABELS[kind], "measure": LABELS[name], "value": r["value"],
                             "ci": r["ci95"], "n": r["n"], "na": r["not_applicable"],
                             "validity": r.get("validity"), "unscored": r.get("unscored") or {}})
        systems.append({"system": body["system"], "lang": body["lang"], "set": body["set"],
                        "repeats": body["repeats"], "turn_detection": body["turn_detection"], "rows": rows,
                        "timelines": _timelines(run, audio_dir, f"s{i}")})
    css = (Path(__file__).parent / "templates" / "report.css").read_text(encoding="utf-8")
    html = _env().get_template("duplex.html.j2").render(systems=systems, css=css)
    path = out_dir / "duplex.html"
    path.write_text(html, encoding="utf-8")
    return path
