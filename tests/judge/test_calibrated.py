"""The calibrated judge's pieces: token probabilities, decision rules, fitting, caching.

The endpoint is a controlled double that returns chosen first-token log-probabilities (the real
llama.cpp server is exercised in test_judge_check_live.py)."""

from __future__ import annotations

import json
import math

import pytest

from vocalbench.components.base import ChatResult
from vocalbench.components.cache import ResultCache
from vocalbench.judge import rubrics
from vocalbench.judge.calibrated import (
    CalibratedJudge,
    Calibration,
    RuleFit,
    family_of,
    features,
    instruction,
    read_probabilities,
    shipped_calibration,
)
from vocalbench.judge.calibration import load_items
from vocalbench.judge.fit import DevItem, fit_family, fit_rules, fit_threshold
from vocalbench.judge.rubrics.record import Evidence
from vocalbench.records import DecidedBy


def lp(**probs: float) -> dict[str, float]:
    return {k: math.log(v) for k, v in probs.items()}


BINARY = rubrics.load("reasoning_binary_en")
SCALE = rubrics.load("single_round_en")


def test_binary_probability_pools_spellings_and_ignores_other_tokens():
    top = {"Yes": math.log(0.3), " yes": math.log(0.1), "No": math.log(0.2), "The": math.log(0.4)}
    got = read_probabilities(BINARY, top)
    assert got == {"p_yes": pytest.approx(0.666667, abs=1e-6), "mass": pytest.approx(0.6, abs=1e-6)}


def test_scale_expected_score_is_renormalised_over_digits():
    got = read_probabilities(SCALE, lp(**{"4": 0.5, "5": 0.25, "3": 0.25}))
    assert got["expected"] == pytest.approx(4.0)
    assert got["p4"] == pytest.approx(0.5) and got["p1"] == 0.0
    assert read_probabilities(SCALE, lp(yes=0.8, no=0.2), scale=False) == {"p_yes": 0.8, "mass": 1.0}


def test_answer_tokens_below_the_minimum_mass_are_unparseable():
    assert read_probabilities(BINARY, lp(The=0.97, yes=0.01, no=0.01)) is None
    assert read_probabilities(SCALE, None) is None


def test_zh_rubrics_get_a_chinese_instruction_and_accept_chinese_tokens():
    zh = rubrics.load("knowledge_zh")
    assert "yes 或 no" in instruction(zh)
    assert read_probabilities(zh, lp(是=0.6, 否=0.2))["p_yes"] == pytest.approx(0.75)


def raw(main: dict, checks=()) -> dict:
    return {"main": main, "checks": list(checks)}


def test_features_name_the_model_answers_and_the_graders_findings():
    ev = Evidence("repeat.repeat_coverage@1", None, {"coverage": 0.7})
    assert features(raw({"p_yes": 0.2}, [0.9, None]), ev) == {
        "main": 0.2, "check1": 0.9, "check2": 0.0, "g:settled": 0.5, "g:coverage": 0.7}
    assert features(None, Evidence("g@1", 1.0, {})) == {"g:settled": 1.0}


def test_rules_combine_named_features_and_apply_threshold_or_clip():
    default = RuleFit("binary")
    assert default.needs_model and default.apply(features(raw({"p_yes": 0.49}, [0.9]))) == 0.0
    assert default.apply(features(raw({"p_yes": 0.5}))) == 1.0
    rule = RuleFit("binary", weights={"main": 1.0, "check1": -2.0}, bias=0.5, threshold=0.0)
    assert rule.apply({"main": 0.2, "check1": 0.3}) == 1.0 and rule.apply({"main": 0.2, "check1": 0.4}) == 0.0
    line = RuleFit("scale", weights={"main": 1.0, "g:recall": 2.0}, bias=-1.0)
    assert line.apply({"main": 3.0, "g:recall": 0.5}) == 3.0
    assert line.apply({"main": 5.0, "g:recall": 1.0}) == 5.0 and line.apply({"main": 1.0}) == 1.0
    assert line.checks_used(3) == [] and RuleFit("binary", weights={"main": 1, "check2": 1}).checks_used(3) == [1]


def test_a_settling_rule_takes_the_graders_verdict_and_a_grader_only_rule_needs_no_model():
    settle = RuleFit("binary", weights={"main": 1.0}, settle=True)
    assert settle.decide(None, Evidence("g@1", 0.0, {})) == 0.0
    assert settle.decide(raw({"p_yes": 0.9}), Evidence("g@1", None, {})) == 1.0  # undecided: the rule
    grader_only = RuleFit("scale", weights={"g:recall": 2.0}, bias=1.0)
    assert not grader_only.needs_model
    assert grader_only.decide(None, Evidence("g@1", None, {"recall": 1.0})) == 3.0


def test_calibration_json_round_trip_and_errors(tmp_path):
    rule = RuleFit("binary", {"main": 0.5, "g:refuse": 1.0}, -0.2, 0.3, settle=True, n_dev=20, grader="refusal@1")
    cal = Calibration("cal-x", "m", {"safety_en": rule}, "20 dev items")
    back = Calibration.from_json(cal.to_json())
    assert back == cal
    assert back.rule(rubrics.load("safety_en")).threshold == 0.3
    assert back.rule(rubrics.load("safety_zh")) == RuleFit("binary")  # unfitted family: the default rule
    bad = tmp_path / "fit.json"
    bad.write_text('{"families": {}}')
    with pytest.raises(ValueError, match="fit.json: not a judge calibration"):
        Calibration.load(bad)
    bad.write_text('{"version": "cal-old", "model": "m", "families": {"x": {"kind": "binary", "weights": [1.0]}}}')
    with pytest.raises(ValueError, match="an older fit"):
        Calibration.load(bad)


def test_creativity_categories_share_one_family():
    assert family_of("creativity_poem_en") == "creativity_en"
    assert family_of("creativity_classical_format_writing_zh") == "creativity_zh"
    assert family_of("safety_zh") == "safety_zh"


def test_fit_threshold_maximises_kappa():
    p = [0.1, 0.2, 0.35, 0.4, 0.8, 0.9]
    labels = [0, 0, 0, 1, 1, 1]
    t = fit_threshold(p, labels)
    assert 0.35 < t <= 0.4
    assert [1.0 if x >= t else 0.0 for x in p] == labels


def dev(label: float, main: float | None, verdict: float | None = None, kind: str = "binary", q: int = 0,
        **feats: float) -> DevItem:
    return DevItem("fam", kind, label, None if main is None else raw({"p_yes" if kind == "binary" else "expected": main}),
                   Evidence("g@1", verdict, feats), f"q{q}")


def test_fit_family_settles_only_when_the_grader_is_right_on_dev():
    right = [dev(float(i % 2), 0.5, float(i % 2), q=i) for i in range(12)]
    rest = [dev(float(i % 2), 0.2 + 0.6 * (i % 2), None, q=100 + i) for i in range(20)]
    rule, record = fit_family(right + rest)
    assert rule.settle and record["settled_dev"] == 12
    wrong = [dev(float(i % 2), 0.5, float((i + 1) % 2), q=i) for i in range(12)]
    rule, _ = fit_family(wrong + rest)
    assert not rule.settle


def test_fit_family_prefers_the_grader_alone_when_it_predicts_as_well_as_the_model():
    # the grader's feature carries the label; the model's answer is noise: no model call is needed
    items = [dev(float(i % 2), 0.5 + 0.01 * (i % 3), None, q=i, recall=0.1 + 0.8 * (i % 2)) for i in range(40)]
    rule, record = fit_family(items)
    assert record["features"] == "grader" and not rule.needs_model
    assert [rule.decide(None, it.evidence) for it in items] == [it.label for it in items]
    # and the model when only it carries the label
    items = [dev(float(i % 2), 0.1 + 0.8 * (i % 2), None, q=i, recall=0.5) for i in range(40)]
    rule, _ = fit_family(items)
    assert rule.needs_model


def test_unsettled_items_of_one_class_go_to_the_model_not_to_a_constant():
    """reasoning_binary_zh before issue 27: every dev item the grader left open was wrong, so the
    fitted rule said "wrong" for every open item without reading it. Now the model answers them."""
    settled = [dev(float(i % 2), 0.5, float(i % 2), q=i) for i in range(12)]
    open_wrong = [dev(0.0, 0.1 * (i % 5), None, q=100 + i, recall=0.2) for i in range(18)]
    rule, record = fit_family(settled + open_wrong)
    assert rule.settle and rule.needs_model and dict(rule.weights) == {"main": 1.0}
    assert "one class" in str(record["features"])
    assert rule.decide(raw({"p_yes": 0.97}), Evidence("g@1", None, {})) == 1.0
    # also without the model's answers (judge-fit --no-model): a constant is never the rule
    no_model = [dev(0.0, None, None, q=100 + i, recall=0.2) for i in range(18)]
    rule, _ = fit_family(settled + no_model)
    assert rule.needs_model and rule.decide(raw({"p_yes": 0.2}), Evidence("g@1", None, {})) == 0.0


def test_a_feature_that_speaks_against_a_reply_never_raises_it():
    # on these dev items "contradicts" happens to go with better labels; the fit may not use that
    items = [dev(float(1 + i % 5), None, None, kind="scale", q=i, recall=0.2 * (i % 5), contradicts=0.25 * (i % 5))
             for i in range(40)]
    rule, _ = fit_family(items)
    assert rule.weights.get("g:contradicts", 0.0) <= 0.0 and rule.weights["g:recall"] > 0


def test_fit_family_scale_is_a_ridge_line():
    items = [dev(2 * e - 5, e, None, kind="scale", q=i) for i, e in enumerate((2.0, 3.0, 4.0, 5.0) * 5)]
    rule, _ = fit_family(items)
    assert rule.weights["main"] == pytest.approx(2.0, abs=0.15)
    assert rule.apply({"main": 4.0}) == pytest.approx(3.0, abs=0.2)


def test_fit_rules_names_its_version_after_the_rules():
    items = [DevItem("safety_en", "binary", float(i % 2), raw({"p_yes": 0.2 + 0.6 * (i % 2)}), None, f"q{i}")
             for i in range(20)]
    cal, records = fit_rules("m", items)
    assert cal.version.startswith("cal-") and cal.model == "m" and set(records) == {"safety_en"}
    assert cal.families["safety_en"].n_dev == 20
    assert fit_rules("m", items)[0].version == cal.version


class TokenLLM:
    """A chat endpoint double answering with fixed first-token log-probabilities."""

    id = "tiny@127.0.0.1"

    def __init__(self, top: dict[str, float]) -> None:
        self.top = top
        self.calls: list[dict] = []

    async def chat(self, messages, **kwargs):
        self.calls.append({"messages": messages, **kwargs})
        return ChatResult(text=max(self.top, key=self.top.get), prompt_tokens=100, completion_tokens=1,
                          top_logprobs=self.top)


async def test_calibrated_judge_asks_each_question_with_one_token_and_maps_with_the_fit(tmp_path):
    llm = TokenLLM(lp(yes=0.6, no=0.4))
    cache = ResultCache(tmp_path / "c.sqlite")
    strict = Calibration("cal-strict", "tiny", {"reasoning_binary_en": RuleFit("binary", threshold=0.8)})
    judge = CalibratedJudge(llm, strict, cache=cache, ask_every_check=True)  # as judge-check does
    assert judge.id == "tiny+cal-strict@127.0.0.1"
    fields = {"question": "2+2?", "reference": "4", "reply": "four"}
    v = await judge.evaluate(BINARY, fields, subset="reasoning", sample_id="r-1")
    kept = json.loads(v.trace.raw)
    assert v.value == 0.0 and kept["main"]["p_yes"] == pytest.approx(0.6)
    assert kept["checks"] == [pytest.approx(0.6)] * len(BINARY.checks)
    assert len(llm.calls) == 1 + len(BINARY.checks)
    prefix = llm.calls[0]["messages"][-1]["content"].split("\n\n")[0]
    for call, check in zip(llm.calls[1:], BINARY.checks):  # same item prefix, then the check
        assert call["max_tokens"] == 1 and call["top_logprobs"] == 20
        assert call["messages"][-1]["content"].startswith(prefix) and check in call["messages"][-1]["content"]
    assert llm.calls[0]["messages"][-1]["content"].endswith("Answer with one word: yes or no.")
    # a new fit re-maps the cached answers without calling the model again
    lenient = CalibratedJudge(llm, Calibration("cal-lenient", "tiny", {"reasoning_binary_en": RuleFit("binary")}),
                              cache=cache)
    v2 = await lenient.evaluate(BINARY, fields, subset="reasoning", sample_id="r-1")
    assert v2.value == 1.0 and v2.trace.cached and len(llm.calls) == 1 + len(BINARY.checks)


async def test_a_run_asks_only_the_checks_its_rule_weighs(tmp_path):
    fields = {"question": "2+2?", "reference": "4", "reply": "four"}
    n = len(BINARY.checks)
    assert n >= 2
    main_only = Calibration("cal-a", "tiny", {"reasoning_binary_en": RuleFit("binary", weights={"main": 1.0})})
    llm = TokenLLM(lp(yes=0.7, no=0.3))
    v = await CalibratedJudge(llm, main_only, cache=ResultCache(tmp_path / "a.sqlite")).evaluate(
        BINARY, fields, subset="reasoning", sample_id="r-1")
    assert len(llm.calls) == 1 and v.value == 1.0
    assert json.loads(v.trace.raw)["checks"] == [None] * n
    second = Calibration("cal-b", "tiny", {"reasoning_binary_en": RuleFit("binary", weights={"main": 1.0, "check2": 0.5},
                                                                          threshold=0.9)})  # the second check only
    llm = TokenLLM(lp(yes=0.7, no=0.3))
    cache = ResultCache(tmp_path / "b.sqlite")
    v = await CalibratedJudge(llm, second, cache=cache).evaluate(BINARY, fields, subset="reasoning", sample_id="r-1")
    assert len(llm.calls) == 2 and BINARY.checks[1] in llm.calls[1]["messages"][-1]["content"]
    kept = json.loads(v.trace.raw)["checks"]
    assert kept[1] == pytest.approx(0.7) and kept[0] is None
    assert v.value == 1.0  # 0.7 + 0.5 * 0.7 >= 0.9
    # the partial answer is cached for this rule; a rule weighing another check asks again
    again = await CalibratedJudge(llm, second, cache=cache).evaluate(BINARY, fields, subset="reasoning",
                                                                     sample_id="r-1")
    assert again.trace.cached and len(llm.calls) == 2
    await CalibratedJudge(llm, main_only, cache=cache).evaluate(BINARY, fields, subset="reasoning", sample_id="r-1")
    assert len(llm.calls) == 3


async def test_calibrated_judge_reports_unparseable_once_without_retrying(tmp_path):
    llm = TokenLLM(lp(The=0.99, yes=0.005, no=0.005))
    unfitted = Calibration("cal-t", "tiny", {})  # every family's default rule: the model's main answer
    judge = CalibratedJudge(llm, unfitted, cache=ResultCache(tmp_path / "c.sqlite"), backoff=0)
    v = await judge.evaluate(SCALE, {"question": "q", "reply": "r"}, subset="single_round", sample_id="s-1")
    assert v.value is None and v.error == "judge_unparseable"
    assert len(llm.calls) == 1 and "top_logprobs" in v.trace.raw  # stops at the first unparseable answer


def test_shipped_calibration_is_fitted_for_every_family_of_the_set():
    cal = shipped_calibration()
    families = {i.family for i in load_items()}
    assert families <= set(cal.families), sorted(families - set(cal.families))
    for fam, rule in cal.families.items():
        assert rule.n_dev > 0, fam


async def test_a_settled_or_grader_only_item_costs_no_model_call(tmp_path):
    llm = TokenLLM(lp(yes=0.9, no=0.1))
    cal = Calibration("cal-r", "tiny", {"reasoning_binary_en": RuleFit("binary", settle=True),
                                        "single_round_en": RuleFit("scale", {"g:recall": 2.0}, bias=1.0)})
    judge = CalibratedJudge(llm, cal, cache=ResultCache(tmp_path / "c.sqlite"))
    fields = {"question": "2+2?", "reference": "4", "reply": "five"}
    v = await judge.evaluate(BINARY, fields, subset="reasoning", sample_id="r-1",
                             evidence=Evidence("answers@1", 0.0, {}, "number 5 vs 4"))
    assert v.value == 0.0 and llm.calls == []
    # settled by the grader: it, not the model, is the verdict's judge
    assert v.trace is None and v.decided_by == DecidedBy(source="grader", grader="answers@1", note="number 5 vs 4")
    v = await judge.evaluate(SCALE, {"question": "q", "reply": "r"}, subset="single_round", sample_id="s-1",
                             evidence=Evidence("cues@1", None, {"recall": 1.5}))
    assert v.value == 4.0 and llm.calls == []
    assert v.trace is None and v.decided_by == DecidedBy(source="rule", grader="cues@1", fit="cal-r", note="")
    # undecided: the model is asked and its answer combined with the evidence
    v = await judge.evaluate(BINARY, fields, subset="reasoning", sample_id="r-2",
                             evidence=Evidence("answers@1", None, {"ref_recall": 0.3}))
    assert v.value == 1.0 and len(llm.calls) == 1
    assert json.loads(v.trace.raw)["evidence"]["features"] == {"ref_recall": 0.3}
    assert v.decided_by == DecidedBy(source="model", model="tiny@127.0.0.1", prompt_hash=v.trace.prompt_hash,
                                     fit="cal-r", grader="answers@1")


async def test_judge_check_reads_recorded_answers_and_asks_only_for_the_rest(tmp_path):
    from vocalbench.judge.check import collect_answers, judge_items, recorded_answers

    first, second = [i for i in load_items("test") if i.rubric == "single_round_en"][:2]
    llm = TokenLLM(lp(**{"2": 0.5, "3": 0.5}))
    judge = CalibratedJudge(llm, Calibration("cal-a", "tiny", {"single_round_en": RuleFit("scale")}),
                            cache=ResultCache(tmp_path / "c.sqlite"))
    answers = {first.id: {"main": {"expected": 4.5, "mass": 1.0}, "checks": []}}
    out = await judge_items(judge, [first, second], concurrency=1, answers=answers)
    assert [o.value for o in out] == [4.5, 2.5] and len(llm.calls) == 1  # only the unrecorded one was asked
    assert out[0].cached and out[0].model_asked and not out[1].cached
    # collected answers are appended as they come and read back (for this model only, unchanged rubrics)
    path = tmp_path / "answers.jsonl"
    got = await collect_answers(judge, [second], path)
    assert recorded_answers("tiny", [path]) == got and recorded_answers("other", [path]) == {}
    stale = json.loads(path.read_text())
    stale["rubric_hash"] = "0000"
    path.write_text(json.dumps(stale) + "\n{not json\n")
    with pytest.raises(ValueError, match=r"answers.jsonl:2: not a recorded answer"):
        recorded_answers("tiny", [path])
    path.write_text(json.dumps(stale) + "\n")
    assert recorded_answers("tiny", [path]) == {}  # the rubric changed since: not used


def test_the_fit_asks_the_model_only_where_no_settling_grader_decides():
    from vocalbench.judge.fit import needing_the_model, settling_families

    dev = load_items("dev")
    settling = settling_families(dev)
    assert {"instruction_repeat_en", "reasoning_binary_en"} <= settling  # graders right on >= 90 % of dev
    assert "single_round_en" not in settling  # a 1-5 family never settles
    repeat = [i for i in dev if i.family == "instruction_repeat_en"]
    needed = needing_the_model(repeat, dev)
    assert 0 < len(needed) < len(repeat) / 2


def test_any_judge_spec_takes_a_fit_and_refuses_another_models(tmp_path):
    from vocalbench.components.base import ComponentUnavailable
    from vocalbench.judge import factory as judges
    from vocalbench.judge.factory import build_judge
    from vocalbench.judge.spec import JudgeSpec

    fit = tmp_path / "fit.json"
    fit.write_text(Calibration("cal-x", "m1", {"safety_en": RuleFit("binary")}).to_json())
    judge = build_judge(JudgeSpec.parse("openai:m1@http://127.0.0.1:9/v1", str(fit)))
    assert isinstance(judge, CalibratedJudge) and judge.id == "m1+cal-x@127.0.0.1"
    plain = build_judge(JudgeSpec.parse("openai:m1@http://127.0.0.1:9/v1"))
    assert not isinstance(plain, CalibratedJudge)  # without a fit: JSON verdicts, the official prompts
    with pytest.raises(ComponentUnavailable, match="fitted for the model 'm1', not 'm2'"):
        build_judge(JudgeSpec.parse("openai:m2@http://127.0.0.1:9/v1", str(fit)))
    with pytest.raises(ComponentUnavailable, match="a fit needs a calibrated judge"):
        build_judge(JudgeSpec.parse("local-json", str(fit)), lazy=True)
    unfitted = judges.calibrated(TokenLLM({}), judges.UNFITTED)
    assert unfitted.calibration.version == "unfitted" and unfitted.calibration.model == "tiny"


def test_a_feature_that_speaks_for_a_reply_never_lowers_it():
    # here taking up the question happens to go with worse labels; the fit may not weigh it down
    items = [dev(float(1 + i % 5), None, None, kind="scale", q=i, recall=0.2 * (i % 5), topic=1.0 - 0.2 * (i % 5),
                 sem_answer=0.5) for i in range(40)]
    rule, _ = fit_family(items)
    assert rule.weights.get("g:topic", 0.0) >= 0.0 and rule.weights["g:recall"] > 0


def test_designed_replies_use_design_wordings_only_and_are_labelled_by_construction():
    from vocalbench.judge.fit import NOT_AUGMENTED, designed
    from vocalbench.judge.stress.wordings import WORDINGS, pool

    items = load_items("dev", ["single_round_en", "safety_zh", "reasoning_binary_en", "emotion_semantic_en"])
    made = designed(items)
    assert made and all(m.source == "designed" and m.split == "dev" for m in made)
    assert not any(m.family.startswith(NOT_AUGMENTED) for m in made)
    check = [w for t, langs in WORDINGS.items() for lang, parts in langs.items() for part in parts
             for w in pool(t, lang, part, "check") if len(w) > 12 and "{" not in w]
    assert not any(w in m.fields["reply"] for m in made for w in check)
    by_id = {i.id: i for i in items}
    for m in made:
        kind = m.id.split("~")[1].split("@")[0]
        original = by_id[m.id.split("~")[0]]
        if kind in ("padding", "condensing"):
            assert m.label == original.label
        elif kind in ("off_topic", "echo") and m.family == "single_round_en":
            assert m.label == 1.0
        elif kind == "tone_flip":  # the rubric puts a dismissive tone at 2
            assert m.label == max(1.0, min(original.label - 1.0, 2.0))
    assert any(m.id.split("~")[1].startswith("tone_flip") and by_id[m.id.split("~")[0]].label >= 4 for m in made)
    per_kind: dict[tuple[str, str], int] = {}
    for m in made:
        key = (m.family, m.id.split("~")[1])
        per_kind[key] = per_kind.get(key, 0) + 1
    n_dev = {f: sum(i.family == f for i in items) for f in ("single_round_en", "safety_zh", "emotion_semantic_en")}
    assert all(n <= max(1, int(0.2 * n_dev[fam])) for (fam, _), n in per_kind.items())
