"""``vocalbench build``: text items -> verified spoken test set; ``build review``; ``build perturb``.

    vocalbench build --items ITEMS --out DATA [--tts SPEC] [--asr SPEC] [--voices V,...] [--seed N]
                     [--max-attempts N] [--workers N] [--lang en|zh] [--perturb [--robust-conditions all|mini]]
    vocalbench build review  --data DATA [--accept ID ...] [--reject ID ...] [--attempt N] [--list]
    vocalbench build perturb --data DATA [--subset robust] [--noise DIR] [--seed N] [--robust-conditions all|mini]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from vocalbench.commands.lists import add_subsets


def _floats(text: str) -> list[float]:
    try:
        return [float(x) for x in text.split(",") if x.strip()]
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"expected comma-separated numbers, got '{text}'") from exc


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from vocalbench.construct.perturb import CONDITION_SETS, perturbed_subset

    target = perturbed_subset()

    conditions_help = ("robust conditions to generate: all (the 36 of the release, default) or mini "
                       "(the 6 headline conditions + the mildest level of each family, 12)")
    parser.add_argument("--items", help="items JSONL (schema in docs/build.md) or an official release/json folder")
    parser.add_argument("--out", help="output folder (official layout: json/, audio/)")
    parser.add_argument("--lang", choices=["en", "zh"], help="language to build (needed when items mix both)")
    add_subsets(parser, "subsets to take from ITEMS (default: all)")
    parser.add_argument("--limit", type=int, help="official input: at most N items per subset")
    parser.add_argument("--tts", default="offline", help="TTS SPEC (default offline: Kokoro)")
    parser.add_argument("--asr", default="offline", help="ASR SPEC for verification (default offline: Whisper base)")
    parser.add_argument("--mos", default="none", help="MOS SPEC for the voice-pool filter (default none: skipped)")
    parser.add_argument("--emotion", default="none", help="emotion SPEC for the emotion gate (default none: skipped)")
    parser.add_argument("--voices", help="comma-separated voice names (default: every voice the TTS offers)")
    parser.add_argument("--speeds", type=_floats, default=[1.0, 0.9, 1.1], help="speed pool (default 1.0,0.9,1.1)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--max-attempts", type=int, default=4, help="syntheses per record before review (default 4)")
    parser.add_argument("--workers", type=int, default=1, help="items processed in parallel (threads)")
    parser.add_argument("--max-wer", type=float, default=0.10, help="en: largest accepted WER (default 0.10)")
    parser.add_argument("--max-cer", type=float, default=0.15, help="zh: largest accepted CER (default 0.15)")
    parser.add_argument("--max-mer", type=float, default=0.25, help="code-switched: largest accepted mixed error")
    parser.add_argument("--homophones", action="store_true", help="zh: compare toneless pinyin (homophone-tolerant)")
    parser.add_argument("--top-share", type=float, default=0.6, help="share of best voices for clarity-critical subsets")
    parser.add_argument("--low-share", type=float, default=0.5,
                        help="share of the lower-ranked voices added for conversational subsets")
    parser.add_argument("--perturb", action="store_true", help="also generate the robust conditions afterwards")
    parser.add_argument("--noise", help="noise folder for background_noise (with --perturb)")
    parser.add_argument("--robust-conditions", choices=sorted(CONDITION_SETS), default="all",
                        help=f"with --perturb: {conditions_help}")
    parser.add_argument("--quiet", action="store_true", help="no progress bars")
    sub = parser.add_subparsers(dest="build_action", metavar="ACTION")
    rv = sub.add_parser("review", help="accept or reject queued items", description="accept or reject queued items")
    rv.add_argument("--data", required=True, help="a built folder")
    rv.add_argument("--accept", action="append", default=[], metavar="ID", help="accept an item (repeatable)")
    rv.add_argument("--reject", action="append", default=[], metavar="ID", help="reject an item (repeatable)")
    rv.add_argument("--attempt", type=int, help="with --accept: use this attempt instead of the best one")
    rv.add_argument("--note", default="", help="a note stored with the decision")
    rv.add_argument("--list", action="store_true", help="list the queue and exit")
    pt = sub.add_parser("perturb", help=f"generate the {target.name} conditions from {target.control}",
                        description=f"generate the {target.name} conditions (36, or a selection) from {target.control}")
    pt.add_argument("--data", required=True, help=f"a built folder holding json/{target.control}.json")
    pt.add_argument("--subset", default=target.name, choices=[target.name], help="the subset to generate")
    pt.add_argument("--noise", help="folder of noise recordings for background_noise (default: synthetic babble)")
    pt.add_argument("--seed", type=int, default=0)
    pt.add_argument("--lang", choices=["en", "zh"], help="level naming (default: from the build manifest)")
    pt.add_argument("--robust-conditions", choices=sorted(CONDITION_SETS), default="all", help=conditions_help)
    pt.add_argument("--quiet", action="store_true")


def run(args: argparse.Namespace) -> int:
    from vocalbench.errors import CliError

    try:
        if args.build_action == "review":
            return _review(args)
        if args.build_action == "perturb":
            return _perturb(args.data, args.noise, args.seed, args.lang, args.quiet, args.robust_conditions)
        return _build(args)
    except (FileNotFoundError, ValueError, RuntimeError) as exc:
        raise CliError(str(exc)) from exc


def _build(args: argparse.Namespace) -> int:
    from vocalbench.config import is_off
    from vocalbench.construct.perturb import perturbed_subset
    from vocalbench.construct.pipeline import BuildOptions, build_from_items, build_result
    from vocalbench.errors import CliError

    if not args.items or not args.out:
        raise CliError("build needs --items ITEMS and --out DATA (or an action: review, perturb)")
    opts = BuildOptions(
        tts=args.tts, asr=args.asr, mos=None if is_off(args.mos) else args.mos,
        emotion=None if is_off(args.emotion) else args.emotion,
        voices=[v.strip() for v in args.voices.split(",")] if args.voices else None, speeds=args.speeds,
        seed=args.seed, max_attempts=args.max_attempts, workers=max(1, args.workers),
        max_error={"en": args.max_wer, "zh": args.max_cer, "mixed": args.max_mer}, homophones=args.homophones,
        top_share=args.top_share, low_share=args.low_share, progress=not args.quiet)
    subsets = args.subsets
    manifest = build_from_items(args.items, args.out, opts, lang=args.lang, subsets=subsets, limit=args.limit)
    result = build_result(manifest, args.out)
    print(json.dumps(result, ensure_ascii=False))
    if result["queued"]:
        print(f"{result['queued']} item(s) wait in {Path(args.out) / 'review.jsonl'}: "
              f"vocalbench build review --data {args.out}", file=sys.stderr)
    if args.perturb and perturbed_subset().control in manifest["counts"]:
        _perturb(args.out, args.noise, args.seed, manifest["build"]["lang"], args.quiet, args.robust_conditions)
    return 0


def _perturb(data: str, noise: str | None, seed: int, lang: str | None, quiet: bool, selection: str) -> int:
    from vocalbench.construct.perturb import perturb_release

    print(json.dumps(perturb_release(data, lang=lang, noise_dir=noise, seed=seed, progress=not quiet,
                                     selection=selection)))
    return 0


def _review(args: argparse.Namespace) -> int:
    from vocalbench.construct import review

    root = Path(args.data)
    queue = review.pending(root)  # fails clearly when DATA holds no build
    if args.list:
        for e in queue:
            print(review.describe(e))
        print(f"{len(queue)} pending", file=sys.stderr)
        return 0
    if args.accept or args.reject:
        for decision in review.apply_decisions(root, args.accept, args.reject, attempt=args.attempt, note=args.note):
            print(json.dumps(decision))
        return 0
    if not sys.stdin.isatty():
        from vocalbench.errors import CliError

        raise CliError("interactive review needs a terminal; use --accept ID / --reject ID / --list")
    print(json.dumps(review.interactive(root)))
    return 0
