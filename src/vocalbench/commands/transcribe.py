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
    from vocalbench.commands._tools import emit, emit_unavailable, resolve_or_exit
    from vocalbench.components.base import ComponentUnavailable
    from vocalbench.components.cache import cached_transcribe

    asr = resolve_or_exit("asr", args.asr, **({"vad": True} if args.vad else {}))
    lang = None if args.lang == "auto" else args.lang
    try:
        results = asr.transcribe(args.files, lang) if args.no_cache else cached_transcribe(asr, args.files, lang)
    except ComponentUnavailable as exc:
        return emit_unavailable(args.files, exc)
    return emit(args.files, results, lambda t: {"text": t.text, "language": t.language})
