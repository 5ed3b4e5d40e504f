"""Robust: conditions from the real metadata, clean baseline, PR capping, headline mean."""

from __future__ import annotations

import pytest
from subset_doubles import ScriptedJudge, aggregate, ctx, one, rate, reply, samples

from vocalbench.records import Score
from vocalbench.scoring.subsets.robust import HEADLINE, Robust, base_question, condition


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_36_conditions_with_one_spelling(lang: str) -> None:
    items = samples(lang, "robust")
    conds = {condition(s) for s in items}
    assert len(conds) == 36 and set(HEADLINE) <= conds
    assert "packet_loss/dropping_70" in conds and not any("0.70" in c for c in conds)
    assert condition(items[0]) == "background_noise/snr_-5"
    # the Qid gives the same condition when the metadata fields are missing
    bare = items[700].model_copy(update={"category": None, "metadata": {}})
    assert condition(bare) == condition(items[700])


def _scores(items, value_of):  # noqa: ANN001, ANN202
    return [Score(subset=s.subset, sample_id=s.id, value=value_of(s), scorer="robust@1") for s in items]


def test_pr_capping_headline_and_curves() -> None:
    items = samples("en", "robust")
    clean_items = samples("en", "robust_clean")
    clean = _scores(clean_items, lambda s: 4.0)
    # headline conditions: background noise better than clean (capped at 1), the others at 3.0 (PR 0.75)
    scores = _scores(items, lambda s: 5.0 if condition(s) == "background_noise/snr_-5" else 3.0)
    res = aggregate(Robust("en"), scores, {"robust_clean": clean}, items)
    assert res.metric == "preserve_rate" and res.n == 3600 and res.complete
    assert res.value == round((1.0 + 5 * 0.75) / 6 * 100, 4)  # 79.1667
    assert res.extra["headline_pr"]["background_noise/snr_-5"] == 1.0
    assert res.extra["uncapped_pr_mean"] == round((1.25 + 5 * 0.75) / 6 * 100, 4)
    assert res.extra["capped_pr_mean"] == res.value and res.extra["pr_sum"] == 4.75
    assert res.extra["clean_mean"] == 4.0 and res.extra["clean_n"] == 100
    fams = res.extra["conditions"]
    assert set(fams) == {"background_noise", "white_noise", "reverberation", "farfield", "packet_loss", "distortion"}
    assert sum(len(v) for v in fams.values()) == 36
    assert list(fams["background_noise"]) == ["snr_-5", "snr_0", "snr_5", "snr_10", "snr_15", "snr_20"]
    assert fams["farfield"]["filter_400hz"] == {"mean": 3.0, "pr": 0.75, "n": 100}
    assert res.ci95 is not None and res.ci95[0] <= res.value <= res.ci95[1]


def test_no_clean_scores_means_no_value() -> None:
    items = samples("zh", "robust")
    res = aggregate(Robust("zh"), _scores(items, lambda s: 3.0), {}, items)
    assert res.value is None and not res.complete and "missing" in res.extra


async def test_items_judged_with_single_round_rubric() -> None:
    s = samples("zh", "robust")[0]
    judge = ScriptedJudge(lambda rid, f: rate(3))
    sc = one(await Robust("zh").score(s, reply(s, "回答"), ctx("zh", judge=judge)))
    assert sc.value == 3.0 and sc.details["condition"] == "background_noise/snr_-5"
    assert judge.calls[0][0] == "single_round_zh"
    failed = one(await Robust("zh").score(s, None, ctx("zh", judge=judge)))
    assert failed.value == 1.0 and failed.system_error == "missing_reply"
    assert base_question("robust-white_noise-snr_-5-042") == base_question("robust_clean-042") == 42


def test_an_unscored_clean_item_makes_robust_incomplete() -> None:
    # 1 of 2 clean items unscored gave PR 75.0 "complete"; the baseline now misses an item
    from vocalbench.scoring.engine import control_completeness
    from vocalbench.scoring.subsets.single_round import SingleRound

    items, clean_items = samples("en", "robust"), samples("en", "robust_clean")[:2]
    clean = [Score(subset="robust_clean", sample_id=clean_items[0].id, value=4.0, scorer="single_round_en.v2@1"),
             Score(subset="robust_clean", sample_id=clean_items[1].id, unscored="judge_unparseable",
                   scorer="single_round_en.v2@1")]
    results = {"robust_clean": aggregate(SingleRound("en"), clean, {}, clean_items),
               "robust": aggregate(Robust("en"), _scores(items, lambda s: 3.0), {"robust_clean": clean}, items)}
    assert results["robust"].value == 75.0 and results["robust"].complete  # the tally alone
    assert not results["robust_clean"].complete
    control_completeness(results, "robust")
    assert results["robust"].value == 75.0 and not results["robust"].complete
    assert results["robust"].extra["incomplete_control"] == "robust_clean"
    control_completeness(results, "robust_clean")  # no control of its own: unchanged
    assert not results["robust_clean"].complete
