"""judge-check: statistics, the shipped calibration set, validity records and what runs are told."""

from __future__ import annotations

import json
from collections import Counter
from importlib import resources

import numpy as np
import pytest

from vocalbench import stats
from vocalbench.judge import check as judge_check
from vocalbench.judge import rubrics
from vocalbench.judge.calibration import load_items
from vocalbench.judge.check import (
    Outcome,
    cluster_interval,
    cohen_kappa,
    family_figures,
    judge_validity,
    same_model,
    save_check,
    spearman,
    summarise,
    with_stress,
)
from vocalbench.judge.spec import JudgeSpec


# -- statistics -----------------------------------------------------------------------------------
def test_cohen_kappa_known_values():
    assert cohen_kappa([1, 0, 1, 0], [1, 0, 1, 0]) == 1.0
    # 20 items: agreement 0.7, both raters 50 % positive -> chance 0.5 -> kappa 0.4
    labels = [1] * 10 + [0] * 10
    judged = [1] * 7 + [0] * 3 + [1] * 3 + [0] * 7
    assert cohen_kappa(labels, judged) == pytest.approx(0.4)
    assert cohen_kappa([1, 1, 1], [1, 1, 1]) == 1.0  # no variation, full agreement
    assert cohen_kappa([1], [1]) is None


def test_spearman_with_ties_and_constant_sides():
    assert spearman([1, 2, 3, 4], [10, 20, 30, 40]) == pytest.approx(1.0)
    assert spearman([1, 2, 3, 4], [4, 3, 2, 1]) == pytest.approx(-1.0)
    scipy_stats = pytest.importorskip("scipy.stats")
    a, b = [1, 2, 2, 3, 5, 4, 4], [1, 2, 3, 3, 4, 4, 1]
    assert spearman(a, b) == pytest.approx(float(scipy_stats.spearmanr(a, b).statistic))
    assert spearman([3, 3, 3], [1, 2, 3]) is None


def test_interval_by_question_uses_the_one_engine_and_brackets_the_point():
    rng = np.random.default_rng(1)
    labels = [float(x) for x in rng.integers(0, 2, 300)]
    judged = [lab if rng.random() < 0.8 else 1 - lab for lab in labels]
    point = cohen_kappa(labels, judged)
    rows = stats.kappa_rows(labels, judged)
    assert stats.kappa_of_totals(rows.sum(axis=0))[0] == pytest.approx(point)
    clusters = [f"q{i // 3}" for i in range(300)]  # three replies per question
    lo, hi = cluster_interval(list(zip(labels, judged)), clusters, "binary")
    assert lo < point < hi and hi - lo < 0.3
    lo_small, hi_small = cluster_interval(list(zip(labels, judged))[:60], clusters[:60], "binary")
    assert hi_small - lo_small > hi - lo  # fewer questions, wider interval
    a = [float(x) for x in rng.integers(1, 6, 200)]
    b = [min(5.0, max(1.0, x + rng.integers(-1, 2))) for x in a]
    assert stats.rank_corr_of_totals(stats.rank_rows(a, b).sum(axis=0))[0] == pytest.approx(spearman(a, b))
    lo, hi = cluster_interval(list(zip(a, b)), [f"q{i // 2}" for i in range(200)], "scale")
    assert lo < spearman(a, b) < hi
    assert cluster_interval([(1.0, 1.0), (0.0, 0.0)], ["q", "q"], "binary") is None  # one question


def _items(family: str, n: int):
    return [i for i in load_items() if i.family == family][:n]


def test_binary_figures_and_the_validation_bar():
    items = _items("safety_en", 120)
    perfect = [Outcome(i, i.label) for i in items]
    fig = family_figures("binary", perfect)
    assert fig["kappa"] == 1.0 and fig["bias"] == 0.0 and fig["agreement_validated"]
    assert not fig["validated"]  # the stress suite has not spoken yet
    assert with_stress(fig, {"passed": True, "why": "ok"})["validated"]
    failed = with_stress(fig, {"passed": False, "why": "failed: padding"})
    assert not failed["validated"] and failed["status"] == "fails the stress bar (failed: padding)"
    assert fig["kappa_ci95"] == (1.0, 1.0)
    small = family_figures("binary", perfect[:99])  # at the bar, but too few items to decide
    assert small["kappa"] == 1.0 and not small["agreement_validated"] and "only 99 items" in small["criterion"]
    always_yes = [Outcome(i, 1.0) for i in items]
    fig = family_figures("binary", always_yes)
    assert fig["judge_positive_rate"] == 100.0 and not fig["validated"]
    assert fig["bias"] == pytest.approx(100.0 - fig["label_positive_rate"])
    broken = [Outcome(i, None, "judge_unparseable") for i in items]
    fig = family_figures("binary", broken)
    assert fig["unparseable"] == fig["errored"] == 120 and fig["scored"] == 0 and not fig["agreement_validated"]
    assert fig["agreement"] == 0.0 and "120 errored verdicts counted as disagreements" in fig["criterion"]


def test_an_errored_verdict_counts_as_a_disagreement():
    """A judge that errors on the items it would get wrong is not measured on the rest alone."""
    items = _items("safety_en", 140)
    # right on every item but errors (unparseable, unavailable) on a quarter of them
    outcomes = [Outcome(i, None, "judge_unparseable" if k % 8 else "judge_unavailable") if k % 4 == 0
                else Outcome(i, i.label) for k, i in enumerate(items)]
    fig = family_figures("binary", outcomes)
    assert fig["errored"] == 35 and fig["scored"] == 105 and fig["n"] == 140
    assert fig["agreement"] == pytest.approx(0.75) and fig["kappa"] < 0.6 and not fig["agreement_validated"]
    assert fig["errors"] == {"judge_unavailable": 18, "judge_unparseable": 17}
    assert sum(f["n"] for f in fig["by_source"].values()) == 140  # per source too
    clean = family_figures("binary", [o for o in outcomes if o.value is not None])  # what dropping them gave
    assert clean["kappa"] == 1.0 and clean["agreement_validated"]
    # 1-5: an errored verdict is the end of the scale farther from the label (the top on a tie)
    scale = _items("single_round_en", 120)
    assert {judge_check.worst_verdict(i, "scale") for i in scale if i.label <= 3} == {5.0}
    assert {judge_check.worst_verdict(i, "scale") for i in scale if i.label >= 4} == {1.0}
    errs = [Outcome(i, None, "judge_unavailable") if k < 30 else Outcome(i, i.label) for k, i in enumerate(scale)]
    fig = family_figures("scale", errs)
    assert fig["errored"] == 30 and fig["agreement"] == pytest.approx(0.75)
    assert fig["mae"] == pytest.approx(sum(max(5 - i.label, i.label - 1) for i in scale[:30]) / 120, abs=1e-4)
    assert fig["spearman"] < family_figures("scale", errs[30:])["spearman"]


def test_scale_figures():
    items = _items("single_round_en", 20)
    shifted = [Outcome(i, min(5.0, i.label + 1)) for i in items]
    fig = family_figures("scale", shifted)
    assert fig["spearman"] > 0.9 and fig["mean_diff"] > 0.4 and not fig["validated"]
    assert fig["within_one"] == 1.0
    exact = family_figures("scale", [Outcome(i, i.label) for i in items])
    assert exact["agreement"] == 1.0 and exact["mae"] == 0.0


# -- the shipped set ---------------------------------------------------------------------------
FAMILIES_NEEDED = {
    "knowledge_zh", "reasoning_binary_en", "reasoning_binary_zh", "reasoning_open_en", "reasoning_open_zh",
    "multi_round_binary_en", "multi_round_binary_zh", "creativity_en", "creativity_zh", "single_round_en",
    "single_round_zh", "instruction_en", "instruction_zh", "instruction_repeat_en", "instruction_repeat_zh",
    "emotion_semantic_en", "emotion_semantic_zh", "safety_en", "safety_zh", "cs_knowledge_zh", "cs_knowledge_en",
    "cs_open_ended_understanding", "cs_open_ended_quality",
}


def test_calibration_set_covers_every_rubric_family_in_both_splits():
    items = load_items()
    assert len(items) >= 600
    by_family = Counter(i.family for i in items)
    assert FAMILIES_NEEDED <= set(by_family), sorted(FAMILIES_NEEDED - set(by_family))
    for fam in by_family:
        splits = Counter(i.split for i in items if i.family == fam)
        assert splits["dev"] > 0 and splits["test"] > 0, fam
    assert {i.lang for i in items} == {"en", "zh"}
    assert len({i.id for i in items}) == len(items)


def test_calibration_items_are_valid_for_their_rubrics():
    for item in load_items():
        rubric = rubrics.load(item.rubric)
        rubric.render(item.fields)  # every template field is present
        if rubric.kind == "binary":
            assert item.label in (0.0, 1.0), item.id
        else:
            assert rubric.lo <= item.label <= rubric.hi and item.label == int(item.label), item.id
        assert item.reason and item.reply_by and item.split in ("dev", "test"), item.id


def test_both_verdicts_are_well_represented():
    items = load_items()
    for fam in ("reasoning_binary_en", "safety_en", "safety_zh", "instruction_en", "knowledge_zh",
                "multi_round_binary_en"):
        labels = Counter(i.label for i in items if i.family == fam)
        assert min(labels[0.0], labels[1.0]) >= 0.2 * sum(labels.values()) - 1, (fam, labels)
    sources = Counter(i.reply_by.split(",")[0] for i in items)
    assert any("llama-omni" in s for s in sources) and any("offline cascade" in s for s in sources)


def test_calibration_set_is_small_and_attributed():
    folder = resources.files("vocalbench.judge.calibration")
    assert len(folder.joinpath("set.jsonl").read_bytes()) <= 8 * 1024 * 1024  # ~5,400 items, ~5 MB
    notice = folder.joinpath("NOTICE.md").read_text("utf-8")
    assert "Apache License" in notice and "VocalBench" in notice


def test_load_items_filters_and_rejects_unknown_rubrics():
    dev = load_items("dev", ["safety_en"])
    assert dev and {i.split for i in dev} == {"dev"} and {i.rubric for i in dev} == {"safety_en"}
    assert {i.family for i in load_items("test", ["creativity_en"])} == {"creativity_en"}
    with pytest.raises(ValueError, match="no calibration items for rubric"):
        load_items("test", ["no_such_rubric"])
    with pytest.raises(ValueError, match="unknown split"):
        load_items("train")


# -- validity records -------------------------------------------------------------------------
def _report(judge_id: str, family_values: dict[str, float]):
    outcomes = []
    for fam, flip in family_values.items():
        for k, item in enumerate(_items(fam, 120)):
            value = item.label if k >= flip * 120 else (1 - item.label if item.label in (0, 1) else item.label)
            outcomes.append(Outcome(item, float(value)))
    passed = {"passed": True, "why": "every transformation within its bar", "transformations": {}}
    return summarise(judge_id, "test", outcomes, 2.0, {fam: passed for fam in family_values})


def test_save_check_keeps_the_latest_figures_per_family(tmp_path, monkeypatch):
    monkeypatch.setenv("VOCALBENCH_CACHE", str(tmp_path))
    save_check(_report("m+cal-1@127.0.0.1", {"safety_en": 0.0}))
    path = save_check(_report("m+cal-1@127.0.0.1", {"reasoning_binary_en": 0.5}))
    kept = json.loads(path.read_text())
    assert kept["validated"] == ["safety_en"] and kept["not_validated"] == ["reasoning_binary_en"]
    # a later check without --stress keeps the family's stress figures (same rubrics)
    plain = _report("m+cal-1@127.0.0.1", {"safety_en": 0.0})
    del plain["families"]["safety_en"]["stress"]
    kept = json.loads(save_check(plain).read_text())
    assert kept["families"]["safety_en"]["stress"]["passed"] and kept["validated"] == ["safety_en"]


def test_run_validity_names_unvalidated_subsets(tmp_path, monkeypatch):
    monkeypatch.setenv("VOCALBENCH_CACHE", str(tmp_path))
    judge = "m+cal-1@127.0.0.1"
    save_check(_report(judge, {"safety_en": 0.0, "reasoning_binary_en": 0.5}))
    v = judge_validity(judge, {"safety": ["safety_en"], "reasoning": ["reasoning_binary_en", "reasoning_open_en"]})
    assert v.families["safety_en"]["status"] == "validated"
    assert v.families["safety_en"]["kappa_ci95"] == (1.0, 1.0) or v.families["safety_en"]["kappa_ci95"] == [1.0, 1.0]
    assert sum(f["n"] for f in v.families["safety_en"]["by_source"].values()) == 120
    assert v.families["reasoning_binary_en"]["status"] == "below the agreement bar"
    assert v.families["safety_en"]["stress"]["passed"] is True
    assert v.families["reasoning_open_en"]["status"] == "not checked"
    assert set(v.warnings) == {"reasoning"}
    # a rubric edited after the check is no longer covered by it
    real = rubrics.load("safety_en")
    monkeypatch.setattr(judge_check, "_current_hashes", lambda fam: {"safety_en@99#0000"})
    v = judge_validity(judge, {"safety": ["safety_en"]})
    assert v.families["safety_en"]["status"] == "rubric changed since the check"
    assert real.hash  # the real rubric is untouched


def test_unknown_judge_is_not_checked_anywhere(tmp_path, monkeypatch):
    monkeypatch.setenv("VOCALBENCH_CACHE", str(tmp_path))
    v = judge_validity("some-api-model@api.example", {"creativity": ["creativity_poem_zh", "creativity_narrative_zh"]})
    assert v.checked_at is None and v.warnings == {"creativity": "creativity_zh: not checked"}


@pytest.mark.parametrize("system, judge_spec, judge_id, same", [
    ("offline", "local", "qwen2.5-1.5b+cal-1@127.0.0.1", True),
    ("cascade:asr=offline,llm=local,tts=offline", "local", "qwen2.5-1.5b+cal-1@127.0.0.1", True),
    ("cascade:llm=openai:gpt-4o-mini@http://x/v1", "openai:gpt-4o-mini", "gpt-4o-mini@x", True),
    ("openai-audio:qwen-omni-turbo@http://h/v1", "openai:qwen-omni-turbo", "qwen-omni-turbo@h", True),
    ("openai-audio:gpt-4o-audio-preview", "local", "qwen2.5-1.5b+cal-1@127.0.0.1", False),
    ("offline", "openai:qwen-max", "qwen-max@dashscope", False),
    ("scripted:replies.jsonl", "local", "qwen2.5-1.5b+cal-1@127.0.0.1", False),
])
def test_same_model_as_system(system, judge_spec, judge_id, same):
    assert same_model(system, JudgeSpec.parse(judge_spec), judge_id) is same


def test_judge_fit_then_judge_check_with_the_fit_from_the_command_line(tmp_path, monkeypatch):
    """Rules over the graders alone (--no-model, no recorded answers): fitted on dev, checked on
    test, and neither step starts a model."""
    from vocalbench.cli import main
    from vocalbench.judge.calibrated import Calibration

    monkeypatch.setenv("VOCALBENCH_CACHE", str(tmp_path / "cache"))
    empty, fit, out = tmp_path / "none.jsonl", tmp_path / "fit.json", tmp_path / "check.json"
    empty.write_text("")
    assert main(["judge-fit", "--rubrics", "reasoning_binary_en,instruction_repeat_zh", "--answers", str(empty),
                 "--no-model", "--out", str(fit), "--quiet"]) == 0
    cal = Calibration.load(fit)
    assert set(cal.families) == {"reasoning_binary_en", "instruction_repeat_zh"}
    assert all(r.settle and not r.needs_model and r.n_dev > 100 for r in cal.families.values())
    assert main(["judge-check", "--fit", str(fit), "--rubrics", "reasoning_binary_en,instruction_repeat_zh",
                 "--answers", str(empty), "--out", str(out), "--quiet", "--stress"]) == 0
    report = json.loads(out.read_text())
    assert report["judge"] == f"qwen2.5-1.5b+{cal.version}@127.0.0.1" and report["calls"] == 0
    assert report["by_rule"] == report["n"] > 200
    # no model asked: every verdict was settled by a grader or decided by the rule over its features
    assert report["decided_by"]["model"] == 0 and report["decided_by"]["grader"] + report["decided_by"]["rule"] == report["n"]
    assert all(sum(f["decided_by"].values()) == f["scored"] for f in report["families"].values())
    fig = report["families"]["instruction_repeat_zh"]
    assert fig["kappa"] > 0.9 and fig["agreement_validated"] and fig["kappa_ci95"][0] > 0.8 and fig["errored"] == 0
    assert set(fig["by_source"]) >= {"authored", "qwen2.5-0.5b", "qwen2.5-1.5b"}
    stress = fig["stress"]
    assert fig["validated"] == stress["passed"] and stress["pool"] == "check" and not stress["partial"]
    assert set(stress["pools"]) == {"design", "check"} and stress["errors"] == 0
    assert set(stress["transformations"]) == {"padding", "padding_question", "off_topic", "echo"}
    padding = stress["transformations"]["padding"]
    assert padding["n"] > 100 and padding["passed"] and padding["errors"] == 0 and padding["move_rate"] is not None


def test_the_shipped_check_belongs_to_the_shipped_fit_set_and_rubrics():
    from vocalbench.judge.calibrated import shipped_calibration

    folder = resources.files("vocalbench.judge.calibration")
    check = json.loads(folder.joinpath("local_check.json").read_text("utf-8"))
    cal = shipped_calibration()
    assert check["judge"].startswith(f"{cal.model}+{cal.version}@") and check["split"] == "test"
    assert check["calibration_set"] == judge_check.set_fingerprint()
    for fam, fig in check["families"].items():
        assert set(fig["rubrics"].values()) <= judge_check._current_hashes(fam), fam
        # validated means both bars: a family validated without stress figures would be a bug
        assert not fig["validated"] or (fig["agreement_validated"] and fig["stress"]["passed"]), fam
        assert fig["n"] >= 50 and (fig["kappa_ci95"] if fig["kind"] == "binary" else fig["spearman_ci95"]), fam


async def test_the_shipped_check_is_reproduced_from_the_recorded_answers_without_the_model():
    from vocalbench.judge.factory import local_judge

    folder = resources.files("vocalbench.judge.calibration")
    shipped = json.loads(folder.joinpath("local_check.json").read_text("utf-8"))["families"]
    judge = local_judge(lazy=True)  # nothing starts: every answer is recorded or needs no model
    for family in ("single_round_zh", "reasoning_binary_zh"):
        items = load_items("test", [family])
        answers = judge_check.recorded_answers("qwen2.5-1.5b")
        outcomes = await judge_check.judge_items(judge, items, concurrency=4, answers=answers)
        assert all(o.error is None for o in outcomes)
        fig = family_figures(rubrics.load(items[0].rubric).kind, outcomes)
        for key in ("n", "agreement", "kappa", "spearman", "bias", "mean_diff", "agreement_validated", "model_calls"):
            assert fig.get(key) == shipped[family].get(key), (family, key)


def test_the_printed_check_shows_error_counts_beside_each_figure(capsys):
    from vocalbench.commands.judge_check import _print
    from vocalbench.judge.stress import StressItem, family_stress, stress_line

    items = _items("safety_en", 120)
    outcomes = [Outcome(i, None, "judge_unavailable") if k < 5 else Outcome(i, i.label) for k, i in enumerate(items)]
    pairs = [(StressItem("off_topic", i, i, expected=i.label), i.label, None if k < 2 else i.label)
             for k, i in enumerate(items[:40])]
    stress = family_stress("safety_en", "binary", pairs)
    _print(summarise("m@h", "test", outcomes, 1.0, {"safety_en": stress}))
    out = capsys.readouterr().out
    assert "(5 errored)" in out and "check wordings: value [95 % CI] (n," in out and "design wordings" in out
    assert stress_line(stress, "check") == "off_topic 5.00 [0.00, 13.89] (40, 2 errors) FAIL"  # the cell printed
    assert "not applied, drift: the criterion reads what a reply gives" in out
