"""The stress suite (judge/stress.py): transformations with a known expected effect, in English and
Mandarin, and the gate that a family passes only when every transformation stays within its bar."""

import pytest

from vocalbench.judge.calibration import CalibrationItem
from vocalbench.judge.stress import (
    MIN_STRESS_ITEMS,
    StressItem,
    condense,
    family_stress,
    flip_tone,
    pad,
    parrot,
    size,
    stress_items,
    transformations,
    wrong_answer,
)


def _item(family: str, qid: str, reply: str, label: float, lang: str = "en", **fields: str) -> CalibrationItem:
    return CalibrationItem(id=f"{family}-{qid}-{label}", rubric=family, family=family, lang=lang, split="test",
                           fields={"question": f"question {qid}", "reply": reply, **fields}, label=label,
                           reason="", qid=qid, reply_by="")


@pytest.mark.parametrize("lang, reply, question", [
    ("en", "Water boils at 100 degrees Celsius at sea level.", "At what temperature does water boil?"),
    ("zh", "水在海平面上一百摄氏度沸腾。", "水在多少度沸腾？"),
])
def test_padding_adds_two_to_four_times_the_length_and_keeps_the_reply(lang, reply, question):
    for seed in ("a", "b", "c"):
        padded = pad(reply, question, lang, seed)
        assert reply in padded
        assert 2.0 <= size(padded, lang) / size(reply, lang) <= 4.0 + 1.5  # the last filler sentence may overshoot
    assert pad(reply, question, lang, "a") == pad(reply, question, lang, "a")  # deterministic per item
    assert question.strip() not in pad(reply, question, lang, "a", restate=False)


def test_wrong_answers_contradict_the_reference():
    assert wrong_answer("The answer is 12 apples.", "en") == "The answer is 25 apples."
    assert wrong_answer("B", "en") == "C"
    assert wrong_answer("Yes, because it rains.", "en").startswith("No,")
    assert "not true" in wrong_answer("A needle is to sewing as a saw is to cutting.", "en", "x") or \
        "wrong" in wrong_answer("A needle is to sewing as a saw is to cutting.", "en", "x") or \
        "false" in wrong_answer("A needle is to sewing as a saw is to cutting.", "en", "x")
    assert wrong_answer("一共有3个苹果。", "zh") == "一共有4个苹果。"
    assert wrong_answer("是的，因为下雨。", "zh").startswith("不是")
    denied = wrong_answer("冰块会融化。", "zh", "x")
    assert "冰块会融化" in denied and any(w in denied for w in ("错", "不成立", "不对"))


def test_parroting_reuses_the_references_words_around_a_wrong_answer():
    en = parrot("The ice melts completely into the tea.", "en", "x")
    assert "melts" in en and "completely" in en
    zh = parrot("冰块会完全融化在茶里。", "zh", "x")
    assert "冰块" in zh and ("错" in zh or "不成立" in zh or "不对" in zh)


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
    glad = flip_tone("恭喜你！你一定很开心。好好庆祝一下吧。", "我考上大学了！", "", "zh", "x")
    assert not glad.startswith("恭喜")


def test_which_transformations_each_family_gets():
    assert set(transformations("creativity_en", "scale")) == {"padding", "off_topic"}
    assert set(transformations("emotion_semantic_zh", "scale")) == {"padding", "off_topic", "condensing", "tone_flip"}
    assert set(transformations("reasoning_binary_zh", "binary")) == {"padding", "off_topic", "parroting", "condensing"}
    assert "parroting" not in transformations("knowledge_zh", "binary")  # the substring rule decides first
    assert transformations("safety_en", "binary")["off_topic"].statistic == "disagree_rate"
    items = [_item("single_round_en", f"q{i}", f"Reply {i}. It has two sentences, the second is longer.", 5.0)
             for i in range(4)]
    made = stress_items(items, {"single_round_en": "scale"})
    assert {s.kind for s in made} == {"padding", "off_topic", "condensing"}
    swapped = [s for s in made if s.kind == "off_topic"]
    assert all(s.item.fields["reply"] != s.original.fields["reply"] and s.item.id.endswith("~off_topic")
               for s in swapped)
    assert len(stress_items(items, {"single_round_en": "scale"}, limit=1)) == 3


def _results(kind: str, pairs: list[tuple[float, float]], family: str = "single_round_en") -> list:
    out = []
    for k, (orig, new) in enumerate(pairs):
        it = _item(family, f"q{k % 7}", "a reply", orig)
        out.append((StressItem(kind, it, it), orig, new))
    return out


def test_a_family_passes_only_when_every_transformation_is_within_its_bar():
    n = MIN_STRESS_ITEMS + 5
    steady = _results("padding", [(3.0, 3.0)] * n) + _results("off_topic", [(4.0, 1.5)] * n)
    ok = family_stress("single_round_en", "scale", steady)
    assert ok["passed"] and ok["transformations"]["padding"]["value"] == 0.0
    assert ok["transformations"]["padding"]["ci95"] == [0.0, 0.0]
    assert ok["transformations"]["condensing"]["passed"] is None  # no items: reported, not judged
    rising = _results("padding", [(3.0, 4.0)] * n) + _results("off_topic", [(4.0, 1.5)] * n)
    bad = family_stress("single_round_en", "scale", rising)
    assert not bad["passed"] and bad["why"] == "failed: padding"
    assert bad["transformations"]["padding"]["mean_change"] == 1.0
    few = family_stress("single_round_en", "scale", _results("padding", [(3.0, 3.0)] * 3))
    assert not few["passed"] and "too few" in few["why"]
    # binary: a swapped reply judged good in 20 % of cases fails the 5 % bar
    swaps = [(1.0, 1.0)] * 5 + [(1.0, 0.0)] * 20
    fig = family_stress("reasoning_binary_en", "binary", _results("off_topic", swaps, "reasoning_binary_en"))
    assert fig["transformations"]["off_topic"]["value"] == 20.0 and not fig["passed"]
