"""The catalogue's subsets, scorer_for and the rubric files."""

from __future__ import annotations

import pytest

from vocalbench import catalog
from vocalbench.judge import rubrics
from vocalbench.records import ErrorInfo, Reply, Sample
from vocalbench.scoring.subsets import PROTOCOLS, scorer_for
from vocalbench.scoring.subsets.rules import system_failure
from vocalbench.scoring.tally import preserve_rate


def test_subset_lists() -> None:
    assert catalog.names("en") == ["knowledge", "reasoning", "creativity", "single_round", "multi_round",
                             "instruction_following", "emotion", "safety", "robust", "robust_clean"]
    assert set(catalog.names("zh")) == {
        "chinese_knowledge", "foreign_knowledge", "general_knowledge", "reasoning", "creativity", "single_round",
        "multi_round", "instruction_following", "emotion", "safety", "cs_knowledge", "cs_knowledge_en",
        "cs_open_ended", "robust", "robust_clean", "dialect", "dialect_mandarin"}


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_scorer_for_every_subset(lang: str, protocol: str) -> None:
    for subset in catalog.names(lang):
        sc = scorer_for(subset, lang, protocol)
        assert sc.id and sc.version and isinstance(sc.uses_judge, bool)
        assert sc.id.endswith(f".{protocol}")  # v1 and v2 scores never share an evaluator key
    assert scorer_for("knowledge", "en", "v2").uses_judge is False


def test_scorer_for_rejects_unknowns() -> None:
    with pytest.raises(KeyError):
        scorer_for("knowledge", "zh", "v2")
    with pytest.raises(KeyError):
        scorer_for("chinese_knowledge", "en", "v2")
    with pytest.raises(ValueError):
        scorer_for("knowledge", "fr", "v2")
    with pytest.raises(ValueError):
        scorer_for("knowledge", "en", "v3")


def test_rubric_files_load_and_ask_for_json() -> None:
    from vocalbench.judge.json_judge import answer_format

    names = rubrics.available()
    assert len(names) >= 37
    for name in names:
        r = rubrics.load(name)
        assert r.id == name and r.version
        fmt = answer_format(r)  # the judge appends the answer schema to the system prompt
        key = '"score"' if r.kind == "scale" else f'"{r.verdict_key}"'
        assert key in fmt, name
        assert "JSON" not in r.system, name  # the schema is given once, by the judge
        if r.kind == "binary":
            assert all(f'"{label}"' in fmt for label in r.labels), name
        if r.kind == "scale":
            assert (r.lo, r.hi) == (1, 5) and all(f"{n}" in r.system for n in range(1, 6))
        assert "{reply}" in r.template, name
        assert len(r.system) + len(r.template) < 1500, name  # the official criteria, compact for a 4096-token judge


def test_failure_reasons_and_preserve_rate() -> None:
    s = Sample(id="q-1", subset="safety", lang="en", index=1)
    ok = Reply(subset="safety", sample_id="q-1", text="hi")
    assert system_failure(None) == "missing_reply"
    assert system_failure(ok) is None and system_failure(ok, need_audio=True) == "missing_audio"
    assert system_failure(ok.model_copy(update={"text": " "})) == "empty_reply"
    assert system_failure(ok.model_copy(update={"error": ErrorInfo(type="timeout")})) == "timeout"
    assert s.key == ("safety", "q-1")
    assert preserve_rate(80.0, 40.0) == 100.0 and preserve_rate(30.0, 40.0) == 75.0
    assert preserve_rate(None, 40.0) is None and preserve_rate(30.0, 0.0) is None


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("protocol", PROTOCOLS)
async def test_every_scorer_runs_on_real_items(lang: str, protocol: str) -> None:
    """Each scorer scores a few real items end to end through the judge double (every rubric is
    rendered with exactly the fields its scorer passes) and aggregates them."""
    from subset_doubles import ScriptedJudge, aggregate, const, ctx, reply, samples

    judge = ScriptedJudge(lambda rid, f: '{"reason": "r", "verdict": "yes"}' if rubrics.load(rid).kind == "binary"
                          else '{"reason": "r", "score": 4}')
    emo = const({"angry": 0.2, "happy": 0.2, "neutral": 0.2, "sad": 0.2, "surprised": 0.2})
    c = ctx(lang, protocol, judge=judge, emotion=emo, transcribe=lambda r, lg: const(r.text or "")(),
            audio_duration=lambda path: 10.0)
    for subset in catalog.names(lang):
        if subset.startswith("dialect"):
            continue  # no public data: built by this project
        items = samples(lang, subset)
        picked = [items[0], items[len(items) // 2], items[-1]]
        scorer = scorer_for(subset, lang, protocol)
        scores = []
        for s in picked:
            text = (s.question.split("." if lang == "en" else "。", 1)[-1] if subset == "instruction_following"
                    else f"{s.reference or ''} {s.metadata.get('Answer_zh', '')}")
            out = await scorer.score(s, reply(s, text, duration=5.0), c)
            assert out and all(x.scored for x in out), (subset, s.id, out)
            scores += out
        all_scores = {subset: scores}
        if subset == "robust":
            all_scores["robust_clean"] = []
        res = aggregate(scorer, scores, all_scores, picked)
        assert res.n == 3 and res.unscored == 0, (subset, res)


def test_aggregate_counts_only_the_given_samples() -> None:
    from subset_doubles import aggregate

    from vocalbench.records import Score
    from vocalbench.scoring.subsets.safety import Safety

    items = [Sample(id=f"safety-{i:03d}", subset="safety", lang="en", index=i) for i in range(3)]
    scores = [Score(subset="safety", sample_id="safety-000", value=1.0, scorer="s@1"),
              Score(subset="safety", sample_id="safety-001", value=0.0, system_error="timeout", scorer="s@1"),
              Score(subset="safety", sample_id="safety-999", value=1.0, scorer="s@1")]  # stale: not a sample
    res = aggregate(Safety("en"), scores, {}, items)
    assert (res.value, res.n, res.scored, res.unscored, res.system_errors) == (50.0, 3, 2, 1, 1)
    assert res.unscored_reasons == {"missing": 1} and not res.complete
