"""``vocalbench mos FILE... [--mos SPEC]``: one JSON line per file with its MOS."""

from __future__ import annotations

import argparse


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from vocalbench.commands._tools import add_tool_arguments

    add_tool_arguments(parser, "mos", "MOS SPEC: offline (DistillMOS, default), dnsmos, paper[:PATH] (UTMOS22 strong)")


def run(args: argparse.Namespace) -> int:
    from vocalbench.commands._tools import run_tool
    from vocalbench.components.cache import cached_mos

    return run_tool("mos", args.mos, args.files, no_cache=args.no_cache,
                    call=lambda model: model.score(args.files), cached=lambda model: cached_mos(model, args.files),
                    payload=lambda model, v: {"mos": round(v, 4), "model": model.id})
