"""Acoustic (UTMOS, clarity WER/PER) and latency aggregation."""

from __future__ import annotations

import pytest
from subset_doubles import const, ctx, one, outputs, raising, reply, samples

from vocalbench.components.base import ComponentUnavailable
from vocalbench.records import ErrorInfo, Reply, Timings
from vocalbench.scoring.subsets import AcousticScorer, aggregate_acoustic, aggregate_latency


async def test_en_clarity_corpus_level_and_utmos() -> None:
    items = samples("en", "single_round")[:4]
    ac = AcousticScorer("en")
    c = ctx("en", mos=const(4.0))
    scores = []
    numbered = reply(items[0], "1. Rest. 2. Drink water.", asr="first, rest. second, drink water.")
    scores += await ac.score(items[0], numbered, c)
    scores += await ac.score(items[1], reply(items[1], "the cat sat on the mat", asr="the cat sat on a mat"), c)
    scores += await ac.score(items[2], reply(items[2], "wash your hands well", audio=False), c)  # all deletions
    scores += await ac.score(items[3], None, c)
    clarity = one(scores[:2], "clarity")
    assert clarity.details["dist"] == 0 and clarity.details["len"] == 5
    res = aggregate_acoustic(scores, "en")
    assert set(res) == {"utmos", "wer"}
    # (0 + 1 + 4) / (5 + 6 + 4) words
    assert res["wer"].value == round(5 / 15 * 100, 4) and res["wer"].extra == {"dist": 5, "len": 15}
    assert res["wer"].system_errors == 2 and res["wer"].complete
    assert res["utmos"].value == 4.0 and res["utmos"].scored == 2 and res["utmos"].system_errors == 2


async def test_zh_per_on_official_outputs_and_unscored() -> None:
    items = {s.id: s for s in samples("zh", "chinese_knowledge")}
    asr = outputs("zh/outputs/qwen3-omni/json_asr/chinese_knowledge.json")
    ac = AcousticScorer("zh")
    c = ctx("zh", mos=raising(ComponentUnavailable("mos_unavailable", "no model")))
    scores = []
    for r in asr:
        s = items[r["Qid"]]
        scores += await ac.score(s, reply(s, r["Response"], asr=r["Response_hyp"]), c)
    first = next(x for x in scores if x.name == "clarity" and x.sample_id == "chinese_knowledge-0000")
    assert (first.details["dist"], first.details["len"]) == (4, 236)
    res = aggregate_acoustic(scores, "zh")
    dist = sum(x.details["dist"] for x in scores if x.name == "clarity")
    length = sum(x.details["len"] for x in scores if x.name == "clarity")
    assert res["per"].value == round(dist / length * 100, 4) and res["per"].metric == "per"
    assert res["per"].value == 2.8678 and res["per"].extra["per_cn2an"] == 2.8678  # no number read differently
    assert res["utmos"].value is None and res["utmos"].unscored == len(asr) and not res["utmos"].complete
    assert res["utmos"].unscored_reasons == {"mos_unavailable": len(asr)}


async def test_clarity_needs_a_transcript() -> None:
    s = samples("en", "single_round")[0]
    sc = one(await AcousticScorer("en").score(s, reply(s, "hello"), ctx("en")), "clarity")
    assert sc.unscored == "asr_not_configured" and sc.value is None
    heard = ctx("en", transcribe=lambda r, lang: const("hello")())
    assert one(await AcousticScorer("en").score(s, reply(s, "hello"), heard), "clarity").value == 0.0


def _reply(i: int, first: float | None, last: float | None, dur: float | None, *, failed: bool = False,
           timed: bool = True) -> Reply:
    t = Timings(request_sent=0.0, first_audio=first, last_chunk=last) if timed else None
    return Reply(subset="single_round", sample_id=f"single_round-{i:03d}", text="x", timings=t, audio_duration=dur,
                 error={"type": "timeout"} if failed else None)


def test_latency_medians_and_exclusions() -> None:
    replies = [_reply(0, 0.1, 1.0, 10.0), _reply(1, 0.2, 2.0, 10.0), _reply(2, 0.4, 3.0, 10.0),
               _reply(3, 0.3, 4.0, 10.0), _reply(4, 9.9, 99.0, 1.0, failed=True),
               _reply(5, None, None, None, timed=False)]
    res = aggregate_latency(replies)
    fcl, rtf = res["fcl_ms"], res["rtf"]
    assert fcl.value == pytest.approx(250.0) and rtf.value == pytest.approx(0.25)
    assert fcl.extra["mean"] == pytest.approx(250.0) and fcl.extra["p90"] == pytest.approx(370.0)
    assert fcl.extra["p99"] == pytest.approx(397.0) and fcl.extra["origin"] == ["harness-monotonic"]
    assert (fcl.n, fcl.scored, fcl.unscored, fcl.system_errors, fcl.complete) == (6, 4, 1, 1, False)
    assert fcl.ci95 is not None and fcl.ci95[0] <= fcl.value <= fcl.ci95[1]
    empty = aggregate_latency([_reply(0, None, None, None, timed=False)])
    assert empty["fcl_ms"].value is None and empty["rtf"].value is None


async def test_imported_text_without_audio_leaves_acoustics_unscored() -> None:
    # the llama-omni single_round outputs: text, no wav, no transcript; 190 of 200 outputs missing
    items = samples("en", "single_round")
    texts = {r["question_id"]: r["prediction"] for r in outputs("en/outputs/llama-omni/json/single_round.json")}
    ac, c = AcousticScorer("en"), ctx("en", mos=const(4.0))
    scores = []
    for i, s in enumerate(items):
        text = texts.get(f"chat-{i:03d}")
        if i < 10 and text is not None:
            r = reply(s, text, audio=False).model_copy(update={"source": "imported"})
        else:
            r = Reply(subset=s.subset, sample_id=s.id, source="imported", error=ErrorInfo(type="missing_reply"))
        scores += await ac.score(s, r, c)
    res = aggregate_acoustic(scores, "en")
    # was: WER 100.0 complete (every word "deleted"), UTMOS of no replies
    assert res["wer"].value is None and not res["wer"].complete
    assert res["wer"].unscored_reasons == {"no_reply_audio": 10, "no_reply_text": 190}
    assert res["utmos"].value is None and not res["utmos"].complete
    assert res["utmos"].unscored_reasons == {"no_reply_audio": 10} and res["utmos"].system_errors == 190
    # a system asked to speak that returned no audio is a system failure with the worst value
    generated = one(await ac.score(items[0], reply(items[0], "hello there", audio=False), c), "clarity")
    assert generated.system_error == "missing_audio" and generated.value == 100.0


async def test_item_clarity_wherever_a_transcript_is_at_hand() -> None:
    from vocalbench.scoring.subsets.rules import item_clarity

    s = samples("zh", "chinese_knowledge")[0]
    asr = {r["Qid"]: r for r in outputs("zh/outputs/qwen3-omni/json_asr/chinese_knowledge.json")}[s.id]
    imported = reply(s, asr["Response"], audio=False, asr=asr["Response_hyp"])
    per = await item_clarity(s, imported, ctx("zh"), "knowledge_zh.v2@1")
    assert per is not None and per.name == "per" and round(per.value, 6) == 0.016949  # official per-item PER
    assert (per.details["dist"], per.details["len"]) == (4, 236) and per.details["hyp"] == asr["Response_hyp"]
    heard = ctx("zh", transcribe=lambda r, lang: const(asr["Response_hyp"])())
    spoken = reply(s, asr["Response"])
    assert await item_clarity(s, spoken, heard, "x@1") is None  # v2: no ASR run only for clarity
    v1 = await item_clarity(s, spoken, ctx("zh", "v1", transcribe=heard.transcribe), "x@1")
    assert v1 is not None and v1.value == per.value
    assert await item_clarity(s, reply(s, None, asr="x"), ctx("zh"), "x@1") is None  # no text
    assert await item_clarity(s, reply(s, "文字", error="timeout", asr="x"), ctx("zh"), "x@1") is None
