"""``vocalbench judge-check``: measure a judge against the labelled calibration set.

Prints per rubric family: n, agreement, Cohen's kappa / Spearman rho, the judge's positive rate
beside the labels' (bias), mean difference and MAE, unparseable answers, and calls/s; ``--out``
writes the JSON. The figures of the test split are kept as the judge's latest check, which every
later run of that judge shows in its summary and report. ``--fit FIT`` checks a calibrated judge
under a fit from ``vocalbench judge-fit``. A calibrated judge reads the model's recorded answers
(shipped for the local judge, and those ``judge-fit`` collected) instead of asking again;
``--ask`` asks the model for every item. ``--stress`` adds the stress suite (judge/stress/): a
family is validated only when it passes both the agreement bar and the stress bar on the suite's
check wordings (``--stress-pool``: the design wordings are reported beside them), and the kept check
records both. An errored verdict counts as a failure in every figure; its count is printed beside it.
"""

from __future__ import annotations

import argparse
import asyncio
import time
from typing import TYPE_CHECKING, Any

from vocalbench.errors import CliError
from vocalbench.files import write_json

if TYPE_CHECKING:
    from vocalbench.judge.json_judge import Judge


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
    parser.add_argument("--fit", metavar="FIT", help="a fit from `vocalbench judge-fit` (a calibrated judge)")
    parser.add_argument("--answers", action="append", default=[], metavar="FILE",
                        help="recorded raw answers to read (JSONL; default: the shipped ones and judge-fit's)")
    parser.add_argument("--ask", action="store_true", help="ask the model for every item, recorded or not")
    parser.add_argument("--stress", action="store_true",
                        help="also run the stress suite (padded, off-topic, echoed, drifting, parroting, condensed, "
                             "tone-flipped replies); a family is validated only when it passes it")
    parser.add_argument("--stress-limit", type=int, metavar="N",
                        help="at most N transformed replies per family, transformation and wording pool (default: "
                             "--limit, else all; each may need a model call); a family cut short is a partial "
                             "run and is not validated")
    parser.add_argument("--stress-pool", choices=("design", "check", "both"), default="both",
                        help="which wordings the stress suite adds (default both, side by side); only the check "
                             "wordings validate")
    parser.add_argument("--quiet", action="store_true", help="no progress bar or table")


def _judge(spec: str, fit: str | None, concurrency: int) -> Judge:
    from vocalbench.components.base import ComponentUnavailable
    from vocalbench.judge.factory import build_judge
    from vocalbench.judge.spec import JudgeSpec

    try:
        # lazy: a local server starts on the first question (recorded answers and rules need none)
        return build_judge(JudgeSpec.parse(spec, fit), concurrency=concurrency, lazy=True)
    except (ComponentUnavailable, ValueError) as exc:
        raise CliError(f"--judge {spec}: {exc}") from exc


def run(args: argparse.Namespace) -> int:
    from vocalbench.commands.generate import fit_path
    from vocalbench.commands.judge_fit import answers_file, per_family, recorded
    from vocalbench.judge import check as judge_check
    from vocalbench.judge.calibration import load_items

    if args.concurrency < 1:
        raise CliError(f"--concurrency must be >= 1, got {args.concurrency}")
    try:
        items = load_items(args.split, [r.strip() for r in args.rubrics.split(",") if r.strip()] if args.rubrics else None)
    except ValueError as exc:
        raise CliError(str(exc)) from exc
    if args.lang:
        items = [i for i in items if i.lang == args.lang]
    every = items
    if args.limit is not None:
        if args.limit < 1:
            raise CliError(f"--limit must be >= 1, got {args.limit}")
        items = per_family(items, args.limit)
    if not items:
        raise CliError("no calibration items match --split/--rubrics/--lang")
    judge = _judge(args.judge, fit_path(args.fit), args.concurrency)
    answers = None
    if hasattr(judge, "calibration") and not args.ask:
        model = judge.calibration.model
        answers = recorded(model, args.answers, answers_file(model, None))

    from vocalbench.progress import progress_bar

    t0 = time.perf_counter()
    with progress_bar(len(items), f"judge-check {judge.id} ({args.split})", enabled=not args.quiet) as bar:
        outcomes = asyncio.run(judge_check.judge_items(judge, items, concurrency=args.concurrency,
                                                       progress=bar.advance, answers=answers))
    stress = None
    if args.stress:
        from vocalbench.judge import stress as judge_stress

        originals = {o.item.id: o.value for o in outcomes}
        limit = args.stress_limit if args.stress_limit is not None else args.limit
        if limit is not None and limit < 1:
            raise CliError(f"--stress-limit must be >= 1, got {limit}")
        pools = judge_stress.POOLS if args.stress_pool == "both" else (args.stress_pool,)
        with progress_bar(judge_stress.stress_count(every, originals, limit, pools),
                          f"stress suite {judge.id} ({args.split})", enabled=not args.quiet) as bar:
            stress, _ = asyncio.run(judge_stress.run_stress(judge, every, originals, limit=limit, pools=pools,
                                                            concurrency=args.concurrency, progress=bar.advance,
                                                            answers=answers))
    report = judge_check.summarise(judge.id, args.split, outcomes, time.perf_counter() - t0, stress)
    if args.split == "test":
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

    def f(x: float | str | None, nd: int = 3) -> str:
        return "-" if x is None else f"{x:.{nd}f}" if isinstance(x, float) else str(x)

    table = Table(title=f"judge-check: {report['judge']} on the {report['split']} split "
                        f"({report['n']} items: {report['decided_by']['grader']} settled by a grader, "
                        f"{report['decided_by']['rule']} by a fitted rule, {report['cached']} recorded answers, "
                        f"{report['calls']} model calls, {f(report['calls_per_second'])} calls/s)")
    for col in ("family", "n", "agree", "kappa / rho [95 % CI] (errored)", "judge vs label", "bias / mean diff",
                "model calls", "by reply source", "validated"):
        table.add_column(col, justify="left" if col in ("family", "by reply source") else "right")
    for fam, v in report["families"].items():
        binary = v["kind"] == "binary"
        stat, ci = ("kappa", v.get("kappa_ci95")) if binary else ("spearman", v.get("spearman_ci95"))
        interval = (f" [{ci[0]:.2f}, {ci[1]:.2f}]" if ci else "") + f" ({v.get('errored', 0)} errored)"
        if binary:
            row = [f(v["agreement"]), f"κ {f(v['kappa'], 2)}{interval}", f"{f(v['judge_positive_rate'], 1)}% vs "
                   f"{f(v['label_positive_rate'], 1)}%", f"{f(v['bias'], 1)} pt"]
        else:
            row = [f(v["agreement"]), f"ρ {f(v['spearman'], 2)}{interval}",
                   f"{f(v['judge_mean'], 2)} vs {f(v['label_mean'], 2)}", f(v["mean_diff"], 2)]
        sources = " ".join(f"{src} {f(fig.get(stat), 2)} ({fig['n']})" for src, fig in v.get("by_source", {}).items())
        table.add_row(fam, str(v["n"]), *row, str(v.get("model_calls", "-")), sources,
                      "yes" if v["validated"] else "NO")
    console = Console()
    if not console.is_terminal:  # a file or pipe: keep the table on one line per family
        console.width = 200
    console.print(table)
    stressed = {fam: v["stress"] for fam, v in report["families"].items() if "stress" in v}
    if stressed:
        from vocalbench.judge.stress import stress_line

        pools = [p for p in ("check", "design") if any(p in s.get("pools", {}) for s in stressed.values())]
        st = Table(title="stress suite: verdicts on transformed replies (binary in %; each bar on the whole 95 % "
                         "interval by question; errored verdicts count as failures; only the check wordings validate)")
        columns = ["family", "agreement bar", "stress bar", *(f"{p} wordings: value [95 % CI] (n, errors)" for p in pools),
                   "not applied", "validated"]
        for col in columns:
            st.add_column(col, justify="right" if col in ("agreement bar", "stress bar", "validated") else "left")
        for fam, s in stressed.items():
            v = report["families"][fam]
            st.add_row(fam, "yes" if v["agreement_validated"] else "no",
                       "yes" if s["passed"] else f"NO: {s.get('why', '')}", *(stress_line(s, p) for p in pools),
                       ", ".join(s.get("not_applied", {})), "yes" if v["validated"] else "NO")
        console.print(st)
        reasons = {f"{k}: {why}" for s in stressed.values() for k, why in s.get("not_applied", {}).items()}
        for line in sorted(reasons):
            console.print(f"  not applied, {line}")
