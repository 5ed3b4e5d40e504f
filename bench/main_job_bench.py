"""The main job's stage profile (not a test): ``vocalbench run --out RUN`` on the built-in mini set
with the offline cascade and the local judge, from a fresh cache (the mini set built on first use,
no cached judge verdicts), each stage timed, the orders side by side in one run.

    python bench/main_job_bench.py [--limit N] [--lang en|zh] [--sides sequential,default,pipelined]
                                   [--before TREE]

Sides (each in its own child process, one after the other, each with its own fresh cache folder
whose ``models/`` links to the assembled models, and its own llama.cpp server):
  sequential  one query at a time, the llama.cpp server decoding on two threads: the order before
              issue 29
  default     this tree's defaults (one query at a time, decoding on one thread)
  pipelined   ``--concurrency 3``: queries overlap across the cascade's stages (the next query's
              ASR and the previous reply's TTS while the LLM writes); latency items still alone
  before      (with ``--before TREE``) an earlier source tree's own defaults
Stages per language: build (first build of the mini set), generate, score; then the report.
Each stage's wall time, share of the job, and CPU seconds (this process and every process under
it, the llama.cpp server included) are printed with the ratio to the first side, and whether the
replies are the same text on every side (temperature 0: pipelining must not change them).
With ``--limit N`` (N base items per subset) it runs a smaller job of the same shape;
``--mini-from CACHE`` gives every side an already built mini set (the build stage then only
checks it); ``--work DIR --resume`` keeps the sides already finished in DIR.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from contextlib import ExitStack
from pathlib import Path
from typing import Any, TypeVar

T = TypeVar("T")
SIDES = ("sequential", "default", "pipelined")


def tree_cpu(pid: int) -> float:
    """CPU seconds (user + system) of process ``pid`` and every live process under it."""
    tick = os.sysconf("SC_CLK_TCK")
    total, todo, seen = 0.0, [pid], set()
    while todo:
        p = todo.pop()
        if p in seen:
            continue
        seen.add(p)
        try:
            fields = Path(f"/proc/{p}/stat").read_text().rsplit(")", 1)[1].split()
            total += (int(fields[11]) + int(fields[12])) / tick
            for task in Path(f"/proc/{p}/task").iterdir():
                todo += [int(c) for c in (task / "children").read_text().split()]
        except (OSError, IndexError, ValueError):
            continue
    return total


def run_side(out: Path, limit: int | None, concurrency: int | None, lang: str | None) -> dict[str, object]:
    """The main job's steps in this process (what ``vocalbench run`` does), each timed."""
    from vocalbench.cli import build_parser
    from vocalbench.commands import generate as gen
    from vocalbench.construct import mini
    from vocalbench.report.leaderboard import write_markdown
    from vocalbench.report.site import write_report
    from vocalbench.runner.folder import RunFolder
    from vocalbench.scoring.engine import score_run_sync

    argv = ["run", "--out", str(out), "--quiet"]
    argv += ["--limit", str(limit)] if limit else []
    argv += ["--concurrency", str(concurrency)] if concurrency else []
    argv += ["--lang", lang] if lang else []
    args = build_parser(argv).parse_args(argv)
    stages: list[dict[str, object]] = []

    def timed(name: str, fn: Callable[..., T], *a: Any, **k: Any) -> T:
        wall, cpu = time.monotonic(), tree_cpu(os.getpid())
        value = fn(*a, **k)
        stages.append({"stage": name, "wall": time.monotonic() - wall, "cpu": tree_cpu(os.getpid()) - cpu})
        return value

    t0 = time.monotonic()
    with ExitStack() as held:
        folders: list[tuple[str, RunFolder]] = []
        for job in gen.jobs_from_args(args):
            lang = job.cfg.lang
            timed(f"build {lang}", mini.ensure, lang, progress=False)
            folder = held.enter_context(RunFolder(job.run_dir))
            folders.append((lang, folder))
            code = timed(f"generate {lang}", gen.generate_job, job, args, folder)
            if code:
                raise SystemExit(f"generate {lang} ended with status {code}")
            timed(f"score {lang}", score_run_sync, folder, job.cfg, progress=False)
        timed("report", lambda: (write_markdown([f.path for _, f in folders], out / "leaderboard.md"),
                                 write_report([f for _, f in folders], out / "report")))
        # keyed by language, not by folder name: a one-language run's folder is named after its side
        replies = {f"{lang}/{s}/{i}": r.text for lang, f in folders for (s, i), r in f.store.replies().items()}
    summaries = {lang: json.loads((f.path / "summary.json").read_text()) for lang, f in folders}
    return {"stages": stages, "wall": time.monotonic() - t0, "replies": replies,
            "overall": {k: v["overall"] for k, v in summaries.items()}}


def fresh_cache(root: Path, mini_from: Path | None) -> Path:
    """A cache folder with the assembled models linked in and nothing else (no mini set, no
    verdicts), or with the mini set of cache folder ``mini_from`` linked in too."""
    from vocalbench.config import cache_dir

    models = cache_dir() / "models"
    if not models.is_dir():
        raise SystemExit(f"{models}: no assembled models (run scripts/setup.sh first)")
    root.mkdir(parents=True)
    (root / "models").symlink_to(models)
    if mini_from is not None:
        (root / "mini").symlink_to((mini_from / "mini").resolve())
    return root


def child(side: str, tree: Path | None, work: Path, limit: int | None, lang: str | None,
          mini_from: Path | None) -> dict[str, object]:
    """Run one side in a child process with its own fresh cache; its JSON result."""
    env = dict(os.environ)
    env["VOCALBENCH_CACHE"] = str(fresh_cache(work / f"cache-{side}", mini_from))
    if tree is not None:
        env["PYTHONPATH"] = os.pathsep.join([str(tree / "src"), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    cmd = [sys.executable, __file__, "--child", side, "--out", str(work / f"run-{side}")]
    cmd += ["--limit", str(limit)] if limit else []
    cmd += ["--lang", lang] if lang else []
    result = work / f"{side}.json"
    with open(work / f"{side}.log", "w") as log:
        done = subprocess.run([*cmd, "--result", str(result)], env=env, stdout=log, stderr=subprocess.STDOUT,
                              check=False)
    if done.returncode != 0:
        raise SystemExit(f"side {side} failed ({done.returncode}); see {work / f'{side}.log'}")
    return dict(json.loads(result.read_text()))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--limit", type=int, default=None, help="N base items per subset (default: the whole mini set)")
    ap.add_argument("--lang", choices=("en", "zh"), default=None, help="one language (default: both)")
    ap.add_argument("--sides", default=",".join(SIDES), help=f"comma-separated, from {', '.join(SIDES)}")
    ap.add_argument("--before", type=Path, default=None, help="also run an earlier source tree's defaults")
    ap.add_argument("--work", type=Path, default=None, help="keep the runs and logs here (default: a temp folder)")
    ap.add_argument("--resume", action="store_true", help="reuse the results of sides already finished in --work")
    ap.add_argument("--mini-from", type=Path, default=None,
                    help="a cache folder whose built mini set every side uses (its build stage then only checks it)")
    ap.add_argument("--child", default=None, help=argparse.SUPPRESS)
    ap.add_argument("--out", type=Path, default=None, help=argparse.SUPPRESS)
    ap.add_argument("--result", type=Path, default=None, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        concurrency = {"sequential": 1, "pipelined": 3}.get(args.child)
        if args.child == "sequential":
            os.environ["VOCALBENCH_LLM_DECODE_THREADS"] = os.environ.get("VOCALBENCH_LLM_THREADS", "2")
        body = run_side(args.out, args.limit, concurrency, args.lang)
        args.result.write_text(json.dumps(body, ensure_ascii=False))
        return 0
    sides: dict[str, Path | None] = {}
    if args.before is not None:
        if not (args.before / "src" / "vocalbench").is_dir():
            ap.error(f"--before {args.before}: no src/vocalbench there")
        sides["before"] = args.before.resolve()
    for s in (x.strip() for x in args.sides.split(",") if x.strip()):
        if s not in SIDES:
            ap.error(f"--sides: unknown side {s!r}")
        sides[s] = None
    work = args.work or Path(tempfile.mkdtemp(prefix="vocalbench-mainjob-"))
    work.mkdir(parents=True, exist_ok=True)
    load0 = os.getloadavg()
    results = {}
    for side, tree in sides.items():
        done = work / f"{side}.json"
        if args.resume and done.exists():
            results[side] = dict(json.loads(done.read_text()))
            continue
        print(f"running {side} ...", file=sys.stderr, flush=True)
        results[side] = child(side, tree, work, args.limit, args.lang, args.mini_from)
    load1 = os.getloadavg()

    names = list(results)
    first = names[0]
    print(f"main job stage profile ({'whole mini set' if not args.limit else f'--limit {args.limit}'}), "
          f"{os.cpu_count()} CPUs, load average {load0[0]:.2f} before / {load1[0]:.2f} after; runs in {work}")
    stage_names = [s["stage"] for s in results[first]["stages"]]
    head = f"{'stage':<14}" + "".join(f"{n + ' s (share, CPU s)':>34}" for n in names)
    head += "".join(f"{n + '/' + first:>22}" for n in names[1:])
    print(head)
    for i, stage in enumerate([*stage_names, "total"]):
        cells, walls = "", []
        for n in names:
            r = results[n]
            if stage == "total":
                wall, cpu = r["wall"], sum(s["cpu"] for s in r["stages"])
            else:
                wall, cpu = r["stages"][i]["wall"], r["stages"][i]["cpu"]
            walls.append(wall)
            cells += f"{wall:>14.1f} ({wall / r['wall']:>5.1%}, {cpu:>7.1f})"
        ratios = "".join(f"{w / walls[0]:>22.2f}" if walls[0] else f"{'-':>22}" for w in walls[1:])
        print(f"{stage:<14}{cells}{ratios}")
    base = results[first]["replies"]
    for n in names[1:]:
        other = results[n]["replies"]
        differ = sorted(k for k in set(base) | set(other) if base.get(k) != other.get(k))
        print(f"replies {n} vs {first}: {len(base)} vs {len(other)}, "
              + ("identical" if not differ else f"{len(differ)} differ (e.g. {', '.join(differ[:3])})"))
    for n in names:
        print(f"overall {n}: {json.dumps(results[n]['overall'])}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
