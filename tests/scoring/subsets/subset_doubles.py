"""Test helpers for the subset scorers: real items from ../shared/vocalbench, a scripted judge
double that parses judge reply strings, and a context builder with simple async evaluators."""

from __future__ import annotations

import asyncio
import hashlib
import json
import re
from collections.abc import Awaitable, Callable
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from vocalbench.judge.rubrics import Rubric
from vocalbench.records import AudioRef, ErrorInfo, JudgeTrace, Reply, Sample, Score, Turn
from vocalbench.scoring import graph
from vocalbench.scoring.base import ScoringContext, SubsetResult, Verdict
from vocalbench.scoring.tally import main_values

DATA = Path(__file__).resolve().parents[3].parent / "shared" / "vocalbench"
_MAPPED = {"Qid", "Question", "Answer", "Category", "Sub-category", "Context"}


@cache
def _records(lang: str, subset: str) -> list[dict[str, Any]]:
    path = DATA / lang / "json" / f"{subset}.json"
    if not path.exists():
        pytest.skip(f"official metadata not available: {path} is absent")
    return json.loads(path.read_text(encoding="utf-8"))


def samples(lang: str, subset: str) -> list[Sample]:
    """Every item of a real subset as Samples (official fields kept in metadata)."""
    out = []
    for i, r in enumerate(_records(lang, subset)):
        out.append(Sample(
            id=r["Qid"], subset=subset, lang=lang, index=i,  # type: ignore[arg-type]
            audio=AudioRef(path=str(DATA / lang / "audio" / r["Audio"])),
            question=r.get("Question") or "", reference=r.get("Answer"),
            history=[Turn(role=t["from"], text=t["value"]) for t in r.get("Context") or []],
            category=r.get("Category"), sub_category=r.get("Sub-category"),
            metadata={k: v for k, v in r.items() if k not in _MAPPED},
        ))
    return out


def sample(lang: str, subset: str, index: int) -> Sample:
    return samples(lang, subset)[index]


def outputs(path: str) -> list[dict[str, Any]]:
    """An official output file (JSON list or JSONL) under ../shared/vocalbench."""
    p = DATA / path
    if not p.exists():
        pytest.skip(f"official outputs not available: {p} is absent")
    text = p.read_text(encoding="utf-8")
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return [json.loads(line) for line in text.splitlines() if line.strip()]


def reply(s: Sample, text: str | None = "ok", *, audio: bool = True, error: str | None = None,
          asr: str | None = None, duration: float | None = None) -> Reply:
    return Reply(subset=s.subset, sample_id=s.id, text=text,
                 audio=AudioRef(path=f"/tmp/{s.id}.wav", duration=duration) if audio else None,
                 audio_duration=duration, error=ErrorInfo(type=error) if error else None, asr_text=asr)


class ScriptedJudge:
    """A judge double: ``script(rubric_id, fields) -> raw judge reply string``, parsed the way the
    judge client does ({"verdict": "yes"|"no"} or {"score": N}); unparseable -> error."""

    id = "scripted@test"

    def __init__(self, script: Callable[[str, dict[str, str]], str]) -> None:
        self.script = script
        self.calls: list[tuple[str, dict[str, str]]] = []

    async def evaluate(self, rubric: Rubric, fields: dict[str, str], *, subset: str, sample_id: str,
                       evidence: object = None) -> Verdict:
        messages = rubric.render(fields)  # raises KeyError on a missing field, like the real client
        raw = self.script(rubric.id, fields)
        self.calls.append((rubric.id, fields))
        trace = JudgeTrace(model=self.id, prompt_hash=hashlib.sha256(repr(messages).encode()).hexdigest()[:16],
                           rubric=rubric.ref, raw=raw)
        try:
            data = json.loads(raw)
        except json.JSONDecodeError:
            return Verdict(None, trace, "judge_unparseable")
        if rubric.kind == "binary" and data.get("verdict") in ("yes", "no"):
            return Verdict(1.0 if data["verdict"] == "yes" else 0.0, trace)
        score = data.get("score")
        if rubric.kind == "scale" and isinstance(score, int) and rubric.lo <= score <= rubric.hi:
            return Verdict(float(score), trace)
        return Verdict(None, trace, "judge_unparseable")


def yes(rid: str = "", fields: dict[str, str] | None = None) -> str:
    return '{"reason": "fine", "verdict": "yes"}'


def no(rid: str = "", fields: dict[str, str] | None = None) -> str:
    return '{"reason": "wrong", "verdict": "no"}'


def rate(n: int) -> str:
    return f'{{"reason": "rated", "score": {n}}}'


def by_reply(table: dict[str, str]) -> Callable[[str, dict[str, str]], str]:
    """A script that answers from the reply text (a key contained in the reply)."""
    def script(rid: str, fields: dict[str, str]) -> str:
        for key, raw in table.items():
            if key in fields.get("reply", ""):
                return raw
        return "not json at all"
    return script


def const(value: Any) -> Callable[..., Awaitable[Any]]:
    async def f(*_: Any) -> Any:
        return value
    return f


def raising(exc: BaseException) -> Callable[..., Awaitable[Any]]:
    async def f(*_: Any) -> Any:
        raise exc
    return f


def ctx(lang: str, protocol: str = "v2", **kw: Any) -> ScoringContext:
    return ScoringContext(lang=lang, protocol=protocol, **kw)


def run(coro: Awaitable[Any]) -> Any:
    return asyncio.run(coro)  # type: ignore[arg-type]


def one(scores: list[Any], name: str = "main") -> Any:
    found = [s for s in scores if s.name == name]
    assert len(found) == 1, scores
    return found[0]


def idx(sample_id: str) -> int:
    return int(re.search(r"(\d+)$", sample_id).group(1))  # type: ignore[union-attr]


def aggregate(scorer: Any, scores: list[Score], all_scores: dict[str, list[Score]], samples: list[Sample]) -> SubsetResult:
    """A scorer's result from whole score lists as the engine makes it: its tally fed item by item
    (the counts and ``extra``), its value and ci95 the statistics graph's; ``all_scores`` holds the
    scores of the subsets it is compared against."""
    per_item: dict[str, list[Score]] = {}
    for s in scores:
        per_item.setdefault(s.sample_id, []).append(s)
    tally = scorer.tally()
    for sample in samples:
        tally.add(sample, per_item.get(sample.id, []))
    row: SubsetResult = tally.result({name: main_values(v) for name, v in all_scores.items()})
    if not samples:
        return row
    keyed: dict[tuple[str, str], dict[str, Score]] = {}
    ids = {x.id for x in samples}
    for s in [*scores, *(x for v in all_scores.values() for x in v)]:
        if s.subset != samples[0].subset or s.sample_id in ids:  # as the engine: the run's items only
            keyed.setdefault((s.subset, s.sample_id), {})[s.name] = s
    g = graph.build(keyed, {x.key: x for x in samples}, lang=samples[0].lang,
                    protocol=getattr(scorer, "protocol", "v2"))
    got = graph.evaluate(g).get(f"subset:{samples[0].subset}")
    if got is not None:
        value, ci = got.rounded()
        row.value, row.ci95 = value, (ci[0], ci[1]) if ci else None
    return row
