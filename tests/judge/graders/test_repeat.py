"""Repeat coverage: settled yes for a verbatim or near-verbatim repeat, settled no when most of the
sentence is missing, undecided when a whole phrase is dropped from an otherwise complete repeat."""

from vocalbench.judge.graders import grade
from vocalbench.judge.graders.repeat import align, coverage, longest_gap


def _grade(sentence: str, reply: str, lang: str = "en"):
    return grade(f"instruction_repeat_{lang}", {"sentence": sentence, "reply": reply}, {})


def test_alignment_marks_the_dropped_units():
    distance, matched, stretch = align("a b c d e".split(), "x a b d e y".split())
    assert distance == 1
    assert matched == [True, True, False, True, True]
    assert list(stretch) == ["a", "b", "d", "e"]
    assert longest_gap([True, False, False, True, False]) == 2


def test_verbatim_repeat_with_preamble_settles_yes():
    sentence = "My little brother finally learned to ride his bike without training wheels today."
    ev = _grade(sentence, f'Sure! Here it is, nice and slow: "{sentence}" Congratulations to him!')
    assert ev.verdict == 1.0
    assert ev.features["coverage"] == 1.0 and ev.features["phrase_missing"] == 0.0


def test_one_word_slip_still_settles_yes():
    ev = _grade("We spent the whole afternoon building a sandcastle by the lake with our cousins.",
                "We spent the whole afternoon building a sand castle by the lake with our cousins.")
    assert ev.verdict == 1.0


def test_moved_words_are_not_missing_words():
    cov, gap = coverage("Why does it seem like nobody ever listens to what I say at meetings?",
                        "Why does nobody ever seem to listen to what I say at meetings?", "en")
    assert gap <= 2


def test_dropped_opening_phrase_is_not_settled_yes():
    sentence = "On the first morning of our holiday, the whole family went swimming in the cold sea together."
    ev = _grade(sentence, "The whole family went swimming in the cold sea together.")
    assert ev.verdict is None or ev.verdict == 0.0
    assert ev.features["phrase_missing"] == 1.0


def test_mandarin_dropped_clause_is_flagged_but_a_dropped_word_is_not():
    sentence = "在毕业典礼那天，老师送给每个同学一本写满祝福的小册子，大家都感动极了。"
    dropped_clause = _grade(sentence, "老师送给每个同学一本写满祝福的小册子，大家都感动极了。", "zh")
    assert dropped_clause.verdict != 1.0 and dropped_clause.features["phrase_missing"] == 1.0
    dropped_word = _grade("其实，我们每个人都需要一点耐心。", "我们每个人都需要一点耐心。", "zh")
    assert dropped_word.features["phrase_missing"] == 0.0


def test_answer_instead_of_repeat_settles_no():
    ev = _grade("I can't believe my favourite bakery closed down after thirty years.",
                "Oh no, that's so sad! Maybe you can find another bakery nearby that you like.")
    assert ev.verdict == 0.0


def test_mandarin_verbatim_settles_yes_and_features_rank():
    sentence = "今天的晚霞像一幅油画，整片天空都被染成了橘红色。"
    full = _grade(sentence, "好的：" + sentence, "zh")
    half = _grade(sentence, "今天的晚霞像一幅油画。", "zh")
    assert full.verdict == 1.0
    assert full.features["coverage"] > half.features["coverage"]
    assert full.features["gap"] < half.features["gap"]


def test_a_quoted_instruction_is_not_a_repeat() -> None:
    """Restating the instruction (its request words nearly verbatim, then the sentence) quotes what
    was asked; only a repeat beside it counts (issue 34: padding with the restated question)."""
    from vocalbench.judge.graders import grade

    q = "Please repeat the following sentence exactly. The quick brown fox jumps over the lazy dog near the river."
    quoted = f"You asked me this: {q} Foxes are quick animals."
    both = f"You asked me this: {q} Here it is: The quick brown fox jumps over the lazy dog near the river."
    announced = "Sure, I'll repeat the sentence: The quick brown fox jumps over the lazy dog near the river."
    assert grade("instruction_repeat_en", {"question": q, "reply": quoted}, semantic=False).verdict == 0.0
    assert grade("instruction_repeat_en", {"question": q, "reply": both}, semantic=False).verdict == 1.0
    assert grade("instruction_repeat_en", {"question": q, "reply": announced}, semantic=False).verdict == 1.0
    zq = "请重复下面这句话。今天的天气非常好，我们一起去公园散步吧。"
    assert grade("instruction_repeat_zh", {"question": zq, "reply": f"你让我：{zq}好的。"}, semantic=False).verdict == 0.0
