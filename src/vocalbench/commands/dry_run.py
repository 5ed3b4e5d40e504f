"""``run --dry-run`` / ``score --dry-run``: print the judge calls and tokens a pass would need, call nothing."""

from __future__ import annotations

import argparse
import asyncio
import json
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from vocalbench.records import Sample
    from vocalbench.run_config import RunConfig
    from vocalbench.runner.folder import RunFolder


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--dry-run", action="store_true",
                   help="print the judge calls each subset would make (cached ones excluded) and their estimated "
                        "tokens; call nothing, write nothing")
    p.add_argument("--judge-price", default=None, metavar="IN,OUT",
                   help="with --dry-run: prices per million prompt and completion tokens, for a cost estimate")
    p.add_argument("--json", action="store_true", help="with --dry-run: print the plan as JSON")


def price_of(args: argparse.Namespace) -> tuple[float, float] | None:
    from vocalbench.errors import CliError
    from vocalbench.judge.plan import parse_price

    if args.judge_price is None:
        return None
    try:
        return parse_price(args.judge_price)
    except ValueError as exc:
        raise CliError(str(exc)) from None


def show(cfg: RunConfig, *, args: argparse.Namespace, label: str, folder: RunFolder,
         samples: list[Sample] | None = None, subsets: list[str] | None = None) -> None:
    """Plan one language's judge calls (from its run folder's store when it has one) and print them."""
    from vocalbench.errors import CliError
    from vocalbench.scoring.plan import plan_judge

    price = price_of(args)
    try:
        store = folder.store if folder.has_store else None
        plan = asyncio.run(plan_judge(cfg, store=store, samples=samples, subsets=subsets))
    except ValueError as exc:
        raise CliError(str(exc)) from None
    if plan is None:
        print(f"[{label}] judge {cfg.judge}: no judge calls")
    elif args.json:
        print(json.dumps({"lang": label, **plan.to_dict(price)}, ensure_ascii=False))
    else:
        print(f"[{label}] {plan.table(price)}")
