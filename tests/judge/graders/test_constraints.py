"""Checkable instructions: keyword lists, word counts, positions, item counts, spoken format,
classical forms. Sure failures of a type's own checks settle "not followed"; Keywords, Num and
English Spoken format settle "followed" when every check surely passes; other types get features."""

from vocalbench.judge.graders import grade
from vocalbench.judge.graders.constraints import asked_count, enumerated, keyword_lists


def _grade(kind: str, question: str, reply: str, lang: str = "en"):
    return grade(f"instruction_{lang}", {"question": question, "reply": reply}, {"type": kind})


KW_EN = ("Describe a rainy day in the city. Exclude the keywords umbrella, wet and grey. "
         "Include the keywords puddle, reflection, and rhythm.")


def test_english_keyword_lists_are_read():
    assert keyword_lists(KW_EN, zh=False) == (["puddle", "reflection", "rhythm"], ["umbrella", "wet", "grey"])


def test_english_keywords_followed_and_not():
    good = "Every puddle holds a reflection of neon signs, and the rain taps out a steady rhythm on the awnings."
    assert _grade("Keywords", KW_EN, good).verdict == 1.0
    excluded = "Each puddle shows a reflection, the rhythm of drops on my umbrella never stops."
    assert _grade("Keywords", KW_EN, excluded).verdict == 0.0
    missing = "Each puddle shows a reflection of the lights."
    ev = _grade("Keywords", KW_EN, missing)
    assert ev.verdict == 0.0 and ev.features["failed"] > 0


def test_english_plural_of_a_required_keyword_counts():
    ev = _grade("Keywords", KW_EN, "Puddles everywhere, each reflection wobbling to the rhythm of the rain.")
    assert ev.verdict == 1.0


def test_mandarin_keywords():
    q = "写一段关于秋天的话。请勿使用“落叶”、“凉爽”这些词。请包含“丰收”和“金黄”这些关键词。"
    assert keyword_lists(q, zh=True) == (["丰收", "金黄"], ["落叶", "凉爽"])
    assert _grade("Keywords", q, "田野一片金黄，农民们忙着庆祝丰收。", "zh").verdict == 1.0
    assert _grade("Keywords", q, "金黄的落叶铺满小路，人们庆祝丰收。", "zh").verdict == 0.0


def test_constrain_word_count_and_opening_phrase():
    q = ('Write a short poem about the sea. The word "wave" must appear exactly two times, '
         'and the first sentence should begin with "Far from shore".')
    ok = _grade("Constrain", q, "Far from shore, a wave rises. Another wave falls, and the gulls cry.")
    assert ok.verdict is None and ok.features["all_passed"] == 1.0  # constrain types never settle yes
    wrong_count = _grade("Constrain", q, "Far from shore, a wave rises and the gulls cry.")
    assert wrong_count.verdict == 0.0
    no_opening = _grade("Constrain", q, "A wave rises. Another wave falls.")
    assert no_opening.verdict == 0.0


def test_constrain_phrase_present_but_out_of_place_is_not_settled():
    q = 'Tell a story about a fox. The first sentence must begin with "Long ago".'
    ev = _grade("Constrain", q, "Here is a story. Long ago, a fox lived by the river.")
    assert ev.verdict is None and ev.features["failed"] == 1.0


def test_mandarin_constrain_count():
    q = "介绍一下你的家乡。“山”这个字必须恰好出现两次，并且以“我的家乡”开头。"
    assert _grade("Constrain", q, "我的家乡在南方，四面环山，山上开满了杜鹃花。", "zh").features["all_passed"] == 1.0
    assert _grade("Constrain", q, "我的家乡在南方，山清水秀。", "zh").verdict == 0.0


def test_item_counts():
    assert asked_count("How can I save money? Could you please give me three tips?", zh=False) == 3
    assert asked_count("我在准备搬家，请给我两个建议。", zh=True) == 2
    assert enumerated("First, cook at home. Second, cancel subscriptions. Finally, set a budget.", zh=False) == 3
    assert enumerated("1. 提前打包。\n2. 贴好标签。\n3. 预约车辆。", zh=True) == 3


def test_num_settles_both_ways():
    q = "How can I sleep better? Could you please give me two suggestions?"
    assert _grade("Num", q, "Here are two ideas. First, keep a fixed bedtime. Second, avoid screens late.").verdict == 1.0
    assert _grade("Num", q, "1. Keep a fixed bedtime.\n2. Avoid screens.\n3. Cut caffeine.").verdict == 0.0
    assert _grade("Num", q, "Keep a fixed bedtime and avoid screens late at night.").verdict is None


def test_spoken_format():
    q = "Tom has 3 boxes with 12 pens each. How many pens does he have?"
    assert _grade("Spoken format", q, "Tom has three boxes of twelve pens, so he has thirty-six pens.").verdict == 1.0
    assert _grade("Spoken format", q, "3 × 12 = 36, so Tom has 36 pens.").verdict == 0.0
    assert _grade("Spoken format", q, "**Answer:** Tom has 36 pens.").verdict == 0.0
    assert _grade("Spoken format", q, "It costs $5 and the other costs $10, so $15 in total.").verdict == 1.0


def test_mandarin_spoken_format_never_settles_yes():
    q = "小明有5个苹果，又买了3个，现在有几个？用口语回答。"
    assert _grade("Spoken format", q, "小明本来有五个，又买了三个，所以现在一共八个啦。", "zh").verdict is None
    assert _grade("Spoken format", q, "解：5+3=8（个）。答：有8个。", "zh").verdict == 0.0
    written = _grade("Spoken format", q, "根据题意，小明共有五加三即八个苹果。", "zh")
    assert written.verdict is None and written.features["failed"] > 0


def test_classical_form():
    q = "请写一首关于月亮的五言绝句。"
    quatrain = "明月照高楼，清光满九州。思君如夜色，不觉到中秋。"
    regulated = quatrain + "露冷梧桐院，风清杨柳洲。何时同此夜，把酒话从头。"
    assert _grade("Mandarin specific", q, quatrain, "zh").verdict is None  # the form alone is not the criterion
    assert _grade("Mandarin specific", q, regulated, "zh").verdict == 0.0


def test_mandarin_specific_items_reach_their_check_whatever_the_sub_category():
    """zh 900-999: the scorer passes the criterion's key beside the sub-category; the classical
    form check (dead code before issue 27: it never received its category) now runs."""
    q = "请写一首关于月亮的五言绝句。"
    regulated = "明月照高楼，清光满九州。思君如夜色，不觉到中秋。露冷梧桐院，风清杨柳洲。何时同此夜，把酒话从头。"
    fields = {"question": q, "reply": regulated}
    assert grade("instruction_zh", fields, {"type": "Genre", "criterion": "Mandarin specific"}).verdict == 0.0
    assert grade("instruction_zh", fields, {"type": "Genre"}).verdict is None


def test_question_ending_and_topic_shift_are_features_only():
    q = "How do I start running? End your answer with another relevant question."
    ev = _grade("Instruction", q, "Start slowly with short jogs three times a week. Want a beginner plan?")
    assert ev.verdict is None and ev.features["all_passed"] == 1.0
    shift = "Tell me about cats. Wait, change it to dogs."
    on_topic = _grade("Topic change", shift, "Dogs are loyal companions who love long walks.")
    off_topic = _grade("Topic change", shift, "Cats are independent and love to nap in the sun.")
    assert on_topic.features["topic_shift"] > off_topic.features["topic_shift"]
    assert on_topic.verdict is None
