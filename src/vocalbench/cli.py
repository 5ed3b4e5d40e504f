"""Command line: parse flags, hand one validated config to the layers. Nothing else lives here.

Each sub-command is a module in ``vocalbench.commands`` with ``add_arguments(parser)`` and
``run(args) -> int``; modules are imported only for the command being run.
"""

from __future__ import annotations

import argparse
import importlib
import logging
import os
import sys

from vocalbench.errors import CliError, InputError, one_line

__all__ = ["COMMANDS", "CliError", "build_parser", "main"]

COMMANDS: dict[str, tuple[str, str]] = {
    # name: (module in vocalbench.commands, one-line help)
    "run": ("run", "generate replies, score them and print the leaderboard"),
    "generate": ("generate", "generate replies only (resumable)"),
    "score": ("score", "(re)score a run folder; only missing work is done"),
    "import": ("import_outputs", "import precomputed outputs (official layout or our JSONL)"),
    "report": ("report", "write leaderboard, plots and the per-sample viewer"),
    "export": ("export", "per-item results of a run as JSONL or CSV"),
    "compare": ("compare", "paired bootstrap comparison of two runs"),
    "build": ("build", "construction pipeline: text items -> verified spoken test set"),
    "agreement": ("agreement", "judge vs human agreement statistics"),
    "judge-check": ("judge_check", "measure a judge against the labelled calibration set"),
    "serve": ("serve", "expose any system as an OpenAI-compatible audio endpoint"),
    "validate": ("validate", "check a data release (metadata and audio)"),
    "list": ("list_parts", "list systems, subsets or components"),
    "transcribe": ("transcribe", "ASR component tool (JSON lines out)"),
    "speak": ("speak", "TTS component tool"),
    "mos": ("mos", "MOS component tool (JSON lines out)"),
    "emotion": ("emotion", "emotion classifier component tool (JSON lines out)"),
}


def build_parser(argv: list[str]) -> argparse.ArgumentParser:
    from vocalbench._version import __version__

    parser = argparse.ArgumentParser(prog="vocalbench", description="Run the VocalBench benchmark end to end.")
    parser.add_argument("--version", action="version", version=f"vocalbench {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, (module, help_text) in COMMANDS.items():
        p = sub.add_parser(name, help=help_text, description=help_text)
        p.set_defaults(_module=module)
        if argv and argv[0] == name:
            importlib.import_module(f"vocalbench.commands.{module}").add_arguments(p)
    return parser


def _configure_logging() -> None:
    """Library modules log through ``logging``; the command line shows vocalbench's warnings on
    stderr (``VOCALBENCH_LOG=info`` or ``debug`` for more) and other libraries' errors only (the
    phonemizer, for one, warns on every Mandarin sentence)."""
    level = os.environ.get("VOCALBENCH_LOG", "warning").upper()
    logging.basicConfig(level=logging.ERROR, format="%(levelname)s %(name)s: %(message)s")
    logging.getLogger("vocalbench").setLevel(getattr(logging, level, logging.WARNING))


def main(argv: list[str] | None = None) -> int:
    """Run one command; every line it prints goes through :func:`vocalbench.redact.redact`."""
    from vocalbench.redact import redacted_console

    with redacted_console():
        return _main(sys.argv[1:] if argv is None else argv)


def _main(argv: list[str]) -> int:
    _configure_logging()
    parser = build_parser(argv)
    args = parser.parse_args(argv)
    if not getattr(args, "_module", None):
        parser.print_help()
        return 0
    from vocalbench.redact import env_credentials

    refused = env_credentials()
    if refused:  # base URLs from the environment are held to the rule of the flags
        return _fail(refused)
    command = importlib.import_module(f"vocalbench.commands.{args._module}")
    try:
        return int(command.run(args) or 0)
    except KeyboardInterrupt:
        print("interrupted; finished work is saved, re-run the same command to resume", file=sys.stderr)
        return 130
    except (CliError, InputError) as exc:
        return _fail(str(exc))
    except OSError as exc:  # a folder that is a file, a read-only folder, a full disk...
        where = f"{exc.filename}: " if exc.filename else ""
        return _fail(f"{where}{exc.strerror or exc}")


def _fail(message: str) -> int:
    """Print a one-line error (redacted as every console line); exit status 2."""
    print(f"error: {one_line(message)}", file=sys.stderr)
    return 2


if __name__ == "__main__":
    raise SystemExit(main())
