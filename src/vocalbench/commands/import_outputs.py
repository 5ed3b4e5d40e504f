"""``vocalbench import``: precomputed model outputs -> a run folder ready for ``vocalbench score``.

``--format official`` reads the official output layout::

    OUTPUTS/json/<subset>.json       JSON list or JSONL of {"question_id"|"Qid", "prediction"|"Response"}
    OUTPUTS/json_asr/<subset>.json   optional: adds "asr_pred"|"Response_hyp" (transcript of the audio)
    OUTPUTS/wav/<subset>/<qid>.wav   or flat OUTPUTS/wav/<qid>.wav (zh)

with the quirks of real releases: ``json/instruction.json`` holds instruction_following, en
single_round ids ``chat-NNN`` map by index to ``single_round-NNN`` (any id not in the data whose
trailing number is a list index maps the same way, and the original id is kept in
``Reply.extra``), and the outputs' own ``answer`` fields are ignored (references always come from
the data). ``--format jsonl`` reads this project's own format: one JSON object per line::

    {"subset": "knowledge", "id": "knowledge-0000", "text": "...", "audio": "wav/x.wav",
     "asr_text": null, "audio_duration": null, "error": null,
     "timings": {"first_audio": 0.31, "last_chunk": 2.4}}

(``audio`` relative to the JSONL file's folder; ``error`` a string type such as ``timeout``;
``timings`` in seconds from the request). ``--outputs`` is a .jsonl file or a folder of them.

Every sample of an imported subset gets a reply: one without an output record is stored as
``Reply(error=missing_reply)`` (a system failure), never dropped. A malformed file is reported
with its name (and line for JSONL); the other files are still imported and nothing already in
the run is lost. Re-importing a changed reply drops that subset's stale scores.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from vocalbench.commands.lists import add_subsets

EPILOG = """formats:
  official  OUTPUTS/json/<subset>.json (JSON list or JSONL of {question_id|Qid, prediction|Response}),
            optional OUTPUTS/json_asr/<subset>.json (asr_pred|Response_hyp), audio OUTPUTS/wav/<subset>/<qid>.wav
            or OUTPUTS/wav/<qid>.wav; json/instruction.json = instruction_following; chat-NNN ids map by index
  jsonl     one object per line: {"subset", "id", "text", "audio" (path relative to the file), "asr_text",
            "audio_duration", "error" (type string), "timings": {"first_audio", "last_chunk", ...} (seconds)}
  fdb       Full-Duplex-Bench recordings: folders (any depth) with input.wav, output.wav and pause.json |
            turn_taking.json | interrupt.json (none under a *backchannel* folder); output.json words used when present
  replays   our replay folders: scenarios.jsonl + <scenario>/r<k>/{input,output}.wav (a duplex run's duplex/)
Items of an imported subset without an output are recorded as missing replies (system errors).
fdb and replays make a duplex run (docs/duplex.md); `vocalbench score OUT` measures it."""


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.epilog = EPILOG
    p.formatter_class = argparse.RawDescriptionHelpFormatter
    p.add_argument("--format", choices=["official", "jsonl", "fdb", "replays"], default="official")
    p.add_argument("outputs_dir", nargs="?", default=None, metavar="DIR", help="same as --outputs")
    p.add_argument("--outputs", default=None, help="official outputs folder (json/, json_asr/, wav/), our JSONL, "
                                                   "or a folder of duplex recordings (fdb, replays)")
    p.add_argument("--data", default=None, help="the release the outputs answer (folder or 'mini'; not for fdb, replays)")
    p.add_argument("--lang", required=True, choices=["en", "zh"])
    p.add_argument("--out", required=True, help="run folder to create or update")
    p.add_argument("--system", default=None, help="system name recorded in config.json (default: outputs folder name)")
    add_subsets(p, "subsets to import (default: all found)")
    p.add_argument("--redo-changed", action="store_true",
                   help="importing into a run made with another version of the release: redo the changed samples "
                        "(without it the import refuses and names them)")
    p.add_argument("--quiet", action="store_true")


def run(args: argparse.Namespace) -> int:
    from vocalbench.data.official import DataError
    from vocalbench.errors import CliError
    from vocalbench.runner.imports import import_outputs

    subsets = args.subsets
    if (args.outputs is None) == (args.outputs_dir is None):
        raise CliError("give the outputs once: DIR or --outputs DIR")
    outputs = Path(args.outputs or args.outputs_dir)
    if not outputs.exists():
        raise CliError(f"{outputs}: no such outputs folder or file")
    if args.format in ("fdb", "replays"):
        return import_duplex(args, outputs)
    if args.data is None:
        raise CliError(f"--format {args.format} needs --data (the release the outputs answer)")
    try:
        stats = import_outputs(args.format, outputs, args.data, args.lang, Path(args.out), args.system, subsets,
                               args.redo_changed)
    except (DataError, ValueError) as exc:
        raise CliError(str(exc)) from exc
    if not args.quiet:
        for w in stats.warnings:
            print(f"warning: {w}", file=sys.stderr)
        for subset, c in stats.subsets.items():
            print(f"{subset}: {c['items']} items, {c['replies']} replies, {c['missing_reply']} missing, "
                  f"{c['empty_reply']} empty, {c['with_asr']} with ASR transcript, {c['with_audio']} with audio"
                  + (f", {c['remapped_ids']} ids mapped by index" if c["remapped_ids"] else ""))
    for e in stats.errors:
        print(f"error: {e}", file=sys.stderr)
    if not stats.subsets and not stats.errors:
        raise CliError(f"{outputs}: no output file matches a subset of the {args.lang} data")
    return 2 if stats.errors else 0


def import_duplex(args: argparse.Namespace, root: Path) -> int:
    """``--format fdb|replays``: the recordings under ``root`` as a duplex run in ``--out``."""
    from vocalbench.duplex.imports import RecordingError, import_recordings
    from vocalbench.duplex.run import add_scenarios
    from vocalbench.duplex.scenarios import MANIFEST, write_manifest
    from vocalbench.errors import CliError
    from vocalbench.run_config import RunConfig
    from vocalbench.runner.folder import RunFolder
    from vocalbench.systems.spec import SystemSpec

    out = Path(args.out)
    system = SystemSpec.read(args.system or root.resolve().name)
    with RunFolder(out) as folder:
        try:
            folder.check_resume(RunConfig(system=system, lang=args.lang))
            scenarios, replies = import_recordings(args.format, root, out, args.lang)
        except (RecordingError, ValueError) as exc:
            raise CliError(str(exc)) from exc
        repeats = max(int(r.sample_id.rpartition("/r")[2]) for r in replies)
        folder.save_config(RunConfig(system=system, lang=args.lang, subsets=["duplex"]),
                           {"duplex": {"set": f"imported ({args.format})", "repeats": repeats, "tail_s": 0.0,
                                       "turn_detection": None},
                            "imported_from": str(root.resolve()), "import_format": args.format})
        add_scenarios(folder.store, scenarios)
        folder.store.put_replies(replies)
        write_manifest(out / "duplex" / MANIFEST, scenarios)
    if not args.quiet:
        kinds = sorted({sc.kind for sc in scenarios})
        with_words = sum(1 for r in replies if "transcript" in r.extra)
        print(f"duplex: {len(scenarios)} scenario(s) ({', '.join(kinds)}), {len(replies)} recording(s), "
              f"{with_words} with a transcript; measure them with: vocalbench score {out}")
    return 0
