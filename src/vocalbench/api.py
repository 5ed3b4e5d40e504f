"""The Python API: what ``vocalbench run`` and ``vocalbench score`` do, as functions (docs/api.md).

Each function builds the same arguments the command line would from its keyword options (one per
flag, named as the flag: ``--max-reply-tokens`` is ``max_reply_tokens``) and runs the command's own
code, so a script and the command line validate, resume and write run folders the same way::

    import vocalbench

    summary = vocalbench.evaluate(system="echo", data="mini", lang="en", subsets=["knowledge"],
                                  judge="none", out="runs/echo", limit=2)
    print(summary.overall.value, summary.dimensions["knowledge"])
    again = vocalbench.score("runs/echo", judge="local")   # re-score: only missing work is done
    same = vocalbench.load_summary("runs/echo")

Errors are exceptions (``vocalbench.errors.CliError`` for bad options, naming the option); nothing
is printed but progress bars (``quiet=False``) and the one-line notes a run writes to stderr.
"""

from __future__ import annotations

import argparse
import importlib
from pathlib import Path

from vocalbench.errors import CliError
from vocalbench.scoring.summary import Summary

Flag = str | int | float | bool | Path | list[str] | None  # a command-line flag's value (None: not given)


def evaluate(system: str = "offline", data: str = "mini", subsets: list[str] | str | None = None,
             judge: str | None = None, out: str | Path | None = None, *, lang: str = "en", quiet: bool = True,
             **options: Flag) -> Summary:
    """Generate one language's replies of ``system`` on ``data``, score them and write the run folder
    ``out`` with its report (as ``vocalbench run``); returns its summary. ``options``: any other flag
    of ``vocalbench run`` (``limit``, ``asr``, ``mos``, ``emotion``, ``protocol``, ``concurrency``, ...).
    Calling it again with the same ``out`` resumes."""
    from vocalbench.commands import run as command

    if lang not in ("en", "zh"):
        raise ValueError(f"lang must be 'en' or 'zh', got {lang!r} (one language per call)")
    args = _arguments("run", [], system=system, data=data, subsets=_names(subsets), judge=judge,
                      out=None if out is None else str(out), lang=lang, quiet=quiet, **options)
    outcome = command.execute(args, show=False)
    if len(outcome.summaries) != 1:
        raise CliError(f"the run stopped before scoring (exit status {outcome.status}); finished replies are kept "
                       "in the run folder")
    return next(iter(outcome.summaries.values()))


def score(run: str | Path, judge: str | None = None, subsets: list[str] | str | None = None, *, quiet: bool = True,
          **options: Flag) -> Summary:
    """(Re)score the run folder ``run`` (as ``vocalbench score``): only missing work is done. ``judge``
    and the other evaluator options (``asr``, ``mos``, ``emotion``, ``protocol``, ``fit``) update the
    run's config; returns the new summary."""
    from vocalbench.commands import score as command

    args = _arguments("score", [str(run)], judge=judge, subsets=_names(subsets), quiet=quiet, **options)
    if args.dry_run:
        raise ValueError("score(dry_run=True) returns nothing: use `vocalbench score RUN --dry-run`")
    summary = command.execute(args)
    assert summary is not None  # not a dry run
    return summary


def load_summary(run: str | Path) -> Summary:
    """The summary of a run folder (or of a ``summary.json`` path), validated."""
    from vocalbench.runner.folder import SUMMARY, RunFolderError

    path = Path(run)
    if path.is_dir():
        path = path / SUMMARY
    if not path.is_file():
        raise RunFolderError(f"{run}: no summary.json (run `vocalbench score {run}` first)")
    return Summary.load(path)


def _names(subsets: list[str] | str | None) -> list[str] | None:
    """``"a,b"`` or ``["a", "b"]`` as the list ``--subsets`` gives."""
    if subsets is None:
        return None
    names = subsets.split(",") if isinstance(subsets, str) else list(subsets)
    return list(dict.fromkeys(n.strip() for n in names if n.strip())) or None


def _arguments(command: str, positional: list[str], **given: Flag) -> argparse.Namespace:
    """The parsed flags of ``command`` with the defaults of the command line, updated by ``given``
    (None: not given); an option that is not one of the command's flags is a TypeError naming it."""
    from vocalbench.cli import COMMANDS

    parser = argparse.ArgumentParser(prog=f"vocalbench {command}", add_help=False)
    importlib.import_module(f"vocalbench.commands.{COMMANDS[command][0]}").add_arguments(parser)
    args = parser.parse_args(positional)
    unknown = sorted(k for k in given if not hasattr(args, k) or k == "run")
    if unknown:
        known = ", ".join(sorted(k for k in vars(args) if k != "run"))
        raise TypeError(f"{command}: unknown option(s) {', '.join(unknown)} (options: {known})")
    for key, value in given.items():
        if value is not None:
            setattr(args, key, value)
    return args
