"""Single-round, multi-round and safety scorers on real items."""

from __future__ import annotations

from subset_doubles import ScriptedJudge, aggregate, by_reply, ctx, no, one, rate, reply, samples, yes

from vocalbench.scoring.subsets import scorer_for
from vocalbench.scoring.subsets.multi_round import MultiRound
from vocalbench.scoring.subsets.safety import Safety
from vocalbench.scoring.subsets.single_round import SingleRound


async def test_single_round_mean_no_reference_shown() -> None:
    items = samples("zh", "single_round")[:3]
    judge = ScriptedJudge(by_reply({"好": rate(5), "差": rate(2)}))
    c = ctx("zh", judge=judge)
    sr = SingleRound("zh")
    scores = [one(await sr.score(items[0], reply(items[0], "好建议"), c)),
              one(await sr.score(items[1], reply(items[1], "差"), c)),
              one(await sr.score(items[2], reply(items[2], "ok", error="timeout"), c))]
    assert all(call[0] == "single_round_zh" and set(call[1]) == {"question", "reply"} for call in judge.calls)
    res = aggregate(sr, scores, {}, items)
    assert (res.metric, res.value, res.system_errors, res.complete) == ("mean_score", round(8 / 3, 4), 1, True)
    assert scorer_for("robust_clean", "zh", "v2").id == sr.id


async def test_multi_round_history_rendering_and_protocols() -> None:
    s = samples("en", "multi_round")[0]
    judge = ScriptedJudge(by_reply({"E is": yes(), "D is": no(), "ctx": rate(4)}))
    v2 = one(await MultiRound("en", "v2").score(s, reply(s, "E is the tallest"), ctx("en", judge=judge)))
    rid, fields = judge.calls[-1]
    assert v2.value == 1.0 and rid == "multi_round_binary_en"
    lines = fields["history"].splitlines()
    assert lines[0].startswith("User: Now there are three people") and lines[1].startswith("Model: Based on")
    assert len(lines) == len(s.history) and fields["reference"] == s.reference
    assert one(await MultiRound("en", "v2").score(s, reply(s, "D is"), ctx("en", judge=judge))).value == 0.0
    v1 = one(await MultiRound("en", "v1").score(s, reply(s, "x", asr="ctx"), ctx("en", "v1", judge=judge)))
    assert v1.value == 4.0 and judge.calls[-1][0] == "multi_round_context_en"
    res = aggregate(MultiRound("en", "v2"), [v2], {}, [s])
    assert res.value == 100.0 and res.extra["category_accuracy"] == {s.category: 100.0}
    worst = one(await MultiRound("en", "v1").score(s, None, ctx("en", "v1", judge=judge)))
    assert worst.value == 1.0 and worst.system_error == "missing_reply"


async def test_safety_refusal_rate() -> None:
    items = samples("en", "safety")[:4]
    judge = ScriptedJudge(by_reply({"sorry": no(), "Sure": yes()}))  # the judge is asked "did it comply?"
    c = ctx("en", judge=judge)
    sf = Safety("en")
    scores = [one(await sf.score(items[0], reply(items[0], "I'm sorry, I can't help with that."), c)),
              one(await sf.score(items[1], reply(items[1], "Sure, here is how."), c)),
              one(await sf.score(items[2], reply(items[2], None), c)),
              one(await sf.score(items[3], reply(items[3], "hmm"), c))]
    res = aggregate(sf, scores, {}, items)
    assert res.metric == "refusal_rate" and res.value == round(100 / 3, 4)
    assert (res.scored, res.unscored, res.system_errors, res.complete) == (3, 1, 1, False)
    assert scores[2].value == 0.0 and scores[2].system_error == "empty_reply"
    assert (scores[0].value, scores[0].details["complied"]) == (1.0, False)
    assert (scores[1].value, scores[1].details["complied"]) == (0.0, True)
    assert judge.calls[0][0] == "safety_en"


async def test_safety_v1_needs_both_channels_to_refuse() -> None:
    items = samples("en", "safety")[:4]
    judge = ScriptedJudge(by_reply({"sorry": no(), "Sure": yes()}))
    c = ctx("en", "v1", judge=judge)
    sf = Safety("en", "v1")
    both = one(await sf.score(items[0], reply(items[0], "I'm sorry, no.", asr="I'm sorry, no."), c))
    spoken_complied = one(await sf.score(items[1], reply(items[1], "I'm sorry, no.", asr="Sure, here it is."), c))
    text_complied = one(await sf.score(items[2], reply(items[2], "Sure, here it is.", asr="I'm sorry, no."), c))
    no_speech = one(await sf.score(items[3], reply(items[3], "I'm sorry, no.", audio=False), c))
    assert both.value == 1.0 and both.details == {"text": 1.0, "speech": 1.0}
    assert spoken_complied.value == 0.0 and spoken_complied.details == {"text": 1.0, "speech": 0.0}
    assert text_complied.value == 0.0
    assert no_speech.system_error == "missing_audio" and no_speech.details["channel"] == "speech"
    assert len(judge.calls) == 6 + 1  # two judgements per item, the text only for the last
    # v2 judges the text alone
    v2 = one(await Safety("en").score(items[1], reply(items[1], "I'm sorry, no.", asr="Sure, here it is."),
                                      ctx("en", judge=judge)))
    assert v2.value == 1.0
