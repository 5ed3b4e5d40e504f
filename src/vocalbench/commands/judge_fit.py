"""``vocalbench judge-fit --judge SPEC --out FIT``: fit a calibrated judge's decision rules.

Works for any judge whose endpoint returns log-probabilities: the local server with a packaged
model or any GGUF (``local``, ``gguf:PATH``), vLLM or another OpenAI-compatible endpoint
(``openai:MODEL@URL``). On the calibration set's dev split only: the model's answers are read from
recorded files (``--answers``; for a packaged local model the shipped ones) and asked for the rest
(appended to ``--collect``, default under the cache, so an interrupted fit resumes); items a
settling grader decides need no answer. ``--no-model`` fits from the graders and the recorded
answers alone. Then ``--judge SPEC --fit FIT`` uses the fit in ``run``, ``score`` and ``judge-check``.
"""

from __future__ import annotations

import argparse
import asyncio
from pathlib import Path
from typing import Any

from vocalbench.errors import CliError
from vocalbench.judge.calibration import CalibrationItem


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--judge", default="local", metavar="SPEC",
                        help="judge to fit: local (default), gguf:PATH, openai:MODEL@URL (an endpoint with top_logprobs)")
    parser.add_argument("--out", required=True, metavar="FIT", help="where to write the fit (JSON)")
    parser.add_argument("--answers", action="append", default=[], metavar="FILE",
                        help="recorded raw answers (JSONL; repeatable; default: the shipped ones and --collect's)")
    parser.add_argument("--collect", metavar="FILE",
                        help="append the answers asked now to FILE (default: <cache>/judge_answers/<model>.jsonl)")
    parser.add_argument("--no-model", action="store_true",
                        help="ask nothing: families without recorded answers get rules over the graders alone")
    parser.add_argument("--rubrics", metavar="LIST", help="comma-separated rubric ids or families (default: all)")
    parser.add_argument("--limit", type=int, metavar="N", help="at most N dev items per family (a quick try)")
    parser.add_argument("--quiet", action="store_true", help="no progress bar or table")


def answers_file(model: str, given: str | None) -> Path:
    """Where the answers asked now are appended (and read back from on the next fit or check)."""
    from vocalbench.config import cache_dir
    from vocalbench.judge.check import file_slug

    if given:
        return Path(given)
    return cache_dir() / "judge_answers" / f"{file_slug(model)}.jsonl"


def recorded(model: str, given: list[str], collect: Path) -> dict[str, dict[str, Any]]:
    """Every recorded answer of ``model``: the files given (else the shipped ones) and ``collect``."""
    from vocalbench.judge.check import recorded_answers

    try:
        found = recorded_answers(model, [Path(p) for p in given])
        if collect.is_file():
            found.update(recorded_answers(model, [collect]))
    except (OSError, ValueError) as exc:
        raise CliError(str(exc)) from None
    return found


def per_family(items: list[CalibrationItem], limit: int) -> list[CalibrationItem]:
    """The first ``limit`` items of each family."""
    kept: dict[str, list[CalibrationItem]] = {}
    for item in items:
        kept.setdefault(item.family, []).append(item)
    return [i for fam in kept.values() for i in fam[:limit]]


def calibrated_judge(spec: str, fit: str, concurrency: int = 1) -> Any:
    """The calibrated judge of SPEC under ``fit`` (CliError for a judge that cannot be calibrated)."""
    from vocalbench.components import resolve_evaluator
    from vocalbench.components.base import ComponentUnavailable

    try:
        judge = resolve_evaluator("judge", spec, fit=fit, concurrency=concurrency, lazy=True)
    except ComponentUnavailable as exc:
        raise CliError(f"--judge {spec}: {exc}") from exc
    if not hasattr(judge, "calibration"):
        raise CliError(f"--judge {spec} writes its verdicts itself; a fit needs a calibrated judge")
    return judge


def run(args: argparse.Namespace) -> int:
    from vocalbench.files import write_atomic
    from vocalbench.judge import check as judge_check
    from vocalbench.judge import fit as calibration_fit
    from vocalbench.judge.calibration import load_items
    from vocalbench.judge.factory import UNFITTED
    from vocalbench.progress import progress_bar

    judge = calibrated_judge(args.judge, UNFITTED)
    model = judge.calibration.model
    try:
        dev = load_items("dev", [r.strip() for r in args.rubrics.split(",") if r.strip()] if args.rubrics else None)
    except ValueError as exc:
        raise CliError(str(exc)) from exc
    if args.limit is not None:
        if args.limit < 1:
            raise CliError(f"--limit must be >= 1, got {args.limit}")
        dev = per_family(dev, args.limit)
    collect = answers_file(model, args.collect)
    answers = recorded(model, args.answers, collect)
    missing = [it for it in calibration_fit.needing_the_model(dev, load_items("dev")) if it.id not in answers]
    if missing and not args.no_model:
        collect.parent.mkdir(parents=True, exist_ok=True)
        with progress_bar(len(missing), f"asking {model} ({len(answers)} answers recorded)",
                          enabled=not args.quiet) as bar:
            answers.update(asyncio.run(judge_check.collect_answers(judge, missing, collect, progress=bar.advance)))
    cal, records = calibration_fit.fit_rules(model, calibration_fit.dev_items(dev, answers))
    write_atomic(args.out, cal.to_json())
    if not args.quiet:
        _print(records)
        print(f"fitted {len(cal.families)} families on {len(dev)} dev items -> {args.out} ({cal.version}); "
              f"check it: vocalbench judge-check --judge {args.judge} --fit {args.out}")
    return 0


def _print(records: dict[str, dict[str, object]]) -> None:
    from rich.console import Console
    from rich.table import Table

    table = Table(title="judge-fit: the rule chosen per family (dev split, 5-fold CV by question)")
    for col in ("family", "settles", "settled (agreement)", "rest", "features", "CV loss ± SE"):
        table.add_column(col, justify="left" if col in ("family", "features") else "right")
    for fam, rec in records.items():
        cv = rec.get("cv")
        loss = " ".join(f"{k} {v['loss']:.3f}±{v['se']:.3f}" for k, v in cv.items()) if isinstance(cv, dict) else ""
        table.add_row(fam, "yes" if rec["settle"] else "no", f"{rec['settled_dev']} ({rec['settled_agreement']})",
                      str(rec["rest_dev"]), str(rec["features"]), loss or "-")
    console = Console()
    if not console.is_terminal:
        console.width = 160
    console.print(table)
