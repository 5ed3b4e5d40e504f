"""Code-switching scorers on real cs items: hit rules, judge fallback, PR, open-ended means."""

from __future__ import annotations

from subset_doubles import ScriptedJudge, aggregate, by_reply, ctx, no, one, rate, reply, samples, yes

from vocalbench.records import Score
from vocalbench.scoring.subsets.code_switching import CsKnowledge, CsKnowledgeEn, CsOpenEnded, cs_hit


def _item(qid_index: int):  # noqa: ANN202
    return samples("zh", "cs_knowledge")[qid_index]


def test_cs_hit_rules_on_real_answers() -> None:
    s = _item(0)  # 盐湖城 / Salt Lake City
    zh, en = s.metadata["Answer_zh"], s.metadata["Answer_en"]
    assert cs_hit(zh, en, "总部在盐湖城。") and cs_hit(zh, en, "It is in SALT LAKE city.")
    assert not cs_hit(zh, en, "总部在纽约。")
    named = next(x for x in samples("zh", "cs_knowledge") if x.metadata["Answer_zh"] == "马克·吐温")
    assert cs_hit(named.metadata["Answer_zh"], named.metadata["Answer_en"], "作者是吐温。")
    assert not cs_hit("马克·吐温", "Mark Twain", "作者是海明威。")


async def test_cs_knowledge_judge_sees_both_answers() -> None:
    s = _item(5)  # 曼彻斯特 / Manchester
    judge = ScriptedJudge(by_reply({"曼城": yes(), "伦敦": no()}))
    c = ctx("zh", judge=judge)
    k = CsKnowledge()
    assert one(await k.score(s, reply(s, "是 manchester。"), c)).details["rule"] == "substring"
    alias = one(await k.score(s, reply(s, "是曼城。"), c))
    assert alias.value == 1.0 and judge.calls[-1][0] == "cs_knowledge_zh"
    assert judge.calls[-1][1]["answer_zh"] == "曼彻斯特" and judge.calls[-1][1]["answer_en"] == "Manchester"
    assert one(await k.score(s, reply(s, "是伦敦。"), c)).value == 0.0
    assert one(await k.score(s, reply(s, "", error=None), c)).system_error == "empty_reply"


async def test_cs_knowledge_en_and_preserve_rate() -> None:
    items = samples("zh", "cs_knowledge_en")[:2]
    judge = ScriptedJudge(by_reply({"SLC": yes()}))
    ke = CsKnowledgeEn()
    hit = one(await ke.score(items[0], reply(items[0], "salt lake city, utah"), ctx("zh", judge=judge)))
    assert hit.value == 1.0 and judge.calls == []
    judged = one(await ke.score(items[0], reply(items[0], "SLC"), ctx("zh", judge=judge)))
    assert judged.value == 1.0 and judge.calls[0][0] == "cs_knowledge_en"
    en_scores = [Score(subset="cs_knowledge_en", sample_id=x.id, value=v, scorer="t@1")
                 for x, v in zip(items, [1, 0], strict=True)]
    zh_items = samples("zh", "cs_knowledge")[:2]
    zh_scores = [Score(subset="cs_knowledge", sample_id=x.id, value=1.0, scorer="t@1") for x in zh_items]
    res = aggregate(CsKnowledge(), zh_scores, {"cs_knowledge_en": en_scores}, zh_items)
    assert res.value == 100.0 and res.extra["cs_knowledge_en_accuracy"] == 50.0 and res.extra["preserve_rate"] == 100.0
    res = aggregate(CsKnowledge(), zh_scores[:1] + [Score(subset="cs_knowledge", sample_id=zh_items[1].id, value=0.0,
                                                         scorer="t@1")], {"cs_knowledge_en": en_scores[:1]}, zh_items)
    assert res.extra["preserve_rate"] == 50.0


async def test_cs_open_ended_two_judges() -> None:
    items = samples("zh", "cs_open_ended")[:3]

    def script(rid: str, fields: dict[str, str]) -> str:
        table = {"A": (5, 4), "B": (3, 2)}
        for key, (u, q) in table.items():
            if key in fields["reply"]:
                return rate(u if rid.endswith("understanding") else q)
        return "??"

    c = ctx("zh", judge=ScriptedJudge(script))
    k = CsOpenEnded()
    scores = [*await k.score(items[0], reply(items[0], "A"), c), *await k.score(items[1], reply(items[1], "B"), c),
              *await k.score(items[2], None, c)]
    res = aggregate(k, scores, {}, items)
    # per-item means 4.5, 2.5 and 1 (failed reply, worst)
    assert res.metric == "mean_score" and res.value == round((4.5 + 2.5 + 1) / 3, 4) and res.system_errors == 1
    assert res.extra["understanding_mean"] == 3.0 and res.extra["quality_mean"] == round(7 / 3, 4)
    assert res.extra["understanding_share_gt3"] == round(100 / 3, 4)
    assert res.extra["quality_share_gt3"] == round(100 / 3, 4)
    broken = await k.score(items[0], reply(items[0], "zzz"), c)
    assert all(s.unscored == "judge_unparseable" for s in broken)
