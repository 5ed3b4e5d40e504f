"""``vocalbench agreement --human FILE RUN [--judge-b RUN2]``: judge vs human (and judge vs judge).

Human ratings CSV (UTF-8, header row), one row per rater decision:
  score mode:    sample_id,subset,rater_id,score
  pairwise mode: sample_id,subset,rater_id,pair_id,choice   (choice A = RUN's reply, B = --pair-run's)
"""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path
from typing import Any

from vocalbench.errors import CliError


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("run", metavar="RUN", help="scored language run folder whose judge is validated")
    parser.add_argument("--human", metavar="FILE", help="human ratings CSV (see docs/report.md)")
    parser.add_argument("--pair-run", metavar="RUN_B",
                        help="pairwise mode: the run whose replies are option B (same judge)")
    parser.add_argument("--judge-b", metavar="RUN2",
                        help="the same replies scored by another judge: judge-swap report")
    parser.add_argument("--out", metavar="FILE", help="also write the statistics as JSON")
    parser.add_argument("--quiet", action="store_true", help="do not print tables")


def _one_run(path: str) -> Any:
    from vocalbench.report.runs import RunFolderError, load_runs

    try:
        runs = load_runs([path])
    except RunFolderError as exc:
        raise CliError(str(exc)) from exc
    if len(runs) != 1:
        raise CliError(f"{path}: give one language run folder (found {len(runs)}: {[str(r.path) for r in runs]})")
    return runs[0]


def _f(x: Any, nd: int = 3) -> str:
    return "-" if x is None or (isinstance(x, float) and not math.isfinite(x)) else f"{x:.{nd}f}"


def run(args: argparse.Namespace) -> int:
    from rich.console import Console
    from rich.table import Table

    from vocalbench.report.agreement import HumanCsvError, human_agreement, judge_swap, read_human_csv

    if not args.human and not args.judge_b:
        raise CliError("give --human FILE and/or --judge-b RUN2")
    run_a = _one_run(args.run)
    console = Console()
    result: dict[str, Any] = {}
    if args.human:
        try:
            mode, ratings = read_human_csv(args.human)
        except HumanCsvError as exc:
            raise CliError(str(exc)) from exc
        pair = _one_run(args.pair_run) if args.pair_run else None
        if mode == "pairwise" and pair is None:
            raise CliError("pairwise ratings need --pair-run RUN_B (the run whose replies are option B)")
        result["human"] = human_agreement(mode, ratings, run_a, pair)
        if not args.quiet:
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
    if args.judge_b:
        run_b = _one_run(args.judge_b)
        result["judge_swap"] = judge_swap(run_a, run_b)
        if not args.quiet:
            t = Table(title="judge swap: same replies, two judges (difference B - A)")
            for c in ("subset", "n", "agreement %", "kappa", "mean A", "mean B", "mean diff", "Spearman"):
                t.add_column(c, justify="left" if c == "subset" else "right")
            for s, st in result["judge_swap"]["subsets"].items():
                t.add_row(s, str(st["n"]), _f(st["agreement"], 1), _f(st["cohen_kappa"]), _f(st["mean_a"]),
                          _f(st["mean_b"]), _f(st["mean_difference"]), _f(st["spearman"]))
            console.print(t)
            if not result["judge_swap"]["subsets"]:
                console.print("note: the two runs share no scored samples", markup=False)
    if args.out:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text(json.dumps(result, ensure_ascii=False, indent=2), encoding="utf-8")
    return 0
