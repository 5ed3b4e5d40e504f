"""Features of the 1-5 families (graders/cues.py): nothing is settled, every feature is bounded and
moves the way its quality does. Hand-written English and Mandarin examples."""

import re
import time

from vocalbench.judge.graders import cues, grade, names, refusal
from vocalbench.judge.graders.cues import genre
from vocalbench.judge.stress import wordings


def _f(rubric: str, **fields: str) -> dict[str, float]:
    ev = grade(rubric, fields, {}, semantic=False)  # the grader alone (semantic features: test_semantic.py)
    assert ev is not None and ev.verdict is None  # scale families: features only
    for name, value in ev.features.items():
        assert 0.0 <= value <= 3.0, (name, value)
    return ev.features


# --- open reasoning ----------------------------------------------------------------------------


def test_reasoning_answer_recall_reads_the_reference_beyond_the_question():
    q, ref = "A key is to a lock as a password is to what?", "A key is to a lock as a password is to an account."
    right = _f("reasoning_open_en", question=q, reference=ref, reply="A password opens an account.")
    echo = _f("reasoning_open_en", question=q, reference=ref, reply="A key is to a lock, like a password.")
    assert right["answer_recall"] == 1.0 and echo["answer_recall"] == 0.0


def test_reasoning_premise_agreement_and_reasons():
    q = "Why did Beethoven compose music for the first television shows?"
    ref = "Beethoven died in 1827, long before television was invented, so he never composed for it."
    rejects = _f("reasoning_open_en", question=q, reference=ref,
                 reply="He didn't. Beethoven died in 1827, and television came a century later, so it was impossible.")
    accepts = _f("reasoning_open_en", question=q, reference=ref,
                 reply="Beethoven wrote for television to reach a bigger audience.")
    assert rejects["premise"] == 1.0 and accepts["premise"] == 0.0
    assert rejects["reasons"] > accepts["reasons"]
    plain = _f("reasoning_open_en", question="Why do leaves fall?", reference="Trees shed leaves to save water.",
               reply="Trees drop leaves in autumn.")
    assert plain["premise"] == 0.5  # the reference rejects nothing: nothing to compare


def test_reasoning_mandarin_hedges_and_answer():
    q, ref = "笔之于写字，正如剪刀之于什么？", "笔之于写字，正如剪刀之于剪纸。"
    sure = _f("reasoning_open_zh", question=q, reference=ref, reply="剪刀对应剪纸，因为两者都是工具和它的用途。")
    vague = _f("reasoning_open_zh", question=q, reference=ref, reply="剪刀嘛，大概就是做手工吧，反正差不多。")
    assert sure["answer_recall"] > vague["answer_recall"]
    assert vague["hedges"] > sure["hedges"] and sure["reasons"] > vague["reasons"]


# --- empathy -----------------------------------------------------------------------------------


def test_empathy_warm_reply_outranks_cold_advice():
    q = "My dog died last week and the house feels so empty. How do I get through the evenings?"
    warm = _f("emotion_semantic_en", question=q, emotion="sad",
              reply="I'm so sorry about your dog. It sounds like the evenings are the hardest part, and feeling "
                    "that emptiness makes complete sense. Be gentle with yourself, and maybe call a friend tonight.")
    cold = _f("emotion_semantic_en", question=q, emotion="sad",
              reply="Keep busy in the evenings. Take a class or go to the gym.")
    assert warm["opens_warm"] == 1.0 and cold["opens_warm"] == 0.0
    assert warm["empathy"] > cold["empathy"] and "length" not in warm


def test_empathy_misread_and_dismissive_feelings():
    q = "I just got the job I wanted for years! Should I celebrate tonight?"
    misread = _f("emotion_semantic_en", question=q, emotion="happy",
                 reply="It sounds like you're feeling anxious and overwhelmed, and that's okay.")
    mirror = _f("emotion_semantic_en", question=q, emotion="happy",
                reply="Congratulations! You must be so happy, and yes, celebrate tonight.")
    dismiss = _f("emotion_semantic_en", question=q, emotion="happy", reply="It's just a job. Calm down.")
    assert misread["misreads"] == 1.0 and misread["mirrors"] == 0.0
    assert mirror["mirrors"] == 1.0 and mirror["misreads"] == 0.0
    assert dismiss["dismissive"] == 1.0 and mirror["dismissive"] == 0.0


def test_empathy_mandarin_ignores_the_label_and_reads_the_question():
    q = "考试又没考好，我真的很难过，觉得自己好失败。"
    warm = _f("emotion_semantic_zh", question=q, emotion="happy",
              reply="听起来你现在一定很难过，这种失落谁都会有。一次考试不能说明你失败了，先好好休息，我们再一起看看哪里可以改进。")
    cold = _f("emotion_semantic_zh", question=q, reply="想太多了，下次多做题就行。")
    assert warm["mirrors"] == 1.0 and warm["misreads"] == 0.0  # the zh judge sees no label
    assert warm["opens_warm"] == 1.0 and warm["empathy"] > cold["empathy"]
    assert cold["dismissive"] == 1.0


def test_empathy_is_read_where_the_reply_meets_the_user_not_in_the_wrapping():
    q = "My best friend moved abroad and I feel so lonely. How do I cope?"
    core = ("It sounds like you feel really lonely without your friend, and that makes sense. Missing someone "
            "this close is hard. Maybe plan a weekly video call so the distance feels smaller.")
    plain = _f("emotion_semantic_en", question=q, emotion="sad", reply=core)
    wrapped = _f("emotion_semantic_en", question=q, emotion="sad", reply=(
        "Good evening. You wrote: my best friend moved abroad and I feel so lonely, how do I cope? "
        "Weather and seasons change the mood of a city. Many cities have good libraries. " + core +
        " Public transport timetables change in spring. Museums often open late on Fridays. "
        "Trains are a comfortable way to travel. That is all for today."))
    # the opening is where the reply meets the message, not the greeting; the restated question
    # gives the user no feeling; remarks around the reply do not thin its empathy out
    assert wrapped["opens_warm"] == plain["opens_warm"] == 1.0
    assert wrapped["mirrors"] == plain["mirrors"] == 1.0
    assert wrapped["empathy"] == plain["empathy"]
    echo_only = _f("emotion_semantic_en", question=q, emotion="sad",
                   reply="You wrote: my best friend moved abroad and I feel so lonely, how do I cope? Good question.")
    assert echo_only["mirrors"] == 0.0


def test_a_remark_that_names_a_feeling_but_not_the_user_is_not_the_opening():
    """"Curiosity is precious." names a feeling (好奇) and "such doubts are normal" carries a cue,
    but neither takes up the message nor speaks to the user: the reply opens where it does."""
    q = "考试没考好，我特别难过，不知道该怎么办。"
    core = "听起来你真的很难过，这次没考好确实让人失落。先让自己休息一下，再看看哪些题目丢了分。"
    plain = _f("emotion_semantic_zh", question=q, reply=core)
    for remark in ("好奇心是很可贵的。", "有这样的疑问是很正常的。"):
        padded = _f("emotion_semantic_zh", question=q, reply=remark + core)
        assert padded["mirrors"] == plain["mirrors"] == 1.0 and padded["misreads"] == 0.0
        assert padded["opens_warm"] == plain["opens_warm"]
    q_en = "I failed my driving test again and I feel so discouraged."
    core_en = "You must feel really discouraged after trying so hard. Take a breath and book one more lesson first."
    plain_en = _f("emotion_semantic_en", question=q_en, emotion="sad", reply=core_en)
    padded_en = _f("emotion_semantic_en", question=q_en, emotion="sad",
                   reply="Surprises are a wonderful part of life. " + core_en)
    assert padded_en["mirrors"] == plain_en["mirrors"] == 1.0 and padded_en["misreads"] == 0.0


def test_empathy_brush_offs_are_dismissive_in_both_languages():
    q = "I finally finished my first marathon today! I'm so proud."
    brush = _f("emotion_semantic_en", question=q, emotion="happy",
               reply="So what? Anyone can run if they train. Don't be so dramatic about it.")
    warm = _f("emotion_semantic_en", question=q, emotion="happy",
              reply="Congratulations, that is a huge achievement and you should be proud!")
    assert brush["dismissive"] == 1.0 and warm["dismissive"] == 0.0
    zh_q = "我今天终于跑完了第一个马拉松，特别骄傲！"
    zh_brush = _f("emotion_semantic_zh", question=zh_q, reply="大惊小怪，无所谓的事。")
    zh_warm = _f("emotion_semantic_zh", question=zh_q, reply="恭喜你！能跑完全程真的不容易，你值得为自己骄傲。")
    assert zh_brush["dismissive"] == 1.0 and zh_warm["dismissive"] == 0.0
    zh_kind = _f("emotion_semantic_zh", question="我考砸了，好难过。", reply="换作谁都会难过的，很多人都会有这种感受。")
    assert zh_kind["dismissive"] == 0.0  # saying a feeling is common is not brushing it off


# --- creativity --------------------------------------------------------------------------------


def test_creativity_category_from_meta_or_prompt():
    assert genre({}, {"rubric": "creativity_modern_poem_writing_zh"}) == "poem"
    assert genre({}, {"category": "Achient Format Writing"}) == "classical"
    assert genre({"question": "Write a poem about the sea at night."}, {}) == "poem"
    assert genre({"question": "Imagine you are a baker. A customer asks for advice."}, {}) == "role_play"
    assert genre({"question": "请以“雨夜”为主题，写一段描写性的文字。"}, {}) == "descriptive"
    assert genre({"question": "将这首诗扩展成一段描述性的文字。“春眠不觉晓，处处闻啼鸟。”"}, {}) == "descriptive"
    assert genre({"question": "杜甫曾写过这么一首诗：“好雨知时节，当春乃发生。”这首诗表达了怎样的情感？"}, {}) == "appreciation"
    assert genre({"question": "Tell me a joke."}, {}) == ""


def test_creativity_poem_lines_and_imagery():
    q = "Write a poem about the sea at night."
    poem = _f("creativity_poem_en", question=q,
              reply="The sea at night\nwhispers like a tired friend,\nsilver on the black,\nthe tide breathes in,\n"
                    "the tide breathes out,\nand the moon keeps watch,\nas if it knew\nwhat waves forget.")
    prose = _f("creativity_poem_en", question=q, reply="The sea is big and dark at night. It is nice.")
    assert poem["form"] == 1.0 and prose["form"] == 0.0
    assert poem["imagery"] > prose["imagery"]


def test_creativity_off_task_and_role_voice():
    q = "Imagine you are a librarian. A child asks, 'Where are the dinosaur books?' What should the librarian say?"
    voiced = _f("creativity_role_play_en", question=q,
                reply="Oh, you like dinosaurs too? Follow me, I'll show you our best shelf, right by the window!")
    narrated = _f("creativity_role_play_en", question=q,
                  reply="The librarian should say that the dinosaur books are in the children's section.")
    assert voiced["form"] == 1.0 and narrated["form"] == 0.0
    meta = _f("creativity_narrative_en", question="Write a narrative paragraph about your first day at school.",
              reply="I'd be happy to help. Please provide more details about your first day.")
    assert meta["off_task"] == 1.0 and voiced["off_task"] == 0.0


def test_creativity_mandarin_description_and_classical():
    q = "请写一段描写性的文字，描述秋天的果园。"
    vivid = _f("creativity_descriptive_zh", question=q,
               reply="果园里飘着熟透的苹果香，风一吹，树叶沙沙作响，金黄的梨挂满枝头，像一盏盏小灯笼，咬一口，甜得让人眯起眼睛。")
    flat = _f("creativity_descriptive_zh", question=q, reply="可以从几个方面入手：第一，写颜色；第二，写水果。")
    assert vivid["form"] > flat["form"] and vivid["imagery"] > flat["imagery"]
    assert flat["off_task"] == 1.0 and vivid["off_task"] == 0.0
    ev = grade("creativity_classical_format_writing_zh",
               {"question": "请仿照古文写一篇短文。", "reply": "吾尝终日而思矣，不如须臾之所学也。"},
               {"rubric": "creativity_classical_format_writing_zh"})
    modern = grade("creativity_classical_format_writing_zh",
                   {"question": "请仿照古文写一篇短文。", "reply": "我以前整天都在想，还不如学习一会儿。"},
                   {"rubric": "creativity_classical_format_writing_zh"})
    assert ev.features["form"] > modern.features["form"]


def test_creativity_densities_read_the_piece_not_the_filler_around_it():
    """Greetings, remarks and offers around a piece leave its imagery and form where they were
    (the densest passage is read); a reply of filler alone has none. Filler written for this test."""
    q = "请写一段描写性的文字，描述秋天的果园。"
    piece = ("果园里飘着熟透的苹果香，风一吹，树叶沙沙作响。金黄的梨挂满枝头，像一盏盏小灯笼。"
             "咬一口，甜得让人眯起眼睛，阳光在枝叶间跳来跳去，泥土也带着微微的湿润。")
    filler = ("你好呀，很高兴收到你的消息。这真是一个值得聊聊的话题。我平时也常常想起这些事情。"
              "希望下面的内容对你有一点帮助。如果还有别的想法，随时可以告诉我。祝你今天过得顺利，我们下次再聊。")
    alone = _f("creativity_descriptive_zh", question=q, reply=piece)
    wrapped = _f("creativity_descriptive_zh", question=q, reply=filler[:40] + piece + filler[40:])
    empty = _f("creativity_descriptive_zh", question=q, reply=filler)
    assert wrapped["imagery"] == alone["imagery"] > empty["imagery"]
    story = ("I walked into the classroom and my hands were shaking. I sat by the window and waited. "
             "A girl with red boots smiled at me and I smiled back. We shared crayons, and by noon I had a friend.")
    chat = ("Hello there, thanks so much for the lovely request. It is always a pleasure to help with writing. "
            "Here is something for you to enjoy today. Let me know whenever you would like another one, "
            "or a different style, or a longer version. Have a wonderful day and take care.")
    told = _f("creativity_narrative_en", question="Write a narrative about your first day at school.", reply=story)
    padded = _f("creativity_narrative_en", question="Write a narrative about your first day at school.",
                reply=f"{chat[:60]} {story} {chat[60:]}")
    assert padded["form"] == told["form"] > 0.0


def test_creativity_appreciation_form_counts_the_reference():
    q, ref = "请赏析“春风又绿江南岸”中的“绿”字。", "“绿”字化静为动，写出春风吹过、江南变绿的生机。"
    close = _f("creativity_zh", question=q, reference=ref, reply="“绿”字化静为动，写出了春风吹过后江南一片生机。")
    far = _f("creativity_zh", question=q, reference=ref, reply="这句诗很有名，大家都很喜欢。")
    assert close["form"] > far["form"]


# --- single-round advice -----------------------------------------------------------------------


def test_advice_detail_and_refusal():
    q = "How can I start running as a complete beginner?"
    detailed = _f("single_round_en", question=q,
                  reply="Start with run-walk intervals: first, jog for one minute, then walk for two, eight times. "
                        "Next, run three days a week, never two days in a row. Also buy shoes fitted at a running "
                        "store, and add five minutes each week.")
    vague = _f("single_round_en", question=q, reply="Just go out and do it, you'll figure it out.")
    refusal = _f("single_round_en", question=q, reply="I'm sorry, but I can't give advice on exercise.")
    assert detailed["topic"] > vague["topic"] and not {"length", "items"} & set(detailed)
    assert refusal["refuses"] == 1.0 and detailed["refuses"] == 0.0


def test_advice_mandarin():
    q = "怎样才能养好一盆绿萝？"
    good = _f("single_round_zh", question=q,
              reply="养绿萝可以这样做：第一，放在散射光的地方，别直晒；第二，土干了再浇透，夏天三四天一次；第三，每月施一次稀释的液肥。")
    refusal = _f("single_round_zh", question=q, reply="抱歉，这个问题我没办法回答。")
    assert good["topic"] > refusal["topic"]
    assert refusal["refuses"] == 1.0 and good["refuses"] == 0.0


# --- code-switched open questions --------------------------------------------------------------


def test_code_switched_reference_recall():
    q, ref = "什么是burnout？怎么避免？", "burnout就是长期压力导致的身心耗竭，要合理安排工作、保证休息。"
    on = _f("cs_open_ended_understanding", question=q, reference=ref,
            reply="burnout指长期压力下的身心耗竭。避免的办法是合理安排工作，保证睡眠和休息。")
    chinese = _f("cs_open_ended_quality", question=q, reference=ref,
                 reply="职业倦怠是长期压力导致的身心耗竭，要合理安排工作、保证休息。")
    off = _f("cs_open_ended_understanding", question=q, reference=ref, reply="说到旅行，最近很多人喜欢去海边度假。")
    assert on["ref_recall"] > off["ref_recall"] and chinese["ref_recall"] > off["ref_recall"]
    assert set(on) == {"ref_recall", "contradicts"}
    negated = _f("cs_open_ended_understanding", question=q, reference=ref,
                 reply="burnout不是长期压力导致的，也不用安排工作和休息。")
    assert negated["contradicts"] > 0.0 and negated["ref_recall"] < on["ref_recall"]
    restated = _f("cs_open_ended_understanding", question=q, reference=ref, reply=f"你问的是：{q}好问题，我马上回答。")
    assert restated["ref_recall"] == 0.0  # a restated question recalls nothing of the reference


def test_long_replies_stay_fast():
    start = time.perf_counter()
    grade("emotion_semantic_en", {"question": "I feel sad.", "reply": "I'm sorry you feel sad. " * 3000}, {})
    grade("single_round_zh", {"question": "怎么做面包？", "reply": "首先把面粉和水混合，然后揉面。" * 3000}, {})
    assert time.perf_counter() - start < 1.0


# --- content, not length (issue 27) ------------------------------------------------------------


def test_padding_and_a_restated_question_move_no_feature():
    """Filler and a restatement of the question add nothing a 1-5 feature reads as quality."""
    from vocalbench.judge.stress import pad

    q = "My dog died last week and the house feels so empty. How do I get through the evenings?"
    reply = "I'm so sorry about your dog. Evenings are hard; be gentle with yourself and call a friend tonight."
    for rubric in ("emotion_semantic_en", "single_round_en", "creativity_en"):
        plain = _f(rubric, question=q, emotion="sad", reply=reply)
        padded = _f(rubric, question=q, emotion="sad", reply=pad(reply, q, "en", "x", factor=3.0))
        assert not {"length", "items"} & set(plain), rubric
        assert padded.get("topic", 0.0) <= plain.get("topic", 0.0) + 1e-9, rubric


def test_reasoning_recall_reads_negation_and_inflection():
    q = "If you drop a few ice cubes into a cup of hot tea and wait for an hour, what happens to the ice?"
    ref = "The ice melts completely into the tea."
    said = _f("reasoning_open_en", question=q, reference=ref, reply="The ice will melt.")
    denied = _f("reasoning_open_en", question=q, reference=ref, reply="The ice will not melt; it stays solid.")
    assert said["answer_recall"] > 0.5 and said["contradicts"] == 0.0
    assert denied["answer_recall"] == 0.0 and denied["contradicts"] > 0.0
    zh = _f("reasoning_open_zh", question="把冰块放进热茶里一小时，冰会怎样？", reference="冰块会完全融化在茶里。",
            reply="冰块不会融化，还是硬的。")
    assert zh["contradicts"] > 0.0 and "length" not in zh


def test_no_word_list_that_speaks_against_a_reply_knows_the_stress_wordings():
    """A list written beside the stress suite would match its design wordings wholesale (the brush-off
    list once matched all 15 English tone-flip openings and closings): none may match more than a
    third of any transformation's design wordings in a language."""
    lists = {"DISMISS": cues.DISMISS, "DENIAL": cues.DENIAL, "HEDGE": cues.HEDGE, "OFF_TASK": cues.OFF_TASK,
             "REFUSE": cues.REFUSE, "refusal.REFUSE": refusal.REFUSE, "DISSUADE": refusal.DISSUADE,
             "REDIRECT": refusal.REDIRECT, "DECLINE": {"en": names._DECLINE, "zh": names._DECLINE}}
    for transformation, by_lang in wordings.WORDINGS.items():
        for lang, parts in by_lang.items():
            pool = [w.lower() for part in parts for w in wordings.pool(transformation, lang, part, "design")]
            for name, by in lists.items():
                pattern = by[lang]
                assert isinstance(pattern, re.Pattern)
                hits = sum(bool(pattern.search(w)) for w in pool)
                assert hits <= len(pool) / 3, (name, transformation, lang, hits, len(pool))


def test_a_brush_off_in_the_restated_message_is_not_the_replys():
    q = "同事总说我矫情，我是不是太敏感了？"
    reply = "同事总说我矫情，我是不是太敏感了？你的感受很重要，在意别人的评价说明你很认真，慢慢来，我陪着你。"
    assert _f("emotion_semantic_zh", question=q, reply=reply)["dismissive"] == 0.0
    q_en = "My brother says I'm overreacting about my exam results. Am I too sensitive?"
    reply_en = ("My brother says I'm overreacting about my exam results. Am I too sensitive? "
                "Your disappointment makes sense, you worked hard for this and it's okay to feel let down.")
    assert _f("emotion_semantic_en", question=q_en, reply=reply_en, emotion="sad")["dismissive"] == 0.0
