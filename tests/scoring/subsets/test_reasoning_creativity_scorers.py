"""Reasoning (binary vs rubric ranges, >3 rule, v1 mean) and creativity (per-category rubrics)."""

from __future__ import annotations

import pytest
from subset_doubles import ScriptedJudge, aggregate, by_reply, ctx, one, rate, reply, samples, yes

from vocalbench.judge import rubrics
from vocalbench.scoring.subsets.creativity import RUBRICS, WITH_REFERENCE, Creativity
from vocalbench.scoring.subsets.reasoning import Reasoning, is_binary


@pytest.mark.parametrize("lang,index,binary", [
    ("en", 0, False), ("en", 149, False), ("en", 150, True), ("en", 349, True), ("en", 350, False),
    ("en", 399, False), ("en", 400, True), ("en", 499, True), ("en", 500, False), ("en", 599, False),
    ("en", 600, True), ("en", 899, True), ("en", 900, False), ("en", 999, False),
    ("zh", 0, True), ("zh", 149, True), ("zh", 150, False), ("zh", 250, False), ("zh", 251, True),
    ("zh", 340, True), ("zh", 341, False), ("zh", 387, False), ("zh", 388, True), ("zh", 462, True),
    ("zh", 463, False), ("zh", 523, False), ("zh", 524, True), ("zh", 792, True), ("zh", 793, False),
    ("zh", 842, False), ("zh", 843, True), ("zh", 850, True),
])
def test_binary_ranges(lang: str, index: int, binary: bool) -> None:
    assert is_binary(index, lang) is binary


def test_binary_ranges_match_categories_in_data() -> None:
    en = {s.category for s in samples("en", "reasoning") if is_binary(s.index, "en")}
    assert en == {"Common_sense", "Deductive/Inductive", "Math"}
    zh = {s.category for s in samples("zh", "reasoning") if is_binary(s.index, "zh")}
    assert {"Common_sense", "Deductive/Inductive", "Math"} <= zh


async def test_v2_binary_and_rubric_items() -> None:
    items = samples("en", "reasoning")
    judge = ScriptedJudge(by_reply({"R5": rate(5), "R4": rate(4), "R3": rate(3), "YES": yes()}))
    c = ctx("en", judge=judge)
    r = Reasoning("en", "v2")
    open4 = one(await r.score(items[0], reply(items[0], "R4"), c))
    open3 = one(await r.score(items[1], reply(items[1], "R3"), c))
    assert (open4.value, open4.details["rubric_score"], open4.details["kind"]) == (1.0, 4.0, "rubric")
    assert (open3.value, open3.details["rubric_score"]) == (0.0, 3.0)
    assert judge.calls[0][0] == "reasoning_open_en" and judge.calls[0][1]["reference"] == items[0].reference
    binary = one(await r.score(items[600], reply(items[600], "YES"), c))
    assert binary.value == 1.0 and binary.details["kind"] == "binary" and judge.calls[-1][0] == "reasoning_binary_en"
    failed = one(await r.score(items[2], reply(items[2], "", error="http_500"), c))
    assert failed.value == 0.0 and failed.system_error == "http_500"
    scores = [open4, open3, binary, failed]
    res = aggregate(r, scores, {}, [items[0], items[1], items[600], items[2]])
    assert res.value == 50.0 and res.metric == "accuracy"
    assert res.extra["binary_accuracy"] == 100.0 and res.extra["rubric_accuracy"] == round(100 / 3, 4)
    assert res.extra["rubric_mean_score"] == 3.5 and res.extra["binary_n"] == 1 and res.extra["rubric_n"] == 3


async def test_v1_rubric_mean_on_every_item() -> None:
    items = samples("en", "reasoning")
    judge = ScriptedJudge(by_reply({"R5": rate(5), "R2": rate(2)}))
    c = ctx("en", "v1", judge=judge)
    r = Reasoning("en", "v1")
    a = one(await r.score(items[600], reply(items[600], "x", asr="R5"), c))
    b = one(await r.score(items[0], reply(items[0], "x", asr="R2"), c))
    f = one(await r.score(items[1], None, c))
    assert {call[0] for call in judge.calls} == {"reasoning_v1_en"}  # the official v1 scale
    res = aggregate(r, [a, b, f], {}, [items[600], items[0], items[1]])
    assert res.metric == "mean_score" and res.value == round((5 + 2 + 1) / 3, 4)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_every_creativity_category_has_a_rubric(lang: str) -> None:
    categories = {s.category for s in samples(lang, "creativity")}
    assert categories == set(RUBRICS[lang])
    assert len(categories) == (6 if lang == "en" else 8)
    for rid in RUBRICS[lang].values():
        assert rubrics.load(rid).kind == "scale"


async def test_creativity_reference_only_for_appreciation_categories() -> None:
    judge = ScriptedJudge(lambda rid, fields: rate(4))
    for lang in ("en", "zh"):
        c = ctx(lang, judge=judge)
        by_cat = {}
        for s in samples(lang, "creativity"):
            by_cat.setdefault(s.category, s)
        for cat, s in by_cat.items():
            judge.calls.clear()
            sc = one(await Creativity(lang).score(s, reply(s, "a poem"), c))
            rid, fields = judge.calls[0]
            assert sc.value == 4.0 and rid == RUBRICS[lang][cat]
            assert ("reference" in fields) is (cat in WITH_REFERENCE)
    assert WITH_REFERENCE == {"Achient Poetry Appreciation", "Modern Poem Appreciation"}


async def test_creativity_aggregate_and_failures() -> None:
    items = samples("en", "creativity")
    judge = ScriptedJudge(by_reply({"good": rate(5), "meh": rate(2)}))
    c = ctx("en", judge=judge)
    cr = Creativity("en")
    poem, role = items[0], next(s for s in items if s.category == "Role Playing")
    scores = [one(await cr.score(poem, reply(poem, "good"), c)), one(await cr.score(role, reply(role, "meh"), c)),
              one(await cr.score(items[1], reply(items[1], "", error="timeout"), c))]
    res = aggregate(cr, scores, {}, [poem, role, items[1]])
    assert res.value == round(8 / 3, 4) and res.extra["category_means"] == {"Poem": 3.0, "Role Playing": 2.0}
    odd = poem.model_copy(update={"category": "Limerick"})
    assert one(await cr.score(odd, reply(odd, "good"), c)).unscored == "unknown_category"
