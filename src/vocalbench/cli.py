"""Command line: parse flags, hand one validated config to the layers. Nothing else lives here.

Each sub-command is a module in ``vocalbench.commands`` with ``add_arguments(parser)`` and
``run(args) -> int``; modules are imported only for the command being run.
"""

from __future__ import annotations

import argparse
import errno
import importlib
import logging
import os
import sys

from vocalbench.errors import DISK_FULL_HINT, CliError, InputError, one_line

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
    "judge-fit": ("judge_fit", "fit a calibrated judge's decision rules on the calibration set's dev split"),
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
    parser.add_argument("-v", "--verbose", action="store_true",
                        help="also show other libraries' warnings and debug lines (quiet by default)")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    given = next((a for a in argv if not a.startswith("-")), None)  # the command (after -v, if given)
    for name, (module, help_text) in COMMANDS.items():
        p = sub.add_parser(name, help=help_text, description=help_text)
        p.set_defaults(_module=module)
        if given == name:
            importlib.import_module(f"vocalbench.commands.{module}").add_arguments(p)
    return parser


# libraries that log through handlers of their own, with their own levels (jieba: DEBUG, twice)
OWN_HANDLERS = ("jieba",)


class _Quiet(logging.Filter):
    """Let through vocalbench's records and other libraries' errors (everything with ``-v``)."""

    def __init__(self, verbose: bool) -> None:
        super().__init__()
        self.verbose = verbose

    def filter(self, record: logging.LogRecord) -> bool:
        if self.verbose:
            return True
        if _closed_loop_leftover(record):
            return False
        return record.levelno >= logging.ERROR or record.name == "vocalbench" or record.name.startswith("vocalbench.")


def _closed_loop_leftover(record: logging.LogRecord) -> bool:
    """asyncio's report of an HTTP client of an event loop that has ended, closed when it is
    garbage-collected under a later loop ("Event loop is closed"): harmless, nothing to act on."""
    exc = record.exc_info[1] if record.exc_info else None
    return record.name == "asyncio" and isinstance(exc, RuntimeError) and str(exc) == "Event loop is closed"


def _configure_logging(verbose: bool) -> None:
    """Library modules log through ``logging``; the command line shows vocalbench's warnings on
    stderr (``VOCALBENCH_LOG=info`` or ``debug`` for more) and other libraries' errors only, their
    warnings (the phonemizer's "words count mismatch" on every sentence, Python warnings) and
    debug lines (jieba) too with ``-v``."""
    level = os.environ.get("VOCALBENCH_LOG", "warning").upper()
    root = logging.getLogger()
    for old in [h for h in root.handlers if any(isinstance(f, _Quiet) for f in h.filters)]:
        root.removeHandler(old)  # an earlier command's, in this process
    handler = logging.StreamHandler()  # sys.stderr as it is now: the redacted console
    handler.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s"))
    handler.addFilter(_Quiet(verbose))
    root.addHandler(handler)
    root.setLevel(logging.DEBUG if verbose else logging.WARNING)
    logging.getLogger("vocalbench").setLevel(getattr(logging, level, logging.WARNING))
    logging.captureWarnings(True)  # Python warnings as records of "py.warnings": quiet unless -v
    for name in OWN_HANDLERS:
        logging.getLogger(name).disabled = not verbose


def main(argv: list[str] | None = None) -> int:
    """Run one command; every line it prints goes through :func:`vocalbench.redact.redact`."""
    from vocalbench.redact import redacted_console

    with redacted_console():
        return _main(sys.argv[1:] if argv is None else argv)


def _main(argv: list[str]) -> int:
    parser = build_parser(argv)
    args = parser.parse_args(argv)
    _configure_logging(args.verbose)
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
    except (CliError, InputError, OSError) as exc:
        return _fail(_reason(exc))
    except BaseExceptionGroup as group:  # concurrent work (generation): its first user-facing failure
        found = group.subgroup(lambda e: isinstance(e, (CliError, InputError, OSError)))
        if found is None:
            raise
        first: BaseException = found
        while isinstance(first, BaseExceptionGroup):
            first = first.exceptions[0]
        return _fail(_reason(first))


def _reason(exc: BaseException) -> str:
    """The one line of a user-facing failure; an OSError (a folder that is a file, a read-only
    folder, a full disk) names its file and what to do about a full disk."""
    if not isinstance(exc, OSError):
        return str(exc)
    where = f"{exc.filename}: " if exc.filename else ""
    hint = f"; {DISK_FULL_HINT}" if exc.errno == errno.ENOSPC else ""
    return f"{where}{exc.strerror or exc}{hint}"


def _fail(message: str) -> int:
    """Print a one-line error (redacted as every console line); exit status 2."""
    print(f"error: {one_line(message)}", file=sys.stderr)
    return 2


if __name__ == "__main__":
    raise SystemExit(main())
