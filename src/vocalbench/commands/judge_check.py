"""``vocalbench judge-check``: measure a judge against the labelled calibration set.

Prints per rubric family: n, agreement, Cohen's kappa / Spearman rho, the judge's positive rate
beside the labels' (bias), mean difference and MAE, unparseable answers, and calls/s; ``--out``
writes the JSON. The figures of the test split are kept as the judge's latest check, which every
later run of that judge shows in its summary and report. ``--fit FILE`` (calibrated judges
only) fits the decision rules on the dev split and writes them to FILE.
"""

from __future__ import annotations

import argparse
import asyncio
import time
from typing import Any

from vocalbench.errors import CliError
from vocalbench.files import write_atomic, write_json


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--judge", default="local", metavar="SPEC",
                        help="judge to check: local (default), openai:MODEL[@BASE_URL], paper, local-json")
    parser.add_argument("--split", default="test", choices=("dev", "test", "all"),
                        help="calibration split (default test; fit rules on dev only)")
    parser.add_argument("--rubrics", metavar="LIST", help="comma-separated rubric ids or families (default: all)")
    parser.add_argument("--lang", choices=("en", "zh"), help="only items of one language")
    parser.add_argument("--limit", type=int, metavar="N", help="at most N items per rubric family (a quick check)")
    parser.add_argument("--out", metavar="FILE", help="also write the report as JSON")
    parser.add_argument("--concurrency", type=int, default=2, help="judge calls in flight (default 2)")
    parser.add_argument("--fit", metavar="FILE",
                        help="calibrated judge: fit decision rules on the dev split and write them to FILE")
    parser.add_argument("--quiet", action="store_true", help="no progress bar or table")


def _judge(spec: str, concurrency: int) -> Any:
    from vocalbench.components import resolve_evaluator
    from vocalbench.components.base import ComponentUnavailable

    try:
        return resolve_evaluator("judge", spec, concurrency=concurrency)
    except ComponentUnavailable as exc:
        raise CliError(f"--judge {spec}: {exc}") from exc


def run(args: argparse.Namespace) -> int:
    from vocalbench.components.calibration import CalibrationItem, load_items
    from vocalbench.scoring import judge_check

    if args.concurrency < 1:
        raise CliError(f"--concurrency must be >= 1, got {args.concurrency}")
    split = "dev" if args.fit else args.split
    try:
        items = load_items(split, [r.strip() for r in args.rubrics.split(",") if r.strip()] if args.rubrics else None)
    except ValueError as exc:
        raise CliError(str(exc)) from exc
    if args.lang:
        items = [i for i in items if i.lang == args.lang]
    if args.limit is not None:
        if args.limit < 1:
            raise CliError(f"--limit must be >= 1, got {args.limit}")
        per_family: dict[str, list[CalibrationItem]] = {}
        for item in items:
            per_family.setdefault(item.family, []).append(item)
        items = [i for fam_items in per_family.values() for i in fam_items[: args.limit]]
    if not items:
        raise CliError("no calibration items match --split/--rubrics/--lang")
    judge = _judge(args.judge, args.concurrency)
    if args.fit and not hasattr(judge, "calibration"):
        raise CliError(f"--fit needs a calibrated judge (local); {judge.id} answers verdicts directly")

    from vocalbench.progress import progress_bar

    t0 = time.perf_counter()
    with progress_bar(len(items), f"judge-check {judge.id} ({split})", enabled=not args.quiet) as bar:
        outcomes = asyncio.run(judge_check.judge_items(judge, items, concurrency=args.concurrency,
                                                       progress=bar.advance))
    report = judge_check.summarise(judge.id, split, outcomes, time.perf_counter() - t0)
    if args.fit:
        from vocalbench.scoring.calibration_fit import fit_rules

        cal = fit_rules(judge.calibration, outcomes)
        write_atomic(args.fit, cal.to_json())
        print(f"fitted {len(cal.families)} families on {len(items)} dev items -> {args.fit} (version {cal.version})")
    elif split == "test":
        path = judge_check.save_check(report)
        if not args.quiet:
            print(f"kept as {judge.id}'s latest check: {path}")
    if args.out:
        write_json(args.out, report)
    if not args.quiet:
        _print(report)
    return 0


def _print(report: dict[str, Any]) -> None:
    from rich.console import Console
    from rich.table import Table

    def f(x: Any, nd: int = 3) -> str:
        return "-" if x is None else f"{x:.{nd}f}" if isinstance(x, float) else str(x)

    table = Table(title=f"judge-check: {report['judge']} on the {report['split']} split "
                        f"({report['n']} items, {report['calls']} calls, {f(report['calls_per_second'])} calls/s)")
    for col in ("family", "n", "agree", "kappa / rho", "judge vs label", "bias / mean diff", "MAE", "unparseable",
                "validated"):
        table.add_column(col, justify="left" if col == "family" else "right")
    for fam, v in report["families"].items():
        if v["kind"] == "binary":
            row = [f(v["agreement"]), f"κ {f(v['kappa'])}", f"{f(v['judge_positive_rate'], 1)}% vs "
                   f"{f(v['label_positive_rate'], 1)}%", f"{f(v['bias'], 1)} pt", "-"]
        else:
            row = [f(v["agreement"]), f"ρ {f(v['spearman'])}", f"{f(v['judge_mean'], 2)} vs {f(v['label_mean'], 2)}",
                   f(v["mean_diff"], 2), f(v["mae"], 2)]
        table.add_row(fam, str(v["n"]), *row, str(v["unparseable"]), "yes" if v["validated"] else "NO")
    console = Console()
    if not console.is_terminal:  # a file or pipe: keep the table on one line per family
        console.width = 140
    console.print(table)
