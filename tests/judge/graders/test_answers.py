"""Answer extraction for reasoning items and dialogue turns: options (English and Mandarin, stems
and relation words), yes/no per asked predicate, final numbers, orders, short answers; hedged or
partly-right replies never settle, dialogue yes/no never settles, and the features rank."""

from vocalbench.judge.graders import grade
from vocalbench.judge.graders.answers import options, polarity, reference_answer, stated_order


def _reason(question: str, reference: str, reply: str, lang: str = "en"):
    return grade(f"reasoning_binary_{lang}", {"question": question, "reference": reference, "reply": reply}, {})


def _turn(question: str, reference: str, reply: str, lang: str = "en"):
    return grade(f"multi_round_binary_{lang}", {"history": "", "question": question, "reference": reference,
                                                "reply": reply}, {})


# ---- options ------------------------------------------------------------------------------------

LAMP_Q = "Where would you plug in a reading lamp in a bedroom, a garage, a bathtub, or a mailbox?"


def test_english_options_cut_the_stem_off_the_first_choice():
    assert options(LAMP_Q, "", "en") == ["a bedroom", "a garage", "a bathtub", "a mailbox"]
    assert options("Where did the girl leave her umbrella while shopping, on the bus, in a cafe, or at home?",
                   "", "en") == ["on the bus", "in a cafe", "at home"]
    assert options("What does a cat do when it is happy? Does it purr, bark, or fly?", "", "en") == \
        ["purr", "bark", "fly"]


def test_a_stem_phrase_before_choices_with_other_prepositions():
    bridge = "Where was the boy who sat under the old bridge, in a village, near a mall, or by a lake?"
    assert options(bridge, "", "en") == ["the old bridge", "in a village", "near a mall", "by a lake"]
    ref = "The boy who sat under the old bridge was in a village."
    assert _reason(bridge, ref, "The boy who sat under the old bridge was near a mall.").verdict == 0.0
    assert _reason(bridge, ref, "In a village.").verdict == 1.0
    pizza = "Where are you if you've paid for a pizza at a restaurant, in an oven, on a plate, or in a box?"
    assert _reason(pizza, "You are at a restaurant if you've paid for a pizza.", "At a restaurant.").verdict == 1.0


def test_english_option_named_settles_both_ways():
    ref = "You would plug in a reading lamp in a bedroom."
    assert _reason(LAMP_Q, ref, "In the bedroom. Garages are for cars.").verdict == 1.0
    assert _reason(LAMP_Q, ref, "Probably in the garage, where the workbench is.").verdict == 0.0


def test_a_longer_choice_is_not_read_as_the_shorter_one_inside_it():
    q = "Where did the dog sleep, on the floor, on the kitchen floor, on a sofa, or on a bed?"
    ref = "The dog slept on the kitchen floor."
    assert _reason(q, ref, "It slept on the kitchen floor.").verdict == 1.0
    assert _reason(q, ref, "It slept on the floor.").verdict == 0.0


def test_hedged_or_disjoint_choices_do_not_settle_yes():
    ref = "You would plug in a reading lamp in a bedroom."
    hedge = _reason(LAMP_Q, ref, "It could be a bedroom, but a garage would make just as much sense. Either works.")
    assert hedge.verdict is None and hedge.features["hedge"] == 1.0
    assert _reason(LAMP_Q, ref, "Usually in a study or a bedroom.").verdict is None
    assert _reason(LAMP_Q, ref, "In a bedroom, a garage or a bathtub.").verdict is None


def test_a_negated_choice_is_not_named():
    ref = "You would plug in a reading lamp in a bedroom."
    assert _reason(LAMP_Q, ref, "Not in a bathtub, of course; in a bedroom.").verdict == 1.0


def test_mandarin_choice_clause_with_stem_and_tail():
    q = "你会把湿雨伞放在门口、床上、抽屉里还是衣柜里呢？"
    assert options(q, "", "zh") == ["门口", "床上", "抽屉", "衣柜"]
    ref = "我会把湿雨伞放在门口。"
    assert _reason(q, ref, "放在门口。门口通风，雨水也不会弄湿屋里。", "zh").verdict == 1.0
    assert _reason(q, ref, "放在抽屉里最整齐。", "zh").verdict == 0.0
    assert _reason(q, ref, "门口也行，抽屉里也可能是，看你怎么理解。", "zh").verdict is None


def test_mandarin_relation_words_are_options():
    q = "请问这两句话是蕴含关系、矛盾关系还是没有关系？第一句话为：他今天买了三本书。第二句话为：他今天买了书。"
    assert options(q, "", "zh") == ["蕴含关系", "矛盾关系", "没有关系"]
    ref = "蕴含关系。因为买了三本书就一定买了书。"
    assert _reason(q, ref, "是蕴含关系，第一句能推出第二句。", "zh").verdict == 1.0
    assert _reason(q, ref, "我认为是矛盾关系。", "zh").verdict == 0.0
    assert _reason(q, ref, "我倾向于蕴含关系，不过说没有关系也说得通，两种看法都能成立。", "zh").verdict is None


def test_mandarin_list_found_around_the_reference_answer():
    q = "节能是指减少能源消耗。根据上述定义，随手关灯、开着空调睡觉、长时间待机和夏天开窗通风中，哪一项不属于节能？"
    ref = "开着空调睡觉。因为它会持续消耗电能。"
    assert options(q, ref, "zh") == ["随手关灯", "开着空调睡觉", "长时间待机", "夏天开窗通风"]
    assert _reason(q, ref, "逐项看：随手关灯和开窗通风都省电，所以答案是开着空调睡觉。", "zh").verdict == 1.0
    assert _reason(q, ref, "不属于节能的是长时间待机。", "zh").verdict == 0.0


def test_a_conclusion_that_names_no_listed_choice_does_not_fall_back():
    q = "节能是指减少能源消耗。根据上述定义，随手关灯、开着空调睡觉、长时间待机和夏天开窗通风中，哪一项不属于节能？"
    ref = "开着空调睡觉。因为它会持续消耗电能。"
    assert _reason(q, ref, "我选洗澡时间太长。随手关灯当然是节能的。", "zh").verdict is None


# ---- yes / no -----------------------------------------------------------------------------------

INFER_Q = "All birds have feathers. A robin is a bird, so a robin has feathers. Is the inference correct?"
INFER_REF = "The inference is correct: the conclusion follows from the premises."


def test_english_yes_no():
    assert _reason(INFER_Q, INFER_REF, "Yes, it is valid, since robins aren't an exception.").verdict == 1.0
    assert _reason(INFER_Q, INFER_REF, "No, that inference doesn't hold.").verdict == 0.0
    assert _reason(INFER_Q, INFER_REF, "The form looks fine, but it is not well supported.").verdict == 0.0


def test_partly_right_and_no_verdict_do_not_settle():
    almost = _reason(INFER_Q, INFER_REF, "That's almost correct. Robins do have feathers, but so do other animals.")
    assert almost.verdict is None and almost.features["hedge"] == 1.0
    assert _reason(INFER_Q, INFER_REF, "Birds are fascinating creatures with many adaptations.").verdict is None


def test_mandarin_polarity_per_asked_predicate():
    q = "以下说法是否存在时代矛盾的问题，是否可能真实发生？唐朝诗人用手机给朋友发消息。"
    ref = "该说法存在时代矛盾，不可能真实发生。因为唐朝没有手机。"
    assert polarity(ref, q, "zh")["时代矛盾"] is True
    assert _reason(q, ref, "存在时代矛盾，这件事不可能发生。", "zh").verdict == 1.0
    assert _reason(q, ref, "完全可能，所以并不存在时代矛盾。", "zh").verdict == 0.0


def test_mandarin_inference_and_counter_proposition():
    q = "所有的金属都导电。铜是金属，所以铜导电。这个推理是否正确且有充分支持？"
    ref = "这个推理是正确且有充分支持的。"
    assert _reason(q, ref, "这个推理是正确的，依据也充分。", "zh").verdict == 1.0
    assert _reason(q, ref, "推理方向没错，但依据并不充分。", "zh").verdict == 0.0
    assert _reason(q, ref, "这个推理基本正确。", "zh").verdict is None
    q2 = "如果所有的猫都会叫，那么我们能不能推断出来“不会叫的动物都不是猫”？"
    ref2 = "可以推断出。这是原命题的逆否命题。"
    assert _reason(q2, ref2, "能，这是逆否命题。", "zh").verdict == 1.0
    assert _reason(q2, ref2, "不能完全推断出来。", "zh").verdict == 0.0


def test_dialogue_yes_no_never_settles():
    ev = _turn("Are you sure? I thought Sydney was the capital.", "Yes, I am sure: Canberra is the capital.",
               "No, it's definitely Canberra.")
    assert ev.verdict is None


# ---- numbers, orders, short answers -------------------------------------------------------------

APPLES_Q = "Tom has 3 bags with 4 apples each and eats 2. How many apples are left?"
APPLES_REF = "Three bags of four apples make twelve apples. Eating two leaves ten. So the answer is 10."


def test_numbers_settle_on_the_stated_or_final_number():
    assert reference_answer(APPLES_Q, APPLES_REF, "en").value == 10.0
    assert _reason(APPLES_Q, APPLES_REF, "Ten apples are left.").verdict == 1.0
    assert _reason(APPLES_Q, APPLES_REF, "3 times 4 is 12, minus 2 leaves 10 apples.").verdict == 1.0
    assert _reason(APPLES_Q, APPLES_REF, "He has 12 apples left.").verdict == 0.0


def test_a_wrong_final_number_with_the_reference_number_elsewhere_is_undecided():
    ev = _reason(APPLES_Q, APPLES_REF, "Twelve minus two is ten, then he buys two more, so 12 are left.")
    assert ev.verdict is None and ev.features["answer_match"] == 0.5


def test_mandarin_numbers_and_explicit_answers():
    q = "小明有5支笔，又买了3盒，每盒4支。他一共有多少支笔？"
    ref = "答案是17。五加十二等于十七。"
    assert _reason(q, ref, "他一共有十七支笔。", "zh").verdict == 1.0
    assert _reason(q, ref, "三乘四得十二，所以一共是20支。", "zh").verdict == 0.0


def test_a_short_dialogue_reference_states_its_answer_as_its_only_new_number():
    assert _turn("What is 30 degrees Celsius in Fahrenheit?", "30 degrees Celsius is 86 degrees Fahrenheit.",
                 "That's eighty-six degrees Fahrenheit.").verdict == 1.0
    long_ref = ("Regular exercise improves mood, sleep and heart health, and a study from 2015 found benefits "
                "even for short walks, so it is worth building into your daily routine whenever you can.")
    assert _turn("Why should I exercise?", long_ref, "It keeps you healthy.").verdict is None


def test_orders():
    q = "请将下列朝代按时间先后顺序排序。宋朝、汉朝、清朝、唐朝。"
    ref = "汉朝、唐朝、宋朝、清朝。汉朝最早，清朝最晚。"
    assert _reason(q, ref, "顺序是汉朝、唐朝、宋朝、清朝。", "zh").verdict == 1.0
    assert _reason(q, ref, "汉朝、宋朝、唐朝、清朝。", "zh").verdict == 0.0
    assert stated_order("汉朝的张骞、唐朝的李白、宋朝的苏轼、清朝的曹雪芹都很有名。", ["汉朝", "唐朝", "宋朝", "清朝"],
                        "zh") is None  # mentioned in passing, not a stated order
    assert _reason(q, ref, "大概是汉朝、唐朝、宋朝、清朝，也可能是汉朝、宋朝、唐朝、清朝。", "zh").verdict is None


def test_short_answers():
    q = "请根据这个字谜的谜面推理出正确的汉字。谜面是：一口咬掉牛尾巴。"
    assert _reason(q, "告", "是“告”字。", "zh").verdict == 1.0
    assert _reason(q, "告", "我猜是“吉”字。", "zh").verdict == 0.0


# ---- features -----------------------------------------------------------------------------------

def test_features_rank_closer_replies_higher():
    q, ref = "What should I pack for a beach day?", "Pack sunscreen, a towel, water and a hat."
    close = _turn(q, ref, "Bring sunscreen, a towel and plenty of water.").features
    far = _turn(q, ref, "Which beach are you going to? Let me know first.").features
    assert close["key_recall"] > far["key_recall"]
    assert far["asks_back"] == 1.0 and close["asks_back"] == 0.0


def test_double_negation_and_formatting():
    assert _reason(INFER_Q, INFER_REF, "There is no flaw in the reasoning; it is correct.").verdict == 1.0
    assert _reason(LAMP_Q, "You would plug in a reading lamp in a bedroom.",
                   "**Answer: a bedroom.** Garages and bathtubs are not for reading.").verdict == 1.0
    q = "所有的金属都导电。铜是金属，所以铜导电。这个推理是否正确且有充分支持？"
    assert _reason(q, "这个推理是正确且有充分支持的。", "这个推理没有问题，结论成立。", "zh").verdict == 1.0


def test_requests_are_not_yes_no_questions():
    assert reference_answer("Can you tell me whether the plan is sound?", "Sure, it is sound.", "en").kind != "polarity"


def test_a_choice_ruled_out_in_the_conclusion_is_not_named():
    q = "你会把剩下的蛋糕放在冰箱里、烤箱里、床头柜上还是面包店里？"
    assert _reason(q, "我会把剩下的蛋糕放在冰箱里。", "放烤箱里。冰箱太冷了，所以冰箱不行。", "zh").verdict is None


def test_mandarin_choice_runs_across_commas_but_not_into_the_stem():
    assert options("书包放在哪里最合适？在书桌上，在门口，还是在厨房里？", "", "zh") == ["书桌", "门口", "厨房"]
    assert options("当你很困的时候，你会去睡觉、跑步还是做饭？", "", "zh") == ["睡觉", "跑步", "做饭"]
    assert options("周末你会做作业，还是去看电影，还是什么都不做？", "", "zh") == ["做作业", "看电影", "什么都不做"]


def test_choices_read_back_or_only_others_named_settle_no():
    ref = "You would plug in a reading lamp in a bedroom."
    assert _reason(LAMP_Q, ref, "You would plug in a reading lamp in a bedroom, a garage, a bathtub, or a mailbox.") \
        .verdict == 0.0
    assert _reason(LAMP_Q, ref, "In a garage or a bathtub, where there are outlets.").verdict == 0.0
    among = "Of a bedroom, a garage, a bathtub, or a mailbox, the best is a bedroom."
    assert _reason(LAMP_Q, ref, among).verdict is None  # one choice singled out: not a read-back


def test_mandarin_labelled_choices_and_alternative_separators():
    q = "小明每天都跑步。如果上述为真，下列哪个说法必须为真？说法一：小明喜欢游泳。说法二：小明会运动。说法三：小明不出门。"
    assert options(q, "", "zh") == ["说法一", "说法二", "说法三"]
    ref = "说法二：小明会运动。因为跑步是运动。"
    assert _reason(q, ref, "说法二：小明会运动。", "zh").verdict == 1.0
    assert _reason(q, ref, "说法三。", "zh").verdict == 0.0
    assert options("他现在处于什么状态？是已经睡着了，还是在看书，抑或是在吃饭？", "", "zh") == ["已经睡着了", "看书", "吃饭"]
    assert options("小猫在哪里？是在沙发上、在床下、或在窗台上？", "", "zh") == ["沙发", "床下", "窗台"]


def test_mandarin_ma_question_reads_its_predicates():
    q = "每次下雨我都带伞。所以，我永远不会被淋湿。这个推理正确且有充分依据吗？"
    ref = "这个推理是不正确且没有充分依据的，因为可能忘带伞。"
    assert _reason(q, ref, "这个推理是不正确的。", "zh").verdict == 1.0
    assert _reason(q, ref, "这个推理正确，依据也充分。", "zh").verdict == 0.0


def test_the_ice_example_reads_the_answer_not_the_word_count():
    """Issue 27: "The ice will melt." against "The ice melts completely into the tea." is right
    ("melt" recalls "melts"); the same words negated, or contradicted, are not."""
    q = "If you drop a few ice cubes into a cup of hot tea and wait for an hour, what happens to the ice?"
    ref = "The ice melts completely into the tea."

    def ev(reply: str):
        return grade("reasoning_binary_en", {"question": q, "reference": ref, "reply": reply}, {})

    right = ev("The ice will melt.")
    assert right.verdict == 1.0 and right.features["key_recall"] == 0.5 and right.features["contradicts"] == 0.0
    negated = ev("The ice will not melt; it stays solid.")
    assert negated.verdict is None and negated.features["key_recall"] == 0.0 and negated.features["contradicts"] > 0
    assert ev("The tea gets colder and the ice floats.").verdict is None  # says something the reference does not
    zh = grade("reasoning_binary_zh", {"question": "把几块冰放进热茶里等一个小时，冰会怎样？", "reference": "冰会全部融化在茶里。",
                                       "reply": "冰不会融化。"}, {})
    assert zh.verdict is None and zh.features["contradicts"] > 0
