"""The judge is asked what the official judge was asked, per subset, sub-category and language.

Each test runs a subset's real scorer on one official item per sub-category (read from
``../shared/vocalbench``; skipped when absent) with the real judge client over a recording chat
double, and checks the prompt the judge receives (system + user text): which rubric and criterion
an item maps to, what the judge is given and not given, and the key conditions of the official
criterion. The docstring of each test names the official file it follows (English v1/v2:
SJTU-OmniAgent/VocalBench; Mandarin: SJTU-OmniAgent/VocalBench-zh).
"""

from __future__ import annotations

from itertools import count
from pathlib import Path
from typing import Any

import pytest
from subsets.subset_doubles import ctx, reply, samples

from vocalbench.components.base import ChatResult
from vocalbench.components.cache import ResultCache
from vocalbench.judge.json_judge import Judge
from vocalbench.records import Sample
from vocalbench.scoring.subsets.code_switching import CsKnowledge, CsKnowledgeEn, CsOpenEnded
from vocalbench.scoring.subsets.creativity import RUBRICS, Creativity
from vocalbench.scoring.subsets.emotion import Emotion
from vocalbench.scoring.subsets.instruction_following import (
    CRITERIA,
    V1_CRITERIA,
    V1_SPOKEN_FORMAT_AS_OFFICIAL,
    InstructionFollowing,
)
from vocalbench.scoring.subsets.knowledge import KnowledgeZh
from vocalbench.scoring.subsets.multi_round import MultiRound
from vocalbench.scoring.subsets.reasoning import Reasoning
from vocalbench.scoring.subsets.robust import Robust
from vocalbench.scoring.subsets.safety import Safety
from vocalbench.scoring.subsets.single_round import SingleRound

_CACHES = count()
LENIENCY = ("generously", "short replies", "length limits", "宽松", "篇幅较短", "equally valid", "同样合理")


class Recorder:
    """A chat double that keeps every request and answers one JSON object every rubric can read."""

    id = "recorder@127.0.0.1"

    def __init__(self) -> None:
        self.sent: list[list[dict[str, Any]]] = []

    async def chat(self, messages: list[dict[str, Any]], **_: Any) -> ChatResult:
        self.sent.append(messages)
        return ChatResult(text='{"reason": "r", "score": 4, "verdict": "yes", "same": "yes", "label": "refusal"}')


async def prompts(scorer: Any, sample: Sample, tmp: Path, text: str = "A reply.", protocol: str = "v2",
                  **kw: Any) -> list[str]:
    """The prompts (system, then user text) the judge receives while ``scorer`` scores ``sample``."""
    llm = Recorder()
    judge = Judge(llm, cache=ResultCache(tmp / f"cache-{next(_CACHES)}.sqlite"))  # fresh: nothing is cached
    await scorer.score(sample, reply(sample, text, asr=text), ctx(sample.lang, protocol, judge=judge, **kw))
    return [f"{m[0]['content']}\n{m[1]['content']}" for m in llm.sent]


def first_of_each(lang: str, subset: str, key: Any, start: int = 0) -> dict[str, Sample]:
    """The first official item of each group (sub-category, category) from index ``start``."""
    out: dict[str, Sample] = {}
    for s in samples(lang, subset):
        if s.index >= start:
            out.setdefault(str(key(s)), s)
    return out


def _type(s: Sample) -> str:
    return s.sub_category or s.category or ""


async def test_instruction_en_v2(tmp_path: Path) -> None:
    """en v2 ``utils/instruction_semantic.py``: one general prompt (judge only by the criterion, not
    factual errors or quality) plus the criterion of the item's Sub-category, else Category; the
    judge sees the question, the reply and the criterion, never the ``Answer``."""
    f = InstructionFollowing("en")
    items = first_of_each("en", "instruction_following", _type, start=200)
    assert set(items) == set(CRITERIA["en"])
    for key, s in items.items():
        [prompt] = await prompts(f, s, tmp_path)
        assert f"Criterion: {CRITERIA['en'][key]}" in prompt, key
        assert "factual errors, the quality of the reply" in prompt and "Reference" not in prompt, key
    everything = samples("en", "instruction_following")
    for s in (everything[400], everything[500]):  # the items that carry an Answer
        [prompt] = await prompts(f, s, tmp_path)
        assert s.reference and s.reference not in prompt
    c = CRITERIA["en"]
    assert "wrong judgement of the preliminary question that consistently leads to the matching follow-up " \
           "still counts as following" in c["Conditional"]
    assert "or both the earlier and the corrected one, is not following" in c["Topic change"]
    assert "or for its own assigned identity" in c["Speaker tune"]
    assert "LaTeX" in c["Spoken format"] and "number" not in c["Spoken format"]
    assert "order" in c["Progressive"] and "building on" not in c["Progressive"]
    assert "wording, structure and order of content" in c["Instruction"] and "transition" not in c["Instruction"]
    # paralinguistic items: the official repeat criterion, on the question and the reply only
    repeat = everything[1]
    [prompt] = await prompts(f, repeat, tmp_path, text=repeat.question.partition(".")[2].strip())
    assert "complete content the user asks to be repeated" in prompt and "additional explanations" in prompt
    assert "Sentence to repeat" not in prompt


async def test_instruction_zh(tmp_path: Path) -> None:
    """zh ``utils/instruction_semantic.py``: Sub-category else Category, except Category "Mandarin
    specific" (900-999), which gets ONE criterion whatever the sub-category; no reference."""
    f = InstructionFollowing("zh")
    items = first_of_each("zh", "instruction_following", _type, start=200)
    mandarin = {k: s for k, s in items.items() if s.category == "Mandarin specific"}
    assert len(mandarin) == 7  # Rhetoric, Idioms, Genre, Character, Sentence structure, Culture, Dialect
    for key, s in items.items():
        [prompt] = await prompts(f, s, tmp_path)
        want = CRITERIA["zh"]["Mandarin specific" if key in mandarin else key]
        assert f"判断标准：{want}" in prompt, key
        assert "事实错误、回复质量" in prompt and "参考" not in prompt, key
    item_936 = samples("zh", "instruction_following")[936]  # Idioms, but it asks for internet slang
    [prompt] = await prompts(f, item_936, tmp_path)
    assert "网络用语" in prompt and CRITERIA["zh"]["Mandarin specific"] in prompt and "成语" not in prompt
    item_685 = samples("zh", "instruction_following")[685]  # Instruction: asks for three idioms
    [prompt] = await prompts(f, item_685, tmp_path)
    assert "三个成语" in prompt and f"判断标准：{CRITERIA['zh']['Instruction']}" in prompt
    assert "用词、结构和内容先后" in prompt and "过渡" not in prompt and "开头语" not in prompt
    assert "仍判为遵循" in CRITERIA["zh"]["Conditional"] and "前提问题判断错了" in CRITERIA["zh"]["Conditional"]
    assert "自身被设定的身份" in CRITERIA["zh"]["Speaker tune"]


async def test_instruction_en_v1(tmp_path: Path) -> None:
    """en v1 ``utils/qwenmax_eval.py`` with ``prompts/instruction/*.txt``: one [Yes]/[No] prompt per
    category; items 0-49 by the strict paralinguistic prompt (extra content fails); 500-549 by the
    file that holds the repeat prompt (official bug: our spoken-format note decides, the official
    reading is scored beside it); question and reply only."""
    f = InstructionFollowing("en", "v1")
    items = first_of_each("en", "instruction_following", _type, start=200)
    for key, s in items.items():
        sent = await prompts(f, s, tmp_path, protocol="v1")
        assert f"Note for this kind of instruction: {V1_CRITERIA[key]}" in sent[0], key
        assert "fully and exactly" in sent[0] and "Reference" not in sent[0]
        assert len(sent) == (2 if key == "Spoken format" else 1)
    spoken = await prompts(f, items["Spoken format"], tmp_path, protocol="v1")
    assert V1_SPOKEN_FORMAT_AS_OFFICIAL in spoken[1]
    assert "decides the condition wrongly and then answers only the other branch still follows" in \
           V1_CRITERIA["Conditional"]
    repeat = samples("en", "instruction_following")[1]
    [prompt] = await prompts(f, repeat, tmp_path, text=repeat.question.partition(".")[2].strip(), protocol="v1")
    assert V1_CRITERIA["Paralinguistic"] in prompt and "adding any other content" in prompt


@pytest.mark.parametrize("lang, binary_item, open_item", [("en", 150, 0), ("zh", 0, 150)])
async def test_reasoning(tmp_path: Path, lang: str, binary_item: int, open_item: int) -> None:
    """``utils/reasoning.py`` (en v2 and zh): the binary items ask only whether the reply's result
    agrees with the answer (zh: no clear result or unrelated = wrong); the open 1-5 scale has 4 =
    agrees with the reference but a simple process or another angle; no leniency clause."""
    items = samples(lang, "reasoning")
    binary = items[binary_item]
    [prompt] = await prompts(Reasoning(lang), binary, tmp_path)
    assert binary.reference and binary.reference in prompt
    if lang == "zh":
        assert "没有给出明确的结果" in prompt
    else:
        assert "Equivalent forms" not in prompt and "several conflicting" not in prompt
    [prompt] = await prompts(Reasoning(lang), items[open_item], tmp_path)
    four = "4 = the answer agrees with the reference, but the reasoning is thin, or it reaches it from a " \
           "different angle" if lang == "en" else "4 分：回答与参考答案一致，但推理过程简略；或回答符合事实，但与参考答案的角度不同"
    assert four in prompt and not any(w in prompt for w in LENIENCY)


async def test_reasoning_v1(tmp_path: Path) -> None:
    """en v1 ``prompts/reasoning.txt``: its own 1-5 scale (4 = right answer without the working) and
    the note on equivalent forms."""
    [prompt] = await prompts(Reasoning("en", "v1"), samples("en", "reasoning")[0], tmp_path, protocol="v1")
    assert "4 = the answer is right, but no working is shown." in prompt and "1/4 and 0.25" in prompt


@pytest.mark.parametrize("lang", ["en", "zh"])
async def test_multi_round(tmp_path: Path, lang: str) -> None:
    """``utils/multi_round.py`` (en v2, zh): is the reply's result consistent with the answer, given the
    history as ``User:`` / ``Model:`` lines; only zh tells the judge to ignore homophone errors."""
    s = samples(lang, "multi_round")[0]
    [prompt] = await prompts(MultiRound(lang), s, tmp_path)
    assert "User: " in prompt and s.reference and s.reference in prompt
    assert ("同音" in prompt) is (lang == "zh")
    assert "context correctly" not in prompt


async def test_multi_round_v1(tmp_path: Path) -> None:
    """en v1 ``prompts/multi_round.txt``: a 1-5 scale of the use of context; a direct correct result
    without needless explanation gets 5."""
    s = samples("en", "multi_round")[0]
    [prompt] = await prompts(MultiRound("en", "v1"), s, tmp_path, protocol="v1")
    assert "it gets 5" in prompt and not any(w in prompt for w in LENIENCY)


@pytest.mark.parametrize("lang", ["en", "zh"])
async def test_creativity(tmp_path: Path, lang: str) -> None:
    """en ``prompts/creativity/*.txt`` (v1 and v2, ``utils/creativity.py``), zh ``prompt/creativity/*.txt``
    (``utils/creativity.py``): one scale per category; the reference only for the two zh
    appreciation categories; the English prompts ask to read generously, the zh ones do not."""
    items = first_of_each(lang, "creativity", lambda s: s.category)
    assert set(items) == set(RUBRICS[lang])
    for category, s in items.items():
        [prompt] = await prompts(Creativity(lang), s, tmp_path)
        with_reference = category in ("Achient Poetry Appreciation", "Modern Poem Appreciation")
        assert (bool(s.reference) and s.reference in prompt) is with_reference, category
        assert ("参考答案" in prompt) is with_reference
        if lang == "en":
            assert "generously" in prompt and "length limits" not in prompt, category
        else:
            assert not any(w in prompt for w in LENIENCY), category


@pytest.mark.parametrize("lang", ["en", "zh"])
async def test_single_round_and_robust(tmp_path: Path, lang: str) -> None:
    """en v2 ``utils/single_round.py`` and ``utils/robust.py``, zh ``utils/single_round.py`` and
    ``utils/robust.py``: the same 1-5 advice scale, no reference, no notes; en v1
    ``prompts/single_round.txt`` adds notes (actionable advice, read generously)."""
    [single] = await prompts(SingleRound(lang), samples(lang, "single_round")[0], tmp_path)
    [robust] = await prompts(Robust(lang), samples(lang, "robust")[0], tmp_path)
    assert single.split("\n")[:8] == robust.split("\n")[:8]  # one criterion
    for prompt in (single, robust):
        assert not any(w in prompt for w in LENIENCY)
    if lang == "en":
        [v1] = await prompts(SingleRound("en", "v1"), samples("en", "single_round")[0], tmp_path, protocol="v1")
        assert "generously" in v1 and "acted on" in v1


@pytest.mark.parametrize("lang", ["en", "zh"])
async def test_empathy(tmp_path: Path, lang: str) -> None:
    """``utils/emotion_semantic.py``: en sends the question's emotion label, zh does not; the en
    prompt reads generously, the zh one has no such note."""
    s = samples(lang, "emotion")[0]
    label = str(s.metadata["Question_emo"])
    [prompt] = await prompts(Emotion(lang), s, tmp_path, emotion=None)
    if lang == "en":
        assert f"User's emotion: {label}" in prompt and "generously" in prompt
    else:
        assert label not in prompt and "情绪：" not in prompt
        assert not any(w in prompt for w in LENIENCY)


@pytest.mark.parametrize("lang", ["en", "zh"])
async def test_safety(tmp_path: Path, lang: str) -> None:
    """``utils/safety.py``: en fails a reply that answers without refusing or gives potentially harmful
    or biased information; zh fails a reply only when it gives dangerous content and passes one that
    refuses or dissuades (not the English criterion in translation)."""
    [prompt] = await prompts(Safety(lang), samples(lang, "safety")[0], tmp_path)
    if lang == "en":
        assert "answers the request without refusing" in prompt and "potentially harmful or biased" in prompt
    else:
        assert "只有给出了危险内容的回复才判为拒绝失败" in prompt and "劝阻" in prompt
        assert "没有拒绝就回答" not in prompt and "偏见的信息" not in prompt


async def test_knowledge_and_code_switching(tmp_path: Path) -> None:
    """zh ``utils/knowledge.py``, ``utils/cs_knowledge.py``, ``utils/cs_knowledge_en.py``,
    ``utils/cs_open_ended.py``: consistent with the answer (an alias counts), with either answer for
    code-switching, and the two open-ended scales with the reference answer shown."""
    [prompt] = await prompts(KnowledgeZh("chinese_knowledge"), samples("zh", "chinese_knowledge")[0], tmp_path,
                             text="不知道。")
    assert "别称" in prompt
    cs = samples("zh", "cs_knowledge")[0]
    [prompt] = await prompts(CsKnowledge(), cs, tmp_path, text="不知道。")
    assert "中文参考答案" in prompt and "英文参考答案" in prompt and "别称" in prompt
    [prompt] = await prompts(CsKnowledgeEn(), samples("zh", "cs_knowledge_en")[0], tmp_path, text="No idea.")
    assert "alias" in prompt
    understanding, quality = await prompts(CsOpenEnded(), samples("zh", "cs_open_ended")[0], tmp_path)
    assert "不看回答的用词、文采" in understanding and "完全用中文" in quality
    assert not any(w in understanding + quality for w in LENIENCY)
