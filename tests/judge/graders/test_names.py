"""Knowledge matching: the normalised reference, numbers said another way, a middle name, a
surname on its own settle yes; a given name alone never does; a plain-number reference missed by
a reply that gives other numbers settles no; everything else is left to the features."""

from vocalbench.judge.graders import grade
from vocalbench.judge.graders.names import digit_form, reference_number


def _zh(question: str, reference: str, reply: str):
    return grade("knowledge_zh", {"question": question, "reference": reference, "reply": reply}, {})


def _cs_en(question: str, reference: str, reply: str):
    return grade("cs_knowledge_en", {"question": question, "reference": reference, "reply": reply}, {})


def _cs_zh(question: str, answer_zh: str, answer_en: str, reply: str):
    return grade("cs_knowledge_zh", {"question": question, "answer_zh": answer_zh, "answer_en": answer_en,
                                     "reply": reply}, {})


def test_normalised_reference_settles_yes():
    assert _zh("《红楼梦》的作者是谁？", "曹雪芹", "作者是曹雪芹。").verdict == 1.0
    assert _zh("哪部小说写了贾宝玉？", "《红楼梦》", "是紅樓夢。").verdict == 1.0  # Traditional, no title marks


def test_numbers_said_another_way():
    assert digit_form("一九四九年十月一日") == "1949年10月1日"
    assert _zh("中华人民共和国是哪一天成立的？", "1949年10月1日", "是一九四九年十月一日。").verdict == 1.0
    assert _zh("一个足球队上场几名队员？", "11名", "十一名队员。").verdict is None  # 名 is no unit here: not plain
    assert _zh("奥运会每隔几年举办一次？", "4年", "每四年举办一次。").verdict == 1.0


def test_a_plain_number_missed_settles_no():
    assert reference_number("1998年") == [1998.0]
    assert reference_number("公元前221年") is None and reference_number("20世纪90年代") is None
    assert _zh("香港是哪一年回归的？", "1997年", "香港是在一九九九年回归的。").verdict == 0.0
    assert _zh("香港是哪一年回归的？", "1997年", "这个我记不太清了。").verdict is None  # no number given


def test_a_number_inside_a_longer_number_is_not_the_number():
    assert _zh("一周有几天？", "7天", "一周有17天。").verdict == 0.0


def test_given_name_alone_does_not_settle():
    ev = _zh("谁提出了相对论？", "阿尔伯特·爱因斯坦", "是阿尔伯特和他的同事。")
    assert ev.verdict is None


def test_surname_alone_settles_when_the_question_asks_who():
    assert _zh("谁提出了相对论？", "阿尔伯特·爱因斯坦", "是爱因斯坦提出的。").verdict == 1.0
    assert _zh("谁提出了相对论？", "阿尔伯特·爱因斯坦", "是爱德华·爱因斯坦。").verdict is None  # another · name
    assert _zh("相对论是哪位科学家提出的理论？", "阿尔伯特·爱因斯坦", "爱因斯坦。").verdict == 1.0


def test_surname_already_in_the_question_or_no_person_asked_does_not_settle():
    assert _zh("爱因斯坦家族中谁提出了相对论？", "阿尔伯特·爱因斯坦", "是爱因斯坦。").verdict is None
    assert _zh("这部电影叫什么名字？", "罗马·假日", "叫假日。").verdict is None


def test_english_full_name_with_a_middle_name():
    assert _cs_en("Who wrote Moby-Dick?", "Herman Melville", "It was Herman Melville.").verdict == 1.0
    assert _cs_en("Who painted the Mona Lisa?", "Leonardo Vinci",
                  "That was Leonardo di ser Piero da Vinci.").verdict is None  # more than two words between
    assert _cs_en("Who was the first US president?", "George Washington",
                  "It was George Herbert Washington.").verdict == 1.0
    assert _cs_en("Who was the first US president?", "George Washington", "It was George Bush.").verdict is None


def test_wrong_or_alias_answers_are_left_to_the_features():
    wrong = _cs_en("Which planet is known as the Red Planet?", "Mars", "That would be Jupiter.")
    assert wrong.verdict is None and wrong.features["word_recall"] == 0.0
    assert _cs_zh("哪座城市被称为Big Apple？", "纽约", "New York", "说的是New York City。").verdict == 1.0
    alias = _cs_zh("哪座城市被称为Big Apple？", "纽约", "New York", "说的是New Amsterdam，后来改了名字。")
    assert alias.verdict is None and alias.features["word_recall"] == 0.5


def test_features_rank():
    q = "长城主要修建于哪个朝代？"
    close = _zh(q, "明朝", "现在看到的大多是明朝修的。").features
    echo = _zh(q, "明朝", "长城主要修建于朝代。").features
    refuse = _zh(q, "明朝", "这个我不乱说了，你可以查一下。").features
    assert close["char_recall"] > echo["char_recall"]
    assert "new_content" not in close  # saying something new is no sign of saying the right thing
    assert refuse["declines"] == 1.0 and close["declines"] == 0.0
    variant = _cs_en("Who was Guinevere's lover?", "Lancelot", "Sir Launcelot du Lake.").features
    assert variant["word_recall"] == 1.0


def test_negated_names_and_short_years():
    assert _zh("谁提出了相对论？", "阿尔伯特·爱因斯坦", "不是爱因斯坦，是牛顿。").verdict is None
    assert _cs_en("Who wrote Moby-Dick?", "Herman Melville", "Not Herman J. Melville; it was Mark Twain.").verdict is None
    assert _zh("香港是哪一年回归的？", "1997年", "九七年回归的。").verdict is None  # a year's last two digits


def test_a_reference_named_only_to_deny_it_settles_no():
    q = "Who composed the music for the oratorio Belshazzar's Feast?"
    denied = _cs_en(q, "William Walton", "It was not composed by William Walton; Vaughan Williams wrote it.")
    assert denied.verdict == 0.0 and "deny" in denied.note
    # named after a contrast, or once without a negation: that is naming it
    assert _cs_en(q, "William Walton", "Not Elgar but William Walton wrote it.").verdict == 1.0
    assert _cs_en(q, "William Walton", "Not Elgar. William Walton wrote it; not Walton's teacher.").verdict == 1.0
    assert _zh("美国第一任总统是谁？", "华盛顿", "不是华盛顿，是林肯。").verdict == 0.0
    assert _zh("美国第一任总统是谁？", "华盛顿", "不是林肯，是华盛顿。").verdict == 1.0
    assert _cs_zh("Who painted the Mona Lisa?", "达·芬奇", "Leonardo da Vinci", "并非达·芬奇，而是拉斐尔。").verdict == 0.0
