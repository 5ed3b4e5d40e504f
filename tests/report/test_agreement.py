"""Agreement statistics against textbook answers, the CSV import and the agreement command."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from vocalbench.cli import main
from vocalbench.records import JudgeTrace, Sample, Score
from vocalbench.report.agreement import HumanCsvError, pairwise_match_rates, read_human_csv
from vocalbench.runner.store import RunStore
from vocalbench.stats import cohen_kappa, fleiss_kappa, krippendorff_alpha, spearman

# Fleiss (1971) as tabulated on Wikipedia: 10 subjects, 14 raters, 5 categories; kappa = 0.210
FLEISS_1971 = [[0, 0, 0, 0, 14], [0, 2, 6, 4, 2], [0, 0, 3, 5, 6], [0, 3, 9, 2, 0], [2, 2, 8, 1, 1],
               [7, 7, 0, 0, 0], [3, 2, 6, 3, 0], [2, 5, 3, 2, 2], [6, 5, 2, 1, 0], [0, 2, 2, 3, 7]]
# Krippendorff (2011), "Computing Krippendorff's alpha-reliability", 4 observers x 12 units with gaps:
# alpha nominal = 0.743, interval = 0.849
N = None
KRIPP = [[1, 2, 3, 3, 2, 1, 4, 1, 2, N, N, N],
         [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, N, 3],
         [N, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, N],
         [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, N]]


def test_cohen_kappa_textbook() -> None:
    # 50 items: yes/yes 20, yes/no 5, no/yes 10, no/no 15 -> po 0.7, pe 0.5, kappa 0.4
    a = ["y"] * 25 + ["n"] * 25
    b = ["y"] * 20 + ["n"] * 5 + ["y"] * 10 + ["n"] * 15
    assert cohen_kappa(a, b) == pytest.approx(0.4, abs=1e-12)
    assert cohen_kappa(a, a) == pytest.approx(1.0)
    assert cohen_kappa(["y", "n", "y", "n"], ["n", "y", "n", "y"]) == pytest.approx(-1.0)


def test_fleiss_kappa_fleiss_1971() -> None:
    assert fleiss_kappa(FLEISS_1971) == pytest.approx(0.2099, abs=5e-4)
    assert fleiss_kappa([[3, 0], [0, 3], [3, 0]]) == pytest.approx(1.0)


def test_krippendorff_alpha_reference_example() -> None:
    assert krippendorff_alpha(KRIPP, "nominal") == pytest.approx(0.743, abs=5e-4)
    assert krippendorff_alpha(KRIPP, "interval") == pytest.approx(0.849, abs=5e-4)


def test_krippendorff_nominal_equals_scott_pi_for_two_raters() -> None:
    # two raters, no gaps, large n: alpha_nominal = Scott's pi * (1 - 1/2n) correction, close to kappa
    rng = np.random.default_rng(3)
    a = rng.integers(0, 3, 2000)
    b = np.where(rng.random(2000) < 0.7, a, rng.integers(0, 3, 2000))
    alpha = krippendorff_alpha([a.tolist(), b.tolist()], "nominal")
    assert alpha == pytest.approx(cohen_kappa(a.tolist(), b.tolist()), abs=0.01)


def test_spearman_known_value() -> None:
    # classic example: d^2 sum = 4 over n = 5 -> rho = 1 - 6*4/(5*24) = 0.8
    assert spearman([1, 2, 3, 4, 5], [2, 1, 3, 4, 5]) == pytest.approx(0.9)
    assert spearman([1, 2, 3, 4, 5], [1, 3, 2, 5, 4]) == pytest.approx(0.8)
    assert math.isnan(spearman([1, 1, 1], [1, 2, 3]))


def test_pairwise_match_rates_by_hand() -> None:
    judge = {"p1": "A", "p2": "B", "p3": "A", "p4": "B"}
    raters = {"p1": ["A", "A", "B"], "p2": ["A", "A", "B"], "p3": ["A", "A", "A"], "p4": ["A", "A", "A"]}
    r = pairwise_match_rates(judge, raters)
    assert r["decisions"] == 12
    assert r["consistency_rate"] == pytest.approx(100 * 6 / 12)  # 2 + 1 + 3 + 0
    assert r["majority_match"] == pytest.approx(50.0)  # p1, p3 yes; p2, p4 no
    assert r["any_match"] == pytest.approx(75.0)  # p4 has nobody agreeing


def test_read_human_csv_modes_and_errors(tmp_path: Path) -> None:
    f = tmp_path / "s.csv"
    f.write_text("sample_id,subset,rater_id,score\nc-1,creativity,r1,4\nc-1,creativity,r2,5\n")
    mode, rows = read_human_csv(f)
    assert mode == "score" and [r.score for r in rows] == [4.0, 5.0]
    f.write_text("sample_id,subset,rater_id,pair_id,choice\nc-1,creativity,r1,P1,b\n")
    mode, rows = read_human_csv(f)
    assert mode == "pairwise" and rows[0].choice == "B" and rows[0].pair_id == "P1"
    f.write_text("sample_id,subset,rater_id,pair_id,choice\nc-1,creativity,r1,P1,C\n")
    with pytest.raises(HumanCsvError, match=":2: choice must be A or B"):
        read_human_csv(f)
    f.write_text("sample_id,subset,rater_id,score\nc-1,creativity,r1,great\n")
    with pytest.raises(HumanCsvError, match="not a number"):
        read_human_csv(f)
    f.write_text("id,subset,score\n")
    with pytest.raises(HumanCsvError, match="header"):
        read_human_csv(f)


def _judged_run(root: Path, values: dict[str, float], judge: str = "judge-a") -> Path:
    """A run whose creativity items carry judge scores ``values``."""
    with RunStore(root) as st:
        st.add_samples(Sample(id=i, subset="creativity", lang="en", index=n, question=f"q{n}")
                       for n, i in enumerate(values))
        st.put_scores((Score(subset="creativity", sample_id=i, value=v, scorer="creativity@1",
                             judge=JudgeTrace(model=judge, prompt_hash="h", rubric="creativity_en@1", raw=str(v))),
                       f"creativity@1|{judge}") for i, v in values.items())
    (root / "summary.json").write_text(json.dumps({"lang": "en", "system": "s", "provenance": {"judge": judge}}))
    return root


def test_agreement_command_score_mode_and_judge_swap(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    judge = {"c-1": 5, "c-2": 3, "c-3": 1, "c-4": 4}
    run = _judged_run(tmp_path / "runA", {k: float(v) for k, v in judge.items()})
    humans = {"r1": {"c-1": 5, "c-2": 3, "c-3": 2, "c-4": 4}, "r2": {"c-1": 4, "c-2": 3, "c-3": 1, "c-4": 4}}
    csv = tmp_path / "h.csv"
    csv.write_text("sample_id,subset,rater_id,score\n" + "".join(
        f"{i},creativity,{r},{v}\n" for r, d in humans.items() for i, v in d.items()))
    other = _judged_run(tmp_path / "runB", {"c-1": 4.0, "c-2": 3.0, "c-3": 2.0, "c-4": 4.0}, judge="judge-b")
    out = tmp_path / "agree.json"
    assert main(["agreement", "--human", str(csv), str(run), "--judge-b", str(other), "--out", str(out)]) == 0
    res = json.loads(out.read_text())
    st = res["human"]["subsets"]["creativity"]
    assert st["consistency_rate"] == pytest.approx(75.0)  # 6 of 8 decisions equal the judge
    assert st["any_match"] == pytest.approx(100.0)
    kr1 = cohen_kappa([5, 3, 1, 4], [5, 3, 2, 4])
    kr2 = cohen_kappa([5, 3, 1, 4], [4, 3, 1, 4])
    assert st["cohen_kappa_judge_vs_rater"]["r1"] == pytest.approx(kr1)
    assert st["cohen_kappa_mean"] == pytest.approx((kr1 + kr2) / 2)
    expected_alpha = krippendorff_alpha([[5, 3, 2, 4], [4, 3, 1, 4]], "interval")
    assert st["krippendorff_alpha_interval_raters"] == pytest.approx(expected_alpha)
    assert st["spearman_judge_vs_mean_rater"] == pytest.approx(spearman([5, 3, 1, 4], [4.5, 3, 1.5, 4]))
    sw = res["judge_swap"]["subsets"]["creativity"]
    assert sw["n"] == 4 and sw["agreement"] == pytest.approx(50.0)
    assert sw["mean_difference"] == pytest.approx((-1 + 0 + 1 + 0) / 4)
    assert "judge vs human raters" in capsys.readouterr().out


def test_agreement_command_pairwise(tmp_path: Path) -> None:
    a = _judged_run(tmp_path / "A", {"c-1": 5.0, "c-2": 2.0, "c-3": 4.0})
    b = _judged_run(tmp_path / "B", {"c-1": 3.0, "c-2": 4.0, "c-3": 4.0})
    # judge: c-1 A, c-2 B, c-3 tie
    rows = [("c-1", "r1", "A"), ("c-1", "r2", "A"), ("c-1", "r3", "B"),
            ("c-2", "r1", "A"), ("c-2", "r2", "B"), ("c-2", "r3", "A"),
            ("c-3", "r1", "A"), ("c-3", "r2", "A"), ("c-3", "r3", "B")]
    csv = tmp_path / "p.csv"
    csv.write_text("sample_id,subset,rater_id,pair_id,choice\n" + "".join(
        f"{s},creativity,{r},pair-{s},{c}\n" for s, r, c in rows))
    out = tmp_path / "p.json"
    assert main(["agreement", "--human", str(csv), str(a), "--pair-run", str(b), "--out", str(out), "--quiet"]) == 0
    st = json.loads(out.read_text())["human"]["subsets"]["creativity"]
    assert st["judge_ties"] == 1
    assert st["consistency_rate"] == pytest.approx(100 * 3 / 9)  # 2 (c-1) + 1 (c-2) + 0 (tie)
    assert st["majority_match"] == pytest.approx(100 / 3)  # c-1 only
    assert st["any_match"] == pytest.approx(200 / 3)
    assert main(["agreement", "--human", str(csv), str(a)]) == 2  # pairwise needs --pair-run
