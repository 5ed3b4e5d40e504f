"""Knowledge scorers: en substring rule (reproduces llama-omni), zh substring-or-judge, dialect PR."""

from __future__ import annotations

import pytest
from subset_doubles import (
    ScriptedJudge,
    aggregate,
    by_reply,
    ctx,
    no,
    one,
    outputs,
    raising,
    reply,
    sample,
    samples,
    yes,
)

from vocalbench.components.base import ComponentUnavailable
from vocalbench.records import Score
from vocalbench.scoring.subsets import scorer_for
from vocalbench.scoring.subsets.knowledge import KnowledgeEn, KnowledgeZh


async def _score_llama_omni(protocol: str) -> dict[str, float | None]:
    items = samples("en", "knowledge")
    asr = {r["question_id"]: r for r in outputs("en/outputs/llama-omni/json_asr/knowledge.json")}
    scorer = scorer_for("knowledge", "en", protocol)
    c = ctx("en", protocol)  # no ASR configured: v1 must use the imported transcripts
    scores: list[Score] = []
    for s in items:
        out = asr[s.id]
        scores += await scorer.score(s, reply(s, out["prediction"], audio=False, asr=out["asr_pred"]), c)
    res = aggregate(scorer, scores, {"knowledge": scores}, items)
    assert res.n == res.scored == 2000 and res.complete and res.metric == "accuracy"
    assert res.ci95 is not None and res.ci95[0] < res.value < res.ci95[1]  # type: ignore[operator]
    return {"value": res.value, "wb": res.extra["word_boundary_accuracy"]}


async def test_en_knowledge_reproduces_llama_omni_text_v2() -> None:
    assert await _score_llama_omni("v2") == {"value": 54.6, "wb": 53.0}


async def test_en_knowledge_reproduces_llama_omni_asr_v1() -> None:
    assert await _score_llama_omni("v1") == {"value": 37.35, "wb": 35.85}


async def test_en_substring_vs_word_boundary_on_real_item() -> None:
    s = sample("en", "knowledge", 0)  # Answer: Leonardo da Vinci
    k = KnowledgeEn("v2")
    scores = await k.score(s, reply(s, "It was painted by Leonardo da-Vinci."), ctx("en"))
    assert one(scores).value == 1.0 and one(scores, "word_boundary").value == 1.0
    scores = await k.score(s, reply(s, "Leonardo da Vincis workshop"), ctx("en"))
    assert one(scores).value == 1.0 and one(scores, "word_boundary").value == 0.0


async def test_en_system_failure_and_v1_transcription_paths() -> None:
    s = sample("en", "knowledge", 0)
    k2, k1 = KnowledgeEn("v2"), KnowledgeEn("v1")
    for bad in (None, reply(s, "   "), reply(s, "x", error="timeout")):
        main = one(await k2.score(s, bad, ctx("en")))
        assert main.value == 0.0 and main.system_error and not main.unscored
    # v1 without imported transcript: ASR via ctx; missing audio is a system failure
    assert one(await k1.score(s, reply(s, "x", audio=False), ctx("en", "v1"))).system_error == "missing_audio"
    heard = ctx("en", "v1", transcribe=lambda r, lang: _text("leonardo da vinci did"))
    assert one(await k1.score(s, reply(s, "nothing"), heard)).value == 1.0
    down = ctx("en", "v1", transcribe=raising(ComponentUnavailable("asr_unavailable", "no model")))
    main = one(await k1.score(s, reply(s, "x"), down))
    assert main.unscored == "asr_unavailable" and main.value is None
    assert one(await k1.score(s, reply(s, "x"), ctx("en", "v1"))).unscored == "asr_not_configured"


async def _text(t: str) -> str:
    return t


async def test_zh_substring_then_judge() -> None:
    s = sample("zh", "chinese_knowledge", 0)  # Answer: 少林
    k = KnowledgeZh("chinese_knowledge")
    judge = ScriptedJudge(by_reply({"嵩山": yes(), "白马寺": no()}))
    c = ctx("zh", judge=judge)
    hit = one(await k.score(s, reply(s, "是少林寺。"), c))
    assert hit.value == 1.0 and hit.details["rule"] == "substring" and judge.calls == []
    alias = one(await k.score(s, reply(s, "是嵩山的那座禅宗祖庭。"), c))
    assert alias.value == 1.0 and alias.details["rule"] == "judge" and alias.judge is not None
    assert judge.calls[0][0] == "knowledge_zh" and judge.calls[0][1]["reference"] == "少林"
    wrong = one(await k.score(s, reply(s, "是白马寺。"), c))
    assert wrong.value == 0.0 and wrong.system_error is None
    garbled = one(await k.score(s, reply(s, "不知道"), c))
    assert garbled.unscored == "judge_unparseable" and garbled.value is None
    nojudge = one(await k.score(s, reply(s, "不知道"), ctx("zh")))
    assert nojudge.unscored == "judge_not_configured"
    # a substring hit needs no judge at all
    assert one(await k.score(s, reply(s, "少林寺"), ctx("zh"))).value == 1.0


async def test_zh_aggregate_counts_unscored_and_failures() -> None:
    items = samples("zh", "general_knowledge")[:4]
    k = KnowledgeZh("general_knowledge")
    c = ctx("zh", judge=ScriptedJudge(by_reply({"对": yes()})))
    scores = [
        *await k.score(items[0], reply(items[0], f"答案是{items[0].reference}"), c),
        *await k.score(items[1], reply(items[1], "对的"), c),
        *await k.score(items[2], None, c),
        *await k.score(items[3], reply(items[3], "???"), c),
    ]
    res = aggregate(k, scores, {}, items)
    assert (res.value, res.scored, res.unscored, res.system_errors, res.complete) == (66.6667, 3, 1, 1, False)
    assert res.unscored_reasons == {"judge_unparseable": 1}


@pytest.mark.parametrize("dialect,mandarin,pr", [(1.0, 0.5, 100.0), (0.5, 1.0, 50.0)])
async def test_dialect_preserve_rate_capped(dialect: float, mandarin: float, pr: float) -> None:
    s = sample("zh", "chinese_knowledge", 0)
    d = s.model_copy(update={"subset": "dialect"})
    m = s.model_copy(update={"subset": "dialect_mandarin"})
    k = scorer_for("dialect", "zh", "v2")
    sd = [Score(subset="dialect", sample_id=d.id, value=dialect, scorer="t@1"),
          Score(subset="dialect", sample_id="x-1", value=dialect, scorer="t@1")]
    sm = [Score(subset="dialect_mandarin", sample_id=m.id, value=mandarin, scorer="t@1")]
    d2 = d.model_copy(update={"id": "x-1"})
    res = aggregate(k, sd, {"dialect": sd, "dialect_mandarin": sm}, [d, d2])
    assert res.extra["preserve_rate"] == pr
