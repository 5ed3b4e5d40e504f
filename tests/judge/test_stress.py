"""The stress suite (judge/stress/): transformations with a known expected effect, in English and
Mandarin, their wording pools split into design and check halves, the bars read on whole intervals,
judge errors counted as failures, and partial runs that validate nothing."""

import hashlib
import re

import pytest

from vocalbench.components.base import ChatResult
from vocalbench.components.cache import ResultCache
from vocalbench.judge.calibration import CalibrationItem
from vocalbench.judge.json_judge import Judge
from vocalbench.judge.stress import (
    MIN_STRESS_ITEMS,
    StressItem,
    condense,
    drift,
    echo,
    family_stress,
    flip_tone,
    not_applied,
    pad,
    parrot,
    run_stress,
    sentences,
    size,
    stress_items,
    transformations,
    wordings,
    wrong_answer,
)
from vocalbench.judge.stress.bars import ALL


def _item(family: str, qid: str, reply: str, label: float, lang: str = "en", **fields: str) -> CalibrationItem:
    return CalibrationItem(id=f"{family}-{qid}-{label}", rubric=family, family=family, lang=lang, split="test",
                           fields={"question": f"question {qid}", "reply": reply, **fields}, label=label,
                           reason="", qid=qid, reply_by="")


# -- the wording pools ------------------------------------------------------------------------------
# the pools' sizes per language at 6dc333f (before issue 34): padding 4 greetings, 3 restatements,
# 12 generic remarks, 4 closings; parroting 3 denials and 1 lead; tone flip 3 each
OLD_SIZES = {("padding", "greeting"): 4, ("padding", "restate"): 3, ("padding", "generic"): 12,
             ("padding", "closing"): 4, ("parroting", "deny"): 3, ("parroting", "lead"): 1,
             ("tone_flip", "hard"): 3, ("tone_flip", "glad"): 3, ("tone_flip", "closing"): 3}


def test_every_pool_is_split_by_wording_into_disjoint_design_and_check_halves():
    for transformation, by_lang in wordings.WORDINGS.items():
        assert set(by_lang) == {"en", "zh"}
        for lang, parts in by_lang.items():
            assert set(parts) == set(wordings.WORDINGS[transformation]["en"])  # the same kinds in both languages
            for part, full in parts.items():
                design, check = (wordings.pool(transformation, lang, part, w) for w in ("design", "check"))
                assert len(set(full)) == len(full), (transformation, lang, part)  # no wording twice
                assert not set(design) & set(check) and set(design) | set(check) == set(full)
                assert len(design) - len(check) in (0, 1) and len(check) >= 2
                # the split is the seeded hash of the wording, not a choice by hand
                ranked = sorted(full, key=lambda w: hashlib.sha256(f"{wordings.SPLIT_SEED}:{w}".encode()).hexdigest())
                assert design == tuple(ranked[:len(design)])
                assert len(full) >= 3 * OLD_SIZES.get((transformation, part), 4), (transformation, lang, part)
    with pytest.raises(ValueError, match="unknown wording pool"):
        wordings.pool("padding", "en", "greeting", "tuned")


def _only_from(text: str, pool_words: tuple[str, ...], *fills: str) -> bool:
    """Whether ``text`` is made of ``fills`` and wordings of one pool (placeholders filled)."""
    rest = text
    for fill in fills:
        rest = rest.replace(fill, " ")
    frags = {f.strip() for w in pool_words for f in re.split(r"\{\w+\}", w) if f.strip()}
    for frag in sorted(frags, key=len, reverse=True):
        rest = rest.replace(frag, " ")
    return not re.sub(r"[\s.,:;!?\"'“”。，：！？、]+", "", rest)


# -- the transformations ----------------------------------------------------------------------------
@pytest.mark.parametrize("lang, reply, question", [
    ("en", "Water boils at 100 degrees Celsius at sea level.", "At what temperature does water boil?"),
    ("zh", "水在海平面上一百摄氏度沸腾。", "水在多少度沸腾？"),
])
def test_padding_adds_two_to_four_times_the_length_from_one_pool_and_keeps_the_reply(lang, reply, question):
    for seed in ("a", "b", "c"):
        for which in ("design", "check"):
            padded = pad(reply, question, lang, seed, which=which)
            assert reply in padded
            assert 2.0 <= size(padded, lang) / size(reply, lang) <= 4.0 + 1.5  # the last remark may overshoot
            words = tuple(w for part in ("greeting", "restate", "generic", "closing")
                          for w in wordings.pool("padding", lang, part, which))
            assert _only_from(padded, words, reply, question)
    assert pad(reply, question, lang, "a") == pad(reply, question, lang, "a")  # deterministic per item
    assert pad(reply, question, lang, "a", which="check") != pad(reply, question, lang, "a", which="design")
    assert question.strip().rstrip("?？") in pad(reply, question, lang, "a")
    assert question.strip().rstrip("?？") not in pad(reply, question, lang, "a", restate=False)


def test_wrong_answers_contradict_the_reference():
    assert wrong_answer("The answer is 12 apples.", "en") == "The answer is 25 apples."
    assert wrong_answer("B", "en") == "C"
    assert wrong_answer("Yes, because it rains.", "en").startswith("No,")
    assert wrong_answer("一共有3个苹果。", "zh") == "一共有4个苹果。"
    assert wrong_answer("是的，因为下雨。", "zh").startswith("不是")
    for which in ("design", "check"):
        for item_id in ("x", "y", "z"):
            denied = wrong_answer("A needle is to sewing as a saw is to cutting.", "en", item_id, which)
            assert "a needle is to sewing as a saw is to cutting" in denied.lower()
            assert _only_from(denied.lower(), tuple(w.lower() for w in wordings.pool("parroting", "en", "deny", which)),
                              "a needle is to sewing as a saw is to cutting")
            zh = wrong_answer("冰块会融化。", "zh", item_id, which)
            assert "冰块会融化" in zh and _only_from(zh, wordings.pool("parroting", "zh", "deny", which), "冰块会融化")


def test_parroting_reuses_the_references_words_around_a_wrong_answer():
    en = parrot("The ice melts completely into the tea.", "en", "x")
    assert "melts" in en and "completely" in en
    zh = parrot("冰块会完全融化在茶里。", "zh", "x", "check")
    assert "冰块" in zh and any(w.format(body="冰块会完全融化在茶里") in zh
                               for w in wordings.pool("parroting", "zh", "deny", "check"))


def test_condensing_keeps_the_key_sentences_at_most_sixty_percent():
    reply = ("Great question! There are many things to think about. The capital of France is Paris. "
             "It has been the capital for centuries. I hope that helps!")
    short = condense(reply, "Paris is the capital of France.", "en")
    assert short is not None and "capital of France is Paris" in short and size(short, "en") <= 0.6 * size(reply, "en")
    assert condense("Paris.", "Paris", "en") is None
    zh = condense("好问题！法国的首都是巴黎。巴黎做首都已经很多年了。希望有帮助！", "巴黎是法国的首都。", "zh")
    assert zh is not None and "巴黎" in zh


def test_tone_flip_clashes_with_the_feeling():
    sad = flip_tone("I'm so sorry about your dog. Be gentle with yourself tonight.", "My dog died.", "sad", "en", "x")
    assert "sorry" not in sad and "gentle" in sad
    glad = flip_tone("恭喜你！你一定很开心。好好庆祝一下吧。", "我考上大学了！", "", "zh", "x", "check")
    assert not glad.startswith("恭喜") and glad.startswith(wordings.pool("tone_flip", "zh", "glad", "check"))


@pytest.mark.parametrize("lang, question, reply", [
    ("en", "What should I build a cabin out of?", "Build it from larch logs; treat them with linseed oil first."),
    ("zh", "适合初学者的健身方式有哪些？", "可以从快走和深蹲开始，每周三次，每次二十分钟。"),
])
def test_an_echo_restates_the_question_with_praise_or_a_promise_and_no_answer(lang, question, reply):
    items = [_item("single_round_" + lang, f"q{k}", reply, 4.0, lang, question=question) for k in range(3)]
    for which in ("design", "check"):
        made = [s for s in stress_items(items, {f"single_round_{lang}": "scale"}, pools=(which,)) if s.kind == "echo"]
        assert len(made) == 3 and all(s.item.id.endswith(f"~echo@{which}") for s in made)
        for s in made:
            text = s.item.fields["reply"]
            assert text == echo(question, lang, s.original.id, which)  # deterministic by item id
            assert question.rstrip("?？") in text
            words = wordings.pool("echo", lang, "praise", which) + wordings.pool("echo", lang, "promise", which)
            assert _only_from(text, words, question)  # the question and the pool's wordings: nothing of the reply
            assert not {"larch", "linseed", "快走", "深蹲"} & set(re.findall(r"\w+", text) + [text[i:i + 2] for i in
                                                                                          range(len(text))])
    assert echo(question, lang, "a", "design") != echo(question, lang, "a", "check")


def test_drift_keeps_exactly_one_own_sentence_then_another_questions_reply():
    reply = "Start with the walls. Pine is cheap and easy to cut. Seal every joint before winter."
    other = "Paris is the capital of France. It sits on the Seine."
    for which in ("design", "check"):
        drifted = drift(reply, other, "en", "x", which)
        assert drifted is not None and drifted.startswith("Start with the walls.") and drifted.endswith(other)
        own = [s for s in sentences(drifted, "en") if s in sentences(reply, "en")]
        assert own == ["Start with the walls."]
        assert drifted == drift(reply, other, "en", "x", which)
    assert drift("Only one sentence here.", other, "en", "x") is None
    zh = drift("先打好地基。松木便宜又好加工。冬天前把缝隙封好。", "巴黎是法国的首都。", "zh", "y", "check")
    assert zh is not None and [s for s in sentences(zh, "zh") if s in sentences(
        "先打好地基。松木便宜又好加工。冬天前把缝隙封好。", "zh")] == ["先打好地基。"]


def test_which_transformations_each_family_gets_and_why_the_others_do_not():
    assert set(transformations("creativity_en", "scale")) == {"padding", "off_topic", "echo", "drift"}
    assert set(transformations("emotion_semantic_zh", "scale")) == {
        "padding", "off_topic", "echo", "drift", "condensing", "tone_flip"}
    assert set(transformations("reasoning_binary_zh", "binary")) == {
        "padding", "off_topic", "echo", "drift", "parroting", "condensing"}
    assert set(transformations("instruction_repeat_en", "binary")) == {"padding", "padding_question", "off_topic", "echo"}
    assert set(transformations("instruction_zh", "binary")) == {"padding", "padding_question", "off_topic", "echo",
                                                                 "drift"}
    assert "parroting" not in transformations("knowledge_zh", "binary")  # the substring rule decides first
    assert "substring rule" in not_applied("knowledge_zh")["parroting"]
    safety = transformations("safety_en", "binary")
    assert safety["off_topic"].statistic == safety["echo"].statistic == "disagree_rate" and "drift" not in safety
    for family, kind in [("creativity_zh", "scale"), ("safety_zh", "binary"), ("instruction_en", "binary"),
                         ("cs_open_ended_quality", "scale"), ("multi_round_binary_en", "binary")]:
        got, why = set(transformations(family, kind)), not_applied(family)
        assert got | set(why) == set(ALL) and not got & set(why), family  # every one: applied, or said why not
    items = [_item("single_round_en", f"q{i}", f"Reply {i}. It has two sentences, the second is longer.", 5.0)
             for i in range(4)]
    made = stress_items(items, {"single_round_en": "scale"})
    assert {s.kind for s in made} == {"padding", "off_topic", "echo", "drift", "condensing"}
    assert {s.pool for s in made if s.kind in ("padding", "echo", "drift")} == {"design", "check"}
    assert {s.pool for s in made if s.kind in ("off_topic", "condensing")} == {""}  # no wording: made once
    swapped = [s for s in made if s.kind == "off_topic"]
    assert all(s.item.fields["reply"] != s.original.fields["reply"] and s.item.id.endswith("~off_topic")
               for s in swapped)
    assert made == stress_items(list(reversed(items)), {"single_round_en": "scale"})  # by item id, not input order
    assert len(stress_items(items, {"single_round_en": "scale"}, limit=1)) == 8  # 3 worded x 2 pools + 2


def test_instruction_families_are_padded_with_and_without_the_instruction():
    q = "Repeat after me: the quick brown fox jumps over the lazy dog."
    items = [_item("instruction_repeat_en", f"q{i}", "The quick brown fox jumps.", 0.0, question=q) for i in range(3)]
    made = stress_items(items, {"instruction_repeat_en": "binary"}, pools=("check",))
    plain = [s.item.fields["reply"] for s in made if s.kind == "padding"]
    quoted = [s.item.fields["reply"] for s in made if s.kind == "padding_question"]
    assert plain and quoted and not any("lazy dog" in r for r in plain) and all("lazy dog" in r for r in quoted)


def test_safety_echo_expects_what_each_languages_criterion_reads():
    for lang, expected in (("en", 1.0), ("zh", 0.0)):  # en: not a refusal; zh: gives no dangerous content
        items = [_item(f"safety_{lang}", f"q{i}", "No.", 0.0, lang) for i in range(2)]
        made = [s for s in stress_items(items, {f"safety_{lang}": "binary"}) if s.kind == "echo"]
        assert made and {s.expected for s in made} == {expected}


# -- the bars -------------------------------------------------------------------------------------
def _results(kind: str, pairs: list[tuple[float | None, float | None]], family: str = "single_round_en",
             questions: int = 20) -> list:
    out = []
    for k, (orig, new) in enumerate(pairs):
        it = _item(family, f"q{k % questions}", "a reply", 3.0 if orig is None else orig)
        out.append((StressItem(kind, it, it), orig, new))
    return out


def test_a_family_passes_only_when_every_transformation_is_within_its_bar():
    n = 40
    steady = _results("padding", [(3.0, 3.0)] * n) + _results("off_topic", [(4.0, 1.5)] * n)
    ok = family_stress("single_round_en", "scale", steady)
    assert ok["passed"] and ok["transformations"]["padding"]["value"] == 0.0 and ok["pool"] == "check"
    assert ok["transformations"]["padding"]["ci95"] == [0.0, 0.0] and ok["transformations"]["padding"]["move_rate"] == 0
    assert ok["transformations"]["condensing"]["passed"] is None  # no items: reported, not judged
    assert set(ok["pools"]) == {"design", "check"} and ok["pools"]["design"]["passed"]
    assert set(ok["applies"]) == set(transformations("single_round_en", "scale"))
    assert set(ok["not_applied"]) == {"padding_question", "parroting", "tone_flip"}
    rising = _results("padding", [(3.0, 4.0)] * n) + _results("off_topic", [(4.0, 1.5)] * n)
    bad = family_stress("single_round_en", "scale", rising)
    assert not bad["passed"] and bad["why"] == "check wordings: failed: padding; not counted, fewer than 20 items: echo 0, drift 0, condensing 0"
    assert bad["transformations"]["padding"]["mean_change"] == 1.0
    few = family_stress("single_round_en", "scale", _results("padding", [(3.0, 3.0)] * 3))
    assert not few["passed"] and "too few" in few["why"]
    # binary: a swapped reply judged good in 20 % of cases fails the 5 % bar
    swaps = [(1.0, 1.0)] * 5 + [(1.0, 0.0)] * 20
    fig = family_stress("reasoning_binary_en", "binary", _results("off_topic", swaps, "reasoning_binary_en"))
    assert fig["transformations"]["off_topic"]["value"] == 20.0 and not fig["passed"]


def _balanced_moves(n: int, moving: int, step: float = 1.0) -> list[tuple[float, float]]:
    """n items, ``moving`` of them moved by ``step``, half up and half down (the mean stays 0)."""
    return [(3.0, 3.0 + (step if k % 2 else -step)) if k < moving else (3.0, 3.0) for k in range(n)]


def test_where_the_verdict_should_not_move_moves_either_way_count():
    # 20 % of items move (half up, half down): the mean change is 0, as the old one-sided bar wanted
    twenty = family_stress("single_round_en", "scale", _results("padding", _balanced_moves(100, 20)))
    pad_fig = twenty["transformations"]["padding"]
    assert pad_fig["mean_change"] == 0.0 and pad_fig["move_rate"] == 20.0 and pad_fig["passed"] is False
    five = family_stress("single_round_en", "scale", _results("padding", _balanced_moves(100, 5)))
    assert five["transformations"]["padding"]["move_rate"] == 5.0 and five["transformations"]["padding"]["passed"]
    # binary: flips both ways (good to bad and bad to good), 20 % of items fail, 4 % pass
    for flipped, passed in ((40, False), (8, True)):
        flips = [(1.0, 0.0) if k < flipped // 2 else (0.0, 1.0) if k < flipped else (1.0, 1.0) for k in range(200)]
        fig = family_stress("reasoning_binary_en", "binary", _results("padding", flips, "reasoning_binary_en", 50))
        padding = fig["transformations"]["padding"]
        assert padding["value"] == 0.0 and padding["move_rate"] == flipped / 2 and padding["passed"] is passed
    # condensing falls by half a point or less: no item moved
    gentle = family_stress("single_round_en", "scale", _results("condensing", [(4.0, 3.5)] * 30))
    assert gentle["transformations"]["condensing"]["move_rate"] == 0.0
    assert gentle["transformations"]["condensing"]["passed"] is False  # but every item fell: mean -0.5 is outside


def test_a_point_estimate_inside_the_bar_with_its_interval_outside_fails():
    # 12 of 100 padded replies rise by 2: mean +0.24 <= 0.25 and 12 % moved <= 15 %, but the interval reaches past 0.25
    rising = [(3.0, 5.0)] * 12 + [(3.0, 3.0)] * 88
    fig = family_stress("single_round_en", "scale", _results("padding", rising))["transformations"]["padding"]
    assert fig["value"] == pytest.approx(0.24) and fig["move_rate"] == 12.0
    assert fig["ci95"][1] > 0.25 and fig["passed"] is False
    # off-topic: mean 1.9 <= 2, but the interval's upper end above 2
    swapped = [(4.0, 1.0)] * 70 + [(4.0, 4.0)] * 30
    off = family_stress("single_round_en", "scale", _results("off_topic", swapped))["transformations"]["off_topic"]
    assert off["value"] == pytest.approx(1.9) and off["ci95"][1] > 2.0 and off["passed"] is False
    # drift: the verdict must fall, with the whole interval below 0
    mixed = [(4.0, 2.0)] * 10 + [(4.0, 5.0)] * 16 + [(4.0, 4.0)] * 4
    dr = family_stress("single_round_en", "scale", _results("drift", mixed))["transformations"]["drift"]
    assert dr["value"] < 0 and dr["ci95"][1] >= 0 and dr["passed"] is False
    falls = family_stress("single_round_en", "scale", _results("drift", [(4.0, 2.0)] * 25 + [(4.0, 4.0)] * 5))
    assert falls["transformations"]["drift"]["passed"] is True


def test_an_errored_verdict_counts_as_a_failure_of_its_transformation():
    # the judge errors on the off-topic replies it would otherwise have to mark down
    off = [(4.0, 1.0)] * 30 + [(4.0, None)] * 10
    fig = family_stress("single_round_en", "scale", _results("off_topic", off))["transformations"]["off_topic"]
    assert fig["errors"] == 10 and fig["n"] == 40 and fig["value"] == pytest.approx((30 * 1 + 10 * 5) / 40)
    assert fig["passed"] is False
    padded = [(3.0, 3.0)] * 36 + [(None, 3.0)] * 4  # an errored original: the item moved
    pfig = family_stress("single_round_en", "scale", _results("padding", padded))["transformations"]["padding"]
    assert pfig["errors"] == 4 and pfig["move_rate"] == 10.0 and pfig["value"] == pytest.approx(4 * 4 / 40)
    assert pfig["passed"] is False  # +0.4: an error counts as a rise of the whole scale


# -- a judge over the suite: errors on hard items, partial runs -------------------------------------
class AnswerReadingLLM:
    """A chat endpoint double for a 1-5 judge that reads content: 4 when the reply carries its
    question's answer token (``ans<qid>``), else 1; ``fail_low``: an error instead of every 1."""

    id = "reader@127.0.0.1"

    def __init__(self, fail_low: bool = False) -> None:
        self.fail_low = fail_low
        self.calls = 0

    async def chat(self, messages, **kwargs):
        self.calls += 1
        request, _, reply = messages[-1]["content"].partition("\nReply: ")
        qid = re.search(r"question (q\d+)", request).group(1)
        if f"ans{qid} " in reply + " ":
            return ChatResult(text='{"reason": "answers it", "score": 4}', prompt_tokens=10, completion_tokens=5)
        if self.fail_low:
            raise ValueError("the judge broke on a hard item")
        return ChatResult(text='{"reason": "no answer", "score": 1}', prompt_tokens=10, completion_tokens=5)


def _answered(n: int) -> list[CalibrationItem]:
    filler = ("Most people find that a plan written down in advance, checked twice and shared with a friend, "
              "makes the whole thing go a lot more smoothly over the following weeks.")
    return [_item("single_round_en", f"q{k}", f"Let me think about it. The answer is ansq{k} . {filler}", 4.0)
            for k in range(n)]


async def test_a_judge_that_errors_on_the_hard_items_cannot_pass(tmp_path):
    items = _answered(24)
    reader = Judge(AnswerReadingLLM(), cache=ResultCache(tmp_path / "a.sqlite"), backoff=0)
    figures, outcomes = await run_stress(reader, items, {}, concurrency=4)
    fam = figures["single_round_en"]
    assert fam["passed"], fam["why"]  # reading content passes every transformation it gets
    assert {k for k, f in fam["transformations"].items() if f["passed"] is not None} == {
        "padding", "off_topic", "echo", "drift", "condensing"}
    assert fam["errors"] == 0 and fam["pools"]["design"]["passed"]
    broken = Judge(AnswerReadingLLM(fail_low=True), cache=ResultCache(tmp_path / "b.sqlite"), backoff=0)
    figures, outcomes = await run_stress(broken, items, {}, concurrency=4)
    fam = figures["single_round_en"]
    assert any(o.error for o in outcomes)
    assert not fam["passed"] and fam["why"] == "check wordings: failed: off_topic, echo, drift"
    assert fam["transformations"]["off_topic"]["errors"] == 24 and fam["errors"] > 0
    assert fam["transformations"]["padding"]["passed"]  # the easy ones still pass: the errors are what fails it


async def test_a_run_cut_short_or_without_the_check_wordings_validates_nothing(tmp_path):
    items = _answered(24)
    judge = Judge(AnswerReadingLLM(), cache=ResultCache(tmp_path / "c.sqlite"), backoff=0)
    cut, _ = await run_stress(judge, items, {}, limit=MIN_STRESS_ITEMS, concurrency=4)
    fam = cut["single_round_en"]
    assert not fam["passed"] and fam["partial"] and fam["why"].startswith("not validated: partial stress run")
    assert "padding 20 of 24" in fam["why"]
    assert fam["pools"]["check"]["passed"]  # every figure within its bar, yet the run was partial
    design, _ = await run_stress(judge, items, {}, pools=("design",), concurrency=4)
    fam = design["single_round_en"]
    assert not fam["passed"] and fam["pool"] == "design" and "check wordings were not run" in fam["why"]
    assert fam["pools"]["design"]["passed"] and set(fam["pools"]) == {"design"}
