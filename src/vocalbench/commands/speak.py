"""``vocalbench speak TEXT --out FILE [--tts SPEC] [--lang en|zh] [--voice V] [--speed S]``."""

from __future__ import annotations

import argparse
import json


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("text", metavar="TEXT", help="what to say")
    parser.add_argument("--out", required=True, metavar="FILE", help="WAV file to write")
    parser.add_argument("--tts", default="offline", help="TTS SPEC: offline (Kokoro, default), openai:MODEL[@URL]")
    parser.add_argument("--lang", choices=["en", "zh"], default="en")
    parser.add_argument("--voice", default=None, help="voice name (default: the engine's default for --lang)")
    parser.add_argument("--speed", type=float, default=1.0, help="speaking rate, 0.5..2.0")


def run(args: argparse.Namespace) -> int:
    from vocalbench.audio import write
    from vocalbench.commands._tools import resolve_or_exit
    from vocalbench.components.base import ComponentUnavailable
    from vocalbench.errors import CliError

    tts = resolve_or_exit("tts", args.tts)
    try:
        samples, sr = tts.synthesize(args.text, args.lang, voice=args.voice, speed=args.speed)
    except (ValueError, ComponentUnavailable, RuntimeError) as exc:
        raise CliError(f"speak: {exc}") from exc
    path = write(args.out, samples, sr)
    line = {"file": str(path), "seconds": round(len(samples) / sr, 3), "sample_rate": sr,
            "voice": args.voice or tts.voices(args.lang)[0], "tts": tts.id}
    print(json.dumps(line, ensure_ascii=False))
    return 0
