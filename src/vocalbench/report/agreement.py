"""Judge-human agreement: the paper's pairwise statistics plus chance-corrected reliability.

The statistics come from :mod:`vocalbench.stats` (:func:`cohen_kappa`, :func:`spearman`,
:func:`fleiss_kappa`, :func:`krippendorff_alpha` nominal and interval); here are the paper's
:func:`pairwise_match_rates` (consistency rate, majority match, any match; docs/scoring.md).
:func:`read_human_csv` imports ratings; :func:`human_agreement` and :func:`judge_swap` build the
per-subset reports of ``vocalbench agreement``.

Human ratings CSV (header required, UTF-8, one row per rater decision)::

    sample_id,subset,rater_id,score                 # score mode: a number on the judge's scale
    sample_id,subset,rater_id,pair_id,choice        # pairwise mode: choice A or B

In pairwise mode A is the reply of the first run and B the reply of ``--pair-run`` (both scored
by the same judge); the judge prefers the reply with the higher judged score (``main``, or the
judged part such as emotion's ``semantic``) (equal scores: a tie,
which agrees with nobody).
"""

from __future__ import annotations

import csv
import math
from collections import Counter, defaultdict
from collections.abc import Hashable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import NotRequired, TypedDict, TypeVar

import numpy as np

from vocalbench.files import write_json
from vocalbench.records import Score
from vocalbench.report.runs import RunData, load_one_run
from vocalbench.stats import cohen_kappa, fleiss_kappa, krippendorff_alpha, spearman

Item = TypeVar("Item", bound=Hashable)  # what identifies a rated item (a question id, a (qid, turn) pair)


# --------------------------------------------------------------------------- statistics
class MatchRates(TypedDict):
    """The paper's pairwise rates (%, None without items to rate) and what they count."""

    items: int
    decisions: int
    consistency_rate: float | None
    majority_match: float | None
    no_majority: int
    any_match: float | None


class AgreementStats(MatchRates):
    """Every statistic of one subset (:func:`agreement_stats`); interval alphas for numeric ratings only,
    and, in ``vocalbench agreement``, the judge's ties and the ratings it did not score."""

    raters: int
    cohen_kappa_judge_vs_rater: dict[str, float | None]
    cohen_kappa_mean: float | None
    fleiss_kappa_raters: float | None
    krippendorff_alpha_nominal_raters: float | None
    krippendorff_alpha_nominal_with_judge: float | None
    krippendorff_alpha_interval_raters: NotRequired[float | None]
    krippendorff_alpha_interval_with_judge: NotRequired[float | None]
    spearman_judge_vs_mean_rater: float | None
    judge_ties: NotRequired[int]
    ratings_without_judge_score: NotRequired[int]


class HumanAgreement(TypedDict):
    """The judge against human raters, per subset, and the ratings of samples it did not score."""

    mode: str
    run: str
    subsets: dict[str, AgreementStats]
    missing: list[str]


class SwapStats(TypedDict):
    """Two judges on one subset's replies (differences B - A)."""

    n: int
    agreement: float
    cohen_kappa: float | None
    mean_a: float
    mean_b: float
    mean_difference: float
    spearman: float | None
    krippendorff_alpha_interval: float | None


class JudgeSwap(TypedDict):
    judge_a: str
    judge_b: str
    subsets: dict[str, SwapStats]


class AgreementReport(TypedDict, total=False):
    """``vocalbench agreement``: against human raters and/or against a second judge."""

    human: HumanAgreement
    judge_swap: JudgeSwap


def pairwise_match_rates(judge: Mapping[Item, Hashable], raters: Mapping[Item, list[Hashable]]) -> MatchRates:
    """The paper's three rates over items rated by both the judge and at least one human.

    consistency_rate: share of (item, rater) decisions equal to the judge's;
    majority_match: share of items whose raters' strict majority equals the judge (items with a
    tied vote have no majority and are left out, counted in ``no_majority``);
    any_match: share of items where at least one rater agrees with the judge.
    """
    items = [i for i in raters if i in judge and raters[i]]
    decisions = sum(len(raters[i]) for i in items)
    agree = sum(sum(r == judge[i] for r in raters[i]) for i in items)
    maj_items, maj_agree, no_majority, any_agree = 0, 0, 0, 0
    for i in items:
        votes = Counter(raters[i]).most_common()
        if len(votes) > 1 and votes[0][1] == votes[1][1]:
            no_majority += 1
        elif votes[0][1] * 2 > len(raters[i]) or len(votes) == 1:
            maj_items += 1
            maj_agree += votes[0][0] == judge[i]
        else:  # a plurality that is not a majority
            no_majority += 1
        any_agree += any(r == judge[i] for r in raters[i])
    return {
        "items": len(items),
        "decisions": decisions,
        "consistency_rate": 100.0 * agree / decisions if decisions else None,
        "majority_match": 100.0 * maj_agree / maj_items if maj_items else None,
        "no_majority": no_majority,
        "any_match": 100.0 * any_agree / len(items) if items else None,
    }


# --------------------------------------------------------------------------- import
@dataclass(frozen=True)
class HumanRating:
    """One human decision: a score, or a pairwise choice ("A"/"B") for ``pair_id``."""

    sample_id: str
    subset: str
    rater_id: str
    score: float | None = None
    pair_id: str | None = None
    choice: str | None = None


class HumanCsvError(ValueError):
    """A human ratings file that does not follow the documented CSV format."""


def read_human_csv(path: str | Path) -> tuple[str, list[HumanRating]]:
    """Read a ratings CSV; returns ("score" | "pairwise", ratings). Raises HumanCsvError with the
    line number on a malformed row."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8-sig")
    except OSError as exc:
        raise HumanCsvError(f"{p}: cannot read ({exc})") from exc
    except UnicodeDecodeError as exc:
        raise HumanCsvError(f"{p}: not a UTF-8 CSV file ({exc.reason} at byte {exc.start})") from None
    if "\0" in text:
        raise HumanCsvError(f"{p}: not a CSV text file (contains NUL bytes)")
    reader = csv.DictReader(text.splitlines())
    fields = {f.strip() for f in (reader.fieldnames or [])}
    base = {"sample_id", "subset", "rater_id"}
    if not base <= fields:
        raise HumanCsvError(f"{p}: header must have sample_id, subset, rater_id (got {sorted(fields)})")
    if "score" in fields:
        mode = "score"
    elif {"pair_id", "choice"} <= fields:
        mode = "pairwise"
    else:
        raise HumanCsvError(f"{p}: header needs a 'score' column or 'pair_id' and 'choice' columns")
    out: list[HumanRating] = []
    for line, row in enumerate(reader, start=2):
        row = {(k or "").strip(): (v or "").strip() for k, v in row.items()}
        if not all(row.get(k) for k in base):
            raise HumanCsvError(f"{p}:{line}: sample_id, subset and rater_id must not be empty")
        if mode == "score":
            try:
                score = float(row["score"])
            except ValueError as exc:
                raise HumanCsvError(f"{p}:{line}: score {row['score']!r} is not a number") from exc
            if not math.isfinite(score):
                raise HumanCsvError(f"{p}:{line}: score must be finite")
            out.append(HumanRating(row["sample_id"], row["subset"], row["rater_id"], score=score))
        else:
            choice = row["choice"].upper()
            if choice not in ("A", "B"):
                raise HumanCsvError(f"{p}:{line}: choice must be A or B (got {row['choice']!r})")
            out.append(HumanRating(row["sample_id"], row["subset"], row["rater_id"],
                                   pair_id=row.get("pair_id") or row["sample_id"], choice=choice))
    if not out:
        raise HumanCsvError(f"{p}: no ratings")
    return mode, out


# --------------------------------------------------------------------------- reports
def _nan_to_none(x: float | None) -> float | None:
    return None if x is None or not math.isfinite(x) else float(x)


def _label(v: float) -> Hashable:
    """Categorical label of a numeric rating (integers stay integers)."""
    return int(v) if float(v).is_integer() else round(float(v), 6)


def agreement_stats(judge: dict[str, Hashable], raters: dict[str, dict[str, Hashable]],
                    numeric: bool) -> AgreementStats:
    """All statistics for one subset: ``judge`` item -> label, ``raters`` rater -> item -> label."""
    items = sorted({i for r in raters.values() for i in r})
    by_item: dict[str, list[Hashable]] = {i: [r[i] for r in raters.values() if i in r] for i in items}
    kappas: dict[str, float | None] = {}
    for rid, r in sorted(raters.items()):
        shared = [i for i in r if i in judge]
        kappas[rid] = _nan_to_none(cohen_kappa([judge[i] for i in shared], [r[i] for i in shared])) if shared else None
    vals = [k for k in kappas.values() if k is not None]
    cats = sorted({v for lst in by_item.values() for v in lst}, key=str)
    col = {c: j for j, c in enumerate(cats)}
    counts = np.zeros((len(items), len(cats)))
    for n, i in enumerate(items):
        for v in by_item[i]:
            counts[n, col[v]] += 1
    rater_ids = sorted(raters)

    def matrix(with_judge: bool) -> list[list[float | None]]:
        rows = [[_as_number(raters[r].get(i)) for i in items] for r in rater_ids]
        if with_judge:
            rows.append([_as_number(judge.get(i)) for i in items])
        return rows

    def alpha(level: str, with_judge: bool) -> float | None:
        """Krippendorff's alpha among the raters (two at least), or of the raters and the judge."""
        return _nan_to_none(krippendorff_alpha(matrix(with_judge), level)) if with_judge or len(raters) >= 2 else None

    rates = pairwise_match_rates(judge, by_item)
    res: AgreementStats = {
        "items": rates["items"], "decisions": rates["decisions"], "consistency_rate": rates["consistency_rate"],
        "majority_match": rates["majority_match"], "no_majority": rates["no_majority"], "any_match": rates["any_match"],
        "raters": len(raters), "cohen_kappa_judge_vs_rater": kappas,
        "cohen_kappa_mean": float(np.mean(vals)) if vals else None,
        "fleiss_kappa_raters": _nan_to_none(fleiss_kappa(counts)) if len(raters) >= 2 else None,
        "krippendorff_alpha_nominal_raters": alpha("nominal", False),
        "krippendorff_alpha_nominal_with_judge": alpha("nominal", True), "spearman_judge_vs_mean_rater": None}
    if numeric:
        res["krippendorff_alpha_interval_raters"] = alpha("interval", False)
        res["krippendorff_alpha_interval_with_judge"] = alpha("interval", True)
        shared = [i for i in items if i in judge]
        means = [float(np.mean([float(v) for v in by_item[i]])) for i in shared]  # type: ignore[arg-type]
        res["spearman_judge_vs_mean_rater"] = _nan_to_none(spearman([float(judge[i]) for i in shared], means))  # type: ignore[arg-type]
    return res


def _as_number(v: Hashable | None) -> float | None:
    if v is None:
        return None
    if v in ("A", "B", "tie"):  # pairwise labels; only nominal statistics use them
        return {"A": 0.0, "B": 1.0, "tie": 0.5}[v]
    return float(v)  # type: ignore[arg-type]


def human_agreement(mode: str, ratings: list[HumanRating], run: RunData, pair_run: RunData | None = None) -> HumanAgreement:
    """Per-subset agreement of the run's judge with human raters (``run``: a RunData)."""
    by_subset: dict[str, list[HumanRating]] = defaultdict(list)
    for r in ratings:
        by_subset[r.subset].append(r)
    out: HumanAgreement = {"mode": mode, "run": str(run.path), "subsets": {}, "missing": []}
    if mode == "pairwise" and pair_run is None:
        raise ValueError("pairwise ratings need the run that produced the B replies (--pair-run)")
    for subset, rows in sorted(by_subset.items()):
        judge: dict[str, Hashable] = {}
        raters: dict[str, dict[str, Hashable]] = defaultdict(dict)
        missing = 0
        for r in rows:
            item = r.pair_id if mode == "pairwise" else r.sample_id
            assert item is not None
            if item not in judge:
                verdict = _judge_label(mode, run, pair_run, subset, r.sample_id)
                if verdict is None:
                    missing += 1
                    continue
                judge[item] = verdict
            if mode == "score":
                _check_scale(r, run.judge_score(subset, r.sample_id))
            raters[r.rater_id][item] = r.choice if mode == "pairwise" else _label(r.score)  # type: ignore[arg-type]
        stats = agreement_stats(judge, dict(raters), numeric=mode == "score")
        stats["judge_ties"] = sum(v == "tie" for v in judge.values())
        stats["ratings_without_judge_score"] = missing
        out["subsets"][subset] = stats
        if missing:
            out["missing"].append(f"{subset}: {missing} ratings refer to samples the judge did not score")
    return out


def _check_scale(rating: HumanRating, judged: Score | None) -> None:
    """AgreementError when a human score lies outside the scale of the rubric the judge answered."""
    from vocalbench.judge.rubrics import load

    ref = judged.judge.rubric if judged is not None and judged.judge is not None else None
    if not ref or rating.score is None:
        return
    try:
        rubric = load(ref.split("@", 1)[0])
    except (KeyError, ValueError):
        return  # a rubric of another version of the package: its scale is unknown here
    lo, hi = (rubric.lo, rubric.hi) if rubric.kind == "scale" else (0, 1)
    if not lo <= rating.score <= hi:
        raise AgreementError(f"human ratings: sample {rating.subset}/{rating.sample_id}, rater {rating.rater_id}, "
                             f"field 'score': {rating.score:g} is outside the {rubric.id} scale {lo}..{hi}")


def _judge_label(mode: str, run: RunData, pair_run: RunData | None, subset: str, sample_id: str) -> Hashable | None:
    sc = run.judge_score(subset, sample_id)
    if sc is None or sc.value is None or not sc.scored:
        return None
    if mode == "score" or pair_run is None:
        return _label(sc.value)
    other = pair_run.judge_score(subset, sample_id)
    if other is None or other.value is None or not other.scored:
        return None
    if sc.value == other.value:
        return "tie"
    return "A" if sc.value > other.value else "B"


def judge_swap(run_a: RunData, run_b: RunData) -> JudgeSwap:
    """Two judges on the same replies: per subset agreement, Cohen's kappa, mean difference (B - A),
    Spearman, over the samples both scored."""
    out: JudgeSwap = {"judge_a": _judge_name(run_a), "judge_b": _judge_name(run_b), "subsets": {}}
    subsets = sorted({s for s, _ in run_a.scores} & {s for s, _ in run_b.scores})
    for subset in subsets:
        ids = sorted({i for s, i in run_a.scores if s == subset} & {i for s, i in run_b.scores if s == subset})
        xa, xb = [], []
        for i in ids:
            sa, sb = run_a.judge_score(subset, i), run_b.judge_score(subset, i)
            if sa is not None and sb is not None and sa.value is not None and sb.value is not None \
                    and sa.scored and sb.scored:
                xa.append(float(sa.value))
                xb.append(float(sb.value))
        if not xa:
            continue
        la, lb = [_label(v) for v in xa], [_label(v) for v in xb]
        diff = np.asarray(xb) - np.asarray(xa)
        out["subsets"][subset] = {
            "n": len(xa),
            "agreement": 100.0 * float(np.mean([p == q for p, q in zip(la, lb)])),
            "cohen_kappa": _nan_to_none(cohen_kappa(la, lb)),
            "mean_a": float(np.mean(xa)), "mean_b": float(np.mean(xb)),
            "mean_difference": float(diff.mean()),
            "spearman": _nan_to_none(spearman(xa, xb)),
            "krippendorff_alpha_interval": _nan_to_none(krippendorff_alpha([xa, xb], "interval")),
        }
    return out


def _judge_name(run: RunData) -> str:
    return str(run.summary.provenance.judge or run.config.judge or run.path)


class AgreementError(ValueError):
    """The agreement inputs do not fit together (no ratings given, pairwise ratings without RUN_B)."""


def _f(x: float | None, nd: int = 3) -> str:
    return "-" if x is None or (isinstance(x, float) and not math.isfinite(x)) else f"{x:.{nd}f}"


def agreement_report(run: str, human: str | None = None, pair_run: str | None = None,
                     judge_b: str | None = None, out: str | None = None, show: bool = True) -> AgreementReport:
    """``vocalbench agreement``: the judge of RUN against human ratings (``human`` CSV, pairwise
    against ``pair_run``) and/or against another judge on the same replies (``judge_b``); prints
    the tables when ``show``, writes the statistics as JSON to ``out``, and returns them.
    Raises :class:`AgreementError`, :class:`HumanCsvError` or ``RunFolderError``."""
    from rich.console import Console
    from rich.table import Table

    if not human and not judge_b:
        raise AgreementError("give --human FILE and/or --judge-b RUN2")
    run_a = load_one_run(run)
    console = Console()
    result: AgreementReport = {}
    if human:
        mode, ratings = read_human_csv(human)
        pair = load_one_run(pair_run) if pair_run else None
        if mode == "pairwise" and pair is None:
            raise AgreementError("pairwise ratings need --pair-run RUN_B (the run whose replies are option B)")
        result["human"] = human_agreement(mode, ratings, run_a, pair)
        if show:
            t = Table(title=f"judge vs human raters ({mode})")
            for c in ("subset", "items", "raters", "consistency %", "majority %", "any %", "kappa (mean)",
                      "Fleiss", "alpha nom.", "alpha int.", "Spearman"):
                t.add_column(c, justify="left" if c == "subset" else "right")
            for s, st in result["human"]["subsets"].items():
                t.add_row(s, str(st["items"]), str(st["raters"]), _f(st["consistency_rate"], 1),
                          _f(st["majority_match"], 1), _f(st["any_match"], 1), _f(st["cohen_kappa_mean"]),
                          _f(st["fleiss_kappa_raters"]), _f(st.get("krippendorff_alpha_nominal_raters")),
                          _f(st.get("krippendorff_alpha_interval_raters")), _f(st["spearman_judge_vs_mean_rater"]))
            console.print(t)
            for m in result["human"]["missing"]:
                console.print(f"note: {m}", markup=False, highlight=False)
    if judge_b:
        run_b = load_one_run(judge_b)
        result["judge_swap"] = judge_swap(run_a, run_b)
        if show:
            t = Table(title="judge swap: same replies, two judges (difference B - A)")
            for c in ("subset", "n", "agreement %", "kappa", "mean A", "mean B", "mean diff", "Spearman"):
                t.add_column(c, justify="left" if c == "subset" else "right")
            for s, sw in result["judge_swap"]["subsets"].items():
                t.add_row(s, str(sw["n"]), _f(sw["agreement"], 1), _f(sw["cohen_kappa"]), _f(sw["mean_a"]),
                          _f(sw["mean_b"]), _f(sw["mean_difference"]), _f(sw["spearman"]))
            console.print(t)
            if not result["judge_swap"]["subsets"]:
                console.print("note: the two runs share no scored samples", markup=False)
    if out:
        write_json(out, result)
    return result
