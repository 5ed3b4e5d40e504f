"""``vocalbench emotion FILE... [--emotion SPEC]``: one JSON line per file with the
classifier's distribution (the five emotions and, for emotion2vec, ``unknown``)."""

from __future__ import annotations

import argparse


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from vocalbench.commands._tools import add_tool_arguments

    add_tool_arguments(parser, "emotion", "emotion SPEC: paper:PATH (emotion2vec_plus_large folder); offline has no model")


def run(args: argparse.Namespace) -> int:
    from vocalbench.commands._tools import run_tool
    from vocalbench.components.cache import cached_emotion

    return run_tool("emotion", args.emotion, args.files, no_cache=args.no_cache,
                    call=lambda clf: clf.classify(args.files), cached=lambda clf: cached_emotion(clf, args.files),
                    payload=lambda clf, d: {"emotion": max(d, key=d.get),
                                            "probs": {k: round(v, 4) for k, v in d.items()}})
