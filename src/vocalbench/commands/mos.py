"""``vocalbench mos FILE... [--mos SPEC]``: one JSON line per file with its MOS."""

from __future__ import annotations

import argparse


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("files", nargs="+", metavar="FILE", help="audio files")
    parser.add_argument("--mos", default="offline",
                        help="MOS SPEC: offline (DistillMOS, default), dnsmos, paper[:PATH] (UTMOS22 strong)")
    parser.add_argument("--no-cache", action="store_true", help="do not use or fill the result cache")


def run(args: argparse.Namespace) -> int:
    from vocalbench.commands._tools import emit, emit_unavailable, resolve_or_exit
    from vocalbench.components.base import ComponentUnavailable
    from vocalbench.components.cache import cached_mos

    model = resolve_or_exit("mos", args.mos)
    try:
        results = model.score(args.files) if args.no_cache else cached_mos(model, args.files)
    except ComponentUnavailable as exc:
        return emit_unavailable(args.files, exc)
    return emit(args.files, results, lambda v: {"mos": round(v, 4), "model": model.id})
