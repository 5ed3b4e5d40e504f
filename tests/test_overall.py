"""The overall score (docs/scoring.md): worked example, clarity tables, v1 algebra, missing/partial."""

from __future__ import annotations

import pytest

import vocalbench
from vocalbench.scoring.overall import clarity_points, overall_result, overall_score

VOCALNET2_8B = {  # docs/scoring.md worked example (en, v2): published 76.633
    "knowledge": 72.10, "reasoning": 75.0, "creativity": 3.733, "utmos": 4.355, "wer": 4.005,
    "single_round": 4.210, "instruction_following": 53.44, "empathy": 52.8, "safety": 91.50, "robust": 92.728,
}


def test_worked_example_reproduces_the_published_overall() -> None:
    assert vocalbench.overall_score(VOCALNET2_8B) == pytest.approx(76.633, abs=0.005)
    assert overall_score(VOCALNET2_8B, version="v2") == pytest.approx(76.6342, abs=1e-4)
    zh = {**{k: v for k, v in VOCALNET2_8B.items() if k != "wer"}, "per": 4.005}  # zh passes per
    assert overall_score(zh) == pytest.approx(76.6342, abs=1e-4)


@pytest.mark.parametrize(("rate", "v2", "v1"), [
    (0.0, 10, 10), (1.999, 10, 10), (2.0, 9, 9), (3.99, 9, 9), (4.0, 8, 8), (5.99, 8, 8), (6.0, 7, 7),
    (8.0, 6, 6), (10.0, 5, 5), (12.0, 4, 4), (14.0, 3, 3), (16.0, 2, 2), (17.99, 2, 2),
    (18.0, 1, 1), (19.99, 1, 1), (20.0, 0, 1), (55.0, 0, 1),
])
def test_clarity_points_tables(rate: float, v2: int, v1: int) -> None:
    assert clarity_points(rate, "v2") == v2
    assert clarity_points(rate, "v1") == v1


def test_clarity_rejects_nonsense() -> None:
    with pytest.raises(ValueError):
        clarity_points(-1.0)


def test_v1_formula_algebra() -> None:
    # K%, R 1-5, C 1-5, WER %, UTMOS, SR 1-5, FR %, EmoSem + EmoAc (2-10), RR %, capped-PR mean %
    m = {"knowledge": 60.0, "reasoning": 3.5, "creativity": 3.0, "wer": 19.0, "utmos": 4.0, "single_round": 4.0,
         "instruction_following": 40.0, "emotion": 7.0, "safety": 80.0, "robust": 90.0}
    prs = [1.0, 0.9, 0.8, 1.0, 0.85, 0.85]  # six capped PR_k fractions, mean 0.9 = 90 %
    by_definition = (60.0 / 10 + 2 * 3.5 + 2 * 3.0 + 1 + 4.0 + 2 * 4.0 + 40.0 / 10 + 7.0 + 10 * 0.80
                     + 2.5 * sum(prs))
    assert overall_score(m, version="v1") == pytest.approx(by_definition, abs=1e-9)
    assert by_definition == pytest.approx(64.5)  # 6+7+6+1+4+8+4+7+8+13.5
    # the same metrics under v2 use other weights and the v2 clarity table (19 % -> 1 point either way)
    assert overall_score({**m, "empathy": 50.0}, version="v2") != pytest.approx(by_definition)


def test_maxima_add_up_to_100() -> None:
    best_v2 = {"knowledge": 100, "reasoning": 100, "creativity": 5, "utmos": 5, "wer": 0, "single_round": 5,
               "instruction_following": 100, "empathy": 100, "safety": 100, "robust": 100}
    assert overall_score(best_v2) == pytest.approx(100.0)
    best_v1 = {**best_v2, "reasoning": 5, "empathy": 10}
    assert overall_score(best_v1, version="v1") == pytest.approx(100.0)


def test_missing_metric_is_an_error_naming_it() -> None:
    with pytest.raises(ValueError, match="empathy, robust"):
        overall_score({k: v for k, v in VOCALNET2_8B.items() if k not in ("empathy", "robust")})
    with pytest.raises(ValueError, match="unknown overall version"):
        overall_score(VOCALNET2_8B, version="v3")


def test_partial_when_a_term_is_missing_or_incomplete() -> None:
    full = overall_result(VOCALNET2_8B, "v2")
    assert full == {"version": "v2", "value": 76.634, "missing": [], "partial": None}
    no_empathy = overall_result({**VOCALNET2_8B, "empathy": None}, "v2")
    assert no_empathy["value"] is None and no_empathy["missing"] == ["empathy"]
    assert no_empathy["partial"] == {"value": pytest.approx(76.634 - 5.28, abs=1e-3), "max": 90}
    incomplete = overall_result(VOCALNET2_8B, "v2", incomplete={"robust", "wer"})
    assert incomplete["value"] is None and incomplete["missing"] == ["wer", "robust"]
    assert incomplete["partial"]["max"] == 75
    zh = overall_result({**{k: v for k, v in VOCALNET2_8B.items() if k != "wer"}, "per": 4.005}, "v2", lang="zh")
    assert zh["value"] == 76.634
    zh_missing = overall_result({k: v for k, v in VOCALNET2_8B.items() if k != "wer"}, "v2", lang="zh")
    assert zh_missing["missing"] == ["per"]
    v1_zh = overall_result(VOCALNET2_8B, "v1", lang="zh")
    assert v1_zh["value"] is None and v1_zh["partial"] is None  # v1 is defined for English only


@pytest.mark.parametrize(("key", "value", "message"), [
    ("knowledge", 720.0, "within 0-100"),  # was accepted: overall 141.42
    ("safety", 0.915, r"a fraction\? give 91.5"),  # was accepted as 0.0915 points
    ("creativity", 37.33, "within 1-5"),
    ("utmos", -1.0, "within 0-5"),
])
def test_out_of_range_metrics_are_rejected(key: str, value: float, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        vocalbench.overall_score({**VOCALNET2_8B, key: value})
    if key != "safety":  # a partial run's summary can truly hold 0.915 %
        with pytest.raises(ValueError, match=key):
            vocalbench.overall_result({key: value})
    else:
        assert vocalbench.overall_result({key: value})["partial"] == {"value": 0.092, "max": 10.0}


def test_public_partial_overall() -> None:
    partial = {k: v for k, v in VOCALNET2_8B.items() if k != "empathy"}
    res = vocalbench.overall_result(partial)
    assert res["value"] is None and res["missing"] == ["empathy"]
    assert res["partial"] == {"value": round(76.6342 - 5.28, 3), "max": 90.0}
    assert vocalbench.overall_result(VOCALNET2_8B)["value"] == pytest.approx(76.634, abs=1e-3)
    assert vocalbench.overall_result(VOCALNET2_8B, version="v1", lang="zh")["value"] is None


def test_zh_run_with_one_knowledge_set_has_no_partial() -> None:
    # was "partial 0.00 of 0": the knowledge mean over one of three sets is incomplete, nothing else ran
    from vocalbench.scoring.base import SubsetResult
    from vocalbench.scoring.dimensions import compute

    row = SubsetResult(metric="accuracy", value=70.0, n=10, scored=10, unscored=0, system_errors=0, complete=True)
    dims = compute({"chinese_knowledge": row}, "zh")
    assert dims.incomplete == {"knowledge"}
    res = overall_result(dims.values, incomplete=dims.incomplete, lang="zh")
    assert res["value"] is None and res["partial"] is None and "knowledge" in res["missing"]


def test_unvalidated_terms_leave_the_partial_sum() -> None:
    """A term judged by a judge not validated for its family is no measurement: the overall is not
    given, the partial sum adds the validated terms only, and the sum with it is shown beside."""
    res = overall_result(VOCALNET2_8B, "v2", unvalidated={"safety", "instruction_following"})
    safety, following = 0.1 * VOCALNET2_8B["safety"], 0.1 * VOCALNET2_8B["instruction_following"]
    assert res["value"] is None and res["missing"] == []
    assert res["unvalidated"] == ["instruction_following", "safety"]
    assert res["partial"] == {"value": pytest.approx(76.634 - safety - following, abs=1e-3), "max": 80}
    assert res["with_unvalidated"] == {"value": 76.634, "max": 100}
    both = overall_result({**VOCALNET2_8B, "empathy": None}, "v2", unvalidated={"safety", "empathy"})
    assert both["missing"] == ["empathy"] and both["unvalidated"] == ["safety"]  # missing wins over unvalidated
    assert both["partial"]["max"] == 80 and both["with_unvalidated"]["max"] == 90
    clarity = overall_result({**{k: v for k, v in VOCALNET2_8B.items() if k != "wer"}, "per": 4.005}, "v2",
                             lang="zh", unvalidated={"per"})
    assert clarity["unvalidated"] == ["per"] and clarity["partial"]["max"] == 90
    assert overall_result(VOCALNET2_8B, "v2", unvalidated={"multi_round"})["value"] == 76.634  # no overall term
