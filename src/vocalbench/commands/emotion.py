"""``vocalbench emotion FILE... [--emotion SPEC]``: one JSON line per file with the 5-class distribution."""

from __future__ import annotations

import argparse


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("files", nargs="+", metavar="FILE", help="audio files")
    parser.add_argument("--emotion", default="offline",
                        help="emotion SPEC: paper:PATH (emotion2vec_plus_large folder); offline has no model")
    parser.add_argument("--no-cache", action="store_true", help="do not use or fill the result cache")


def run(args: argparse.Namespace) -> int:
    from vocalbench.commands._tools import emit, emit_unavailable, resolve_or_exit
    from vocalbench.components.base import ComponentUnavailable
    from vocalbench.components.cache import cached_emotion

    clf = resolve_or_exit("emotion", args.emotion)
    try:
        results = clf.classify(args.files) if args.no_cache else cached_emotion(clf, args.files)
    except ComponentUnavailable as exc:
        return emit_unavailable(args.files, exc)
    return emit(args.files, results,
                lambda d: {"emotion": max(d, key=d.get), "probs": {k: round(v, 4) for k, v in d.items()}})
