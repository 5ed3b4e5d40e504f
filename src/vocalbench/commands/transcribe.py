"""``vocalbench transcribe FILE... [--asr SPEC] [--lang en|zh]``: one JSON line per file."""

from __future__ import annotations

import argparse


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("files", nargs="+", metavar="FILE", help="audio files")
    parser.add_argument("--asr", default="offline", help="ASR SPEC: offline (default), paper[:PATH], whisper-large-v3")
    parser.add_argument("--lang", choices=["en", "zh", "auto"], default="auto",
                        help="force the language (default: auto-detect)")
    parser.add_argument("--vad", action="store_true", help="trim silence with VAD before decoding")
    parser.add_argument("--no-cache", action="store_true", help="do not use or fill the result cache")


def run(args: argparse.Namespace) -> int:
    from vocalbench.commands._tools import run_tool
    from vocalbench.components.cache import cached_transcribe

    lang = None if args.lang == "auto" else args.lang
    return run_tool("asr", args.asr, args.files, no_cache=args.no_cache,
                    call=lambda asr: asr.transcribe(args.files, lang),
                    cached=lambda asr: cached_transcribe(asr, args.files, lang),
                    payload=lambda asr, t: {"text": t.text, "language": t.language},
                    **({"vad": True} if args.vad else {}))
