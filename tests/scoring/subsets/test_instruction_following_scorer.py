"""Instruction following: sub-type criteria, paralinguistic checks (match, emotion, strict speed
windows), failure vs unscored, per-type rates."""

from __future__ import annotations

import pytest
from subset_doubles import ScriptedJudge, aggregate, by_reply, const, ctx, no, one, raising, reply, samples, yes

from vocalbench.components.base import ComponentUnavailable
from vocalbench.records import AudioRef, Reply, Sample
from vocalbench.scoring.subsets.instruction_following import (
    CRITERIA,
    V1_CRITERIA,
    V1_SPOKEN_FORMAT_AS_OFFICIAL,
    InstructionFollowing,
    criterion_key,
    reference_duration,
    speed_window,
    split_instruction,
    target_emotion,
    within,
)

EMO = {"angry": 0.0, "happy": 0.0, "neutral": 0.0, "sad": 0.0, "surprised": 0.0}


def _with_query(s: Sample, seconds: float) -> Sample:
    return s.model_copy(update={"audio": AudioRef(path=s.audio.path if s.audio else "q.wav", duration=seconds)})


def _sentence(s: Sample) -> str:
    return split_instruction(s.question, s.lang)[1].strip()


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_every_sub_type_in_the_data_has_a_criterion(lang: str) -> None:
    keys = {criterion_key(s, lang) for s in samples(lang, "instruction_following") if s.index >= 200}
    assert keys == set(CRITERIA[lang])
    assert len(keys) == (12 if lang == "en" else 13)  # zh 900-999: one Mandarin-specific criterion


async def test_judged_items_never_see_the_answer() -> None:
    items = samples("en", "instruction_following")
    judge = ScriptedJudge(by_reply({"good": yes(), "bad": no()}))
    c = ctx("en", judge=judge)
    f = InstructionFollowing("en")
    with_answer, without = items[400], items[200]
    assert with_answer.reference  # the en data has an Answer here; the official judge never sees it
    assert one(await f.score(with_answer, reply(with_answer, "good"), c)).value == 1.0
    rid, fields = judge.calls[-1]
    assert rid == "instruction_en" and set(fields) == {"question", "criterion", "reply"}
    assert fields["criterion"] == CRITERIA["en"]["Conditional"]
    assert one(await f.score(without, reply(without, "bad"), c)).value == 0.0
    assert judge.calls[-1][1]["criterion"] == CRITERIA["en"]["Num"]
    situation = items[700]
    assert situation.sub_category is None
    await f.score(situation, reply(situation, "good"), c)
    assert judge.calls[-1][1]["criterion"] == CRITERIA["en"]["Situation"]
    zh = samples("zh", "instruction_following")[950]
    scored_zh = one(await InstructionFollowing("zh").score(zh, reply(zh, "good"), ctx("zh", judge=judge)))
    assert judge.calls[-1][0] == "instruction_zh"
    assert judge.calls[-1][1]["criterion"] == CRITERIA["zh"]["Mandarin specific"]
    assert scored_zh.details["type"] == zh.sub_category  # rates stay per sub-category
    assert scored_zh.details["criterion"] == "Mandarin specific"  # and the grader learns the criterion's key


def test_speed_reference_by_hand() -> None:
    en = samples("en", "instruction_following")[100]  # "... at half my speaking speed. <28 words>"
    assert speed_window(en.question, "en") == (1.5, 2.5)
    assert reference_duration(en.question, 37.0, "en") == pytest.approx(28.0)  # 28 of 37 words
    zh = samples("zh", "instruction_following")[100]  # 请用两倍于我的语速，跟我重复下面这句话。<28 Han chars>
    assert speed_window(zh.question, "zh") == (0.25, 0.75)
    assert reference_duration(zh.question, 46.0, "zh") == pytest.approx(28.0)  # 28 of 46 Han characters
    assert speed_window(samples("zh", "instruction_following")[101].question, "zh") == (1.5, 2.5)  # 慢一倍
    assert not within(42.0, 28.0, (1.5, 2.5)) and within(42.01, 28.0, (1.5, 2.5))
    assert within(69.99, 28.0, (1.5, 2.5)) and not within(70.0, 28.0, (1.5, 2.5))


def test_target_emotions() -> None:
    en = samples("en", "instruction_following")
    zh = samples("zh", "instruction_following")
    assert target_emotion(en[50], "en") == "angry"
    assert target_emotion(zh[50], "zh") == "sad"  # 伤心
    assert target_emotion(zh[51], "zh") == "happy" and target_emotion(zh[54], "zh") == "surprised"  # 惊喜
    assert target_emotion(zh[199], "zh") == "neutral"  # 中立
    assert {target_emotion(s, "zh") for s in zh[50:100] + zh[150:200]} == {"angry", "happy", "neutral", "sad",
                                                                           "surprised"}


async def test_plain_repeat_match_threshold_en() -> None:
    s = samples("en", "instruction_following")[1]  # plain repeat; emotion classifier never needed
    text = _sentence(s)  # 17 words
    words = text.split()
    judge = ScriptedJudge(lambda rid, f: yes())
    off = raising(ComponentUnavailable("emotion_model_unavailable", "offline"))
    f = InstructionFollowing("en")
    ok = one(await f.score(s, reply(s, text, asr=text.lower()), ctx("en", judge=judge, emotion=off)))
    assert ok.value == 1.0 and ok.details["checks"]["match"]["rate"] == 0.0
    assert judge.calls[0][0] == "instruction_repeat_en"
    assert set(judge.calls[0][1]) == {"question", "reply"}  # the official judge gets no extracted sentence
    hyp3 = " ".join(["zzz"] * 3 + words[3:])  # 3/17 = 0.176 < 0.2
    assert one(await f.score(s, reply(s, text, asr=hyp3), ctx("en", judge=judge))).value == 1.0
    hyp4 = " ".join(["zzz"] * 4 + words[4:])  # 4/17 = 0.235
    bad = one(await f.score(s, reply(s, text, asr=hyp4), ctx("en", judge=judge)))
    assert bad.value == 0.0 and bad.details["failed_on"] == "match"
    refused = ScriptedJudge(lambda rid, f: no())
    nope = one(await f.score(s, reply(s, text, asr=text), ctx("en", judge=refused)))
    assert nope.value == 0.0 and nope.details["failed_on"] == "content" and nope.judge is not None


async def test_emotion_items_need_the_classifier() -> None:
    s = samples("en", "instruction_following")[50]  # angry
    text = _sentence(s)
    judge = ScriptedJudge(lambda rid, f: yes())
    f = InstructionFollowing("en")

    async def score(emotion):  # noqa: ANN001, ANN202
        return one(await f.score(s, reply(s, text, asr=text), ctx("en", judge=judge, emotion=emotion)))

    five = await score(const({**EMO, "angry": 0.6, "sad": 0.4}))
    assert five.value == 1.0 and five.details["checks"]["emotion"]["basis"] == "5"
    # with <unk> the official six-way value decides: 0.45 fails, though 0.45 / 0.5 = 0.9 over five
    six = await score(const({**EMO, "angry": 0.45, "sad": 0.05, "unknown": 0.5}))
    assert six.value == 0.0 and six.details["checks"]["emotion"] == {"ok": False, "target": "angry", "p": 0.45,
                                                                     "basis": "5+unk"}
    assert (await score(const({**EMO, "angry": 0.55, "sad": 0.05, "unknown": 0.4}))).value == 1.0
    at_half = await score(const({**EMO, "angry": 0.5, "sad": 0.5}))
    assert at_half.value == 0.0 and at_half.details["failed_on"] == "emotion"  # strictly > 0.5
    off = await score(raising(ComponentUnavailable("emotion_model_unavailable", "offline")))
    assert off.unscored == "emotion_model_unavailable" and off.value is None and off.system_error is None
    assert (await score(None)).unscored == "emotion_not_configured"
    # a definite failure elsewhere decides the item even without the classifier
    wrong = one(await f.score(s, reply(s, text, asr="something else entirely"), ctx("en", judge=judge, emotion=None)))
    assert wrong.value == 0.0 and wrong.details["failed_on"] == "match"


async def test_speed_windows_strict_and_duration_sources() -> None:
    base = samples("en", "instruction_following")[100]  # half speed, ref = 28/37 of the query
    s = _with_query(base, 37.0)
    text = _sentence(s)
    judge = ScriptedJudge(lambda rid, f: yes())
    f = InstructionFollowing("en")
    c = ctx("en", judge=judge)
    for seconds, ok in [(42.0, 0.0), (42.01, 1.0), (69.99, 1.0), (70.0, 0.0), (30.0, 0.0)]:
        sc = one(await f.score(s, reply(s, text, asr=text, duration=seconds), c))
        assert sc.value == ok, seconds
    judge.calls.clear()
    slow = one(await f.score(s, reply(s, text, asr=text, duration=10.0), c))
    assert slow.details["failed_on"] == "speed" and judge.calls == []  # stops before the judge
    # durations read through ctx.audio_duration when the records do not carry them
    lookup = ctx("en", judge=judge, audio_duration=lambda path: 37.0 if path == base.audio.path else 50.0)
    assert one(await f.score(base, reply(base, text, asr=text), lookup)).value == 1.0
    unknown = one(await f.score(base, reply(base, text, asr=text), ctx("en", judge=judge)))
    assert unknown.unscored == "audio_duration_unavailable"


async def test_speed_and_emotion_zh() -> None:
    base = samples("zh", "instruction_following")[151]  # 两倍 + 生气
    q = base.question
    sentence = _sentence(base)
    ref = reference_duration(q, 20.0, "zh")
    s = _with_query(base, 20.0)
    judge = ScriptedJudge(lambda rid, f: yes())
    angry = const({**EMO, "angry": 0.9, "neutral": 0.1})
    f = InstructionFollowing("zh")
    c = ctx("zh", judge=judge, emotion=angry)
    good = one(await f.score(s, reply(s, sentence, asr=sentence, duration=ref * 0.5), c))
    assert good.value == 1.0 and judge.calls[-1][0] == "instruction_repeat_zh"
    assert good.details["checks"]["emotion"]["target"] == "angry"
    too_slow = one(await f.score(s, reply(s, sentence, asr=sentence, duration=ref * 0.75), c))
    assert too_slow.value == 0.0 and too_slow.details["failed_on"] == "speed"
    # zh PER threshold 0.05: one wrong syllable in a long sentence passes, a few fail
    hyp = "你" + sentence[1:]
    rate = one(await f.score(s, reply(s, sentence, asr=hyp, duration=ref * 0.5), c))
    assert rate.details["checks"]["match"]["len"] == 38 and rate.details["checks"]["match"]["dist"] == 1
    assert rate.value == 1.0  # 1/38 = 0.026
    two = "你们" + sentence[2:]  # wo3 xin1 -> ni3 men: 2/38 = 0.053
    off = one(await f.score(s, reply(s, sentence, asr=two, duration=ref * 0.5), c))
    assert off.value == 0.0 and off.details["checks"]["match"]["dist"] == 2
    garbled = "啊啊啊啊" + sentence[4:]
    assert one(await f.score(s, reply(s, sentence, asr=garbled, duration=ref * 0.5), c)).value == 0.0


async def test_system_failures_and_type_rates() -> None:
    items = samples("en", "instruction_following")
    judge = ScriptedJudge(by_reply({"good": yes()}))
    f = InstructionFollowing("en")
    c = ctx("en", judge=judge)
    mute = one(await f.score(items[0], reply(items[0], "x", audio=False), c))
    assert mute.value == 0.0 and mute.system_error == "missing_audio"
    scores = [mute, one(await f.score(items[200], reply(items[200], "good"), c)),
              one(await f.score(items[201], reply(items[201], "", error="timeout"), c))]
    res = aggregate(f, scores, {}, [items[0], items[200], items[201]])
    assert res.metric == "following_rate" and res.value == round(100 / 3, 4) and res.system_errors == 2
    assert res.extra["type_rates"] == {"Num": 50.0, "Paralinguistic/Plain repeat": 0.0}


async def test_v1_as_the_official_v1_code() -> None:
    items = samples("en", "instruction_following")
    judge = ScriptedJudge(by_reply({"good": yes()}))
    f, c = InstructionFollowing("en", "v1"), ctx("en", "v1", judge=judge)
    # items >= 200 on the text reply, 500-549 on the transcript
    on_text = one(await f.score(items[200], reply(items[200], "good", asr="bad"), c))
    assert on_text.value == 1.0 and judge.calls[-1][0] == "instruction_v1_en"
    assert judge.calls[-1][1]["criterion"] == V1_CRITERIA["Num"]
    spoken = await f.score(items[500], reply(items[500], "good", asr="bad"), c)
    assert spoken[0].unscored is not None  # "bad" is unparseable for the script
    assert [(rid, f["reply"], f["criterion"]) for rid, f in judge.calls[-2:]] == [
        ("instruction_v1_en", "bad", V1_CRITERIA["Spoken format"]),
        ("instruction_v1_en", "bad", V1_SPOKEN_FORMAT_AS_OFFICIAL)]  # our fix, then the official reading
    assert [sc.name for sc in spoken] == ["main", "official_v1_prompt"]
    # plain repeat: WER(sentence, text) < 0.2 and the content judge; the transcript is not compared
    s = items[1]
    text = _sentence(s)
    calls = len(judge.calls)
    ok = one(await f.score(s, reply(s, text + " good", asr="nothing alike"), c))
    assert ok.value == 1.0 and ok.details["checks"]["sentence"]["ok"] is True and "match" not in ok.details["checks"]
    assert len(judge.calls) == calls + 1
    assert judge.calls[-1][1]["criterion"] == V1_CRITERIA["Paralinguistic"]  # the strict repeat note
    off = one(await f.score(s, reply(s, "something else good", audio=False), c))  # no audio needed
    assert off.value == 0.0 and off.details["failed_on"] == "sentence"
    # emotion items: no content judge
    e = items[50]
    angry = const({**EMO, "angry": 0.9, "sad": 0.1})
    emo = one(await f.score(e, reply(e, _sentence(e), asr="x"), ctx("en", "v1", judge=judge, emotion=angry)))
    assert emo.value == 1.0 and "content" not in emo.details["checks"] and len(judge.calls) == calls + 1


async def test_imported_replies_without_audio() -> None:
    items = samples("en", "instruction_following")
    judge = ScriptedJudge(lambda rid, f: yes())
    f, c = InstructionFollowing("en"), ctx("en", judge=judge)

    def imported(i: int, asr: str | None) -> Reply:
        return reply(items[i], _sentence(items[i]), audio=False, asr=asr).model_copy(update={"source": "imported"})

    # a plain repeat with an imported transcript needs no audio; emotion or speed items do
    assert one(await f.score(items[1], imported(1, _sentence(items[1])), c)).value == 1.0
    assert one(await f.score(items[1], imported(1, None), c)).unscored == "no_reply_audio"
    assert one(await f.score(items[50], imported(50, _sentence(items[50])), c)).unscored == "no_reply_audio"
    # generated replies without audio stay system failures
    assert one(await f.score(items[1], reply(items[1], "x", audio=False), c)).system_error == "missing_audio"
