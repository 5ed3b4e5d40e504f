"""``vocalbench agreement --human FILE RUN [--judge-b RUN2]``: judge vs human (and judge vs judge).

Human ratings CSV (UTF-8, header row), one row per rater decision:
  score mode:    sample_id,subset,rater_id,score
  pairwise mode: sample_id,subset,rater_id,pair_id,choice   (choice A = RUN's reply, B = --pair-run's)
"""

from __future__ import annotations

import argparse

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


def run(args: argparse.Namespace) -> int:
    from vocalbench.report.agreement import AgreementError, HumanCsvError, agreement_report
    from vocalbench.runner.folder import RunFolderError

    try:
        agreement_report(args.run, args.human, args.pair_run, args.judge_b, args.out, show=not args.quiet)
    except (AgreementError, HumanCsvError, RunFolderError) as exc:
        raise CliError(str(exc)) from exc
    return 0
