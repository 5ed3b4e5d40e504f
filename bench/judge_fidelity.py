"""Judge fidelity: does a judge reproduce the paper's judged figures for LLaMA-Omni?

Takes N items per judged subset of the official llama-omni outputs (stratified over categories,
deterministic), imports them with ``vocalbench import`` and scores them with ``vocalbench score
--judge SPEC``, then prints each value with its 95 % bootstrap CI beside the published LLaMA-Omni
v2 figure (VocalBench paper, v2 table), and whether the published value lies inside the CI.
Emotion is shown as the semantic-only rate (>= 3) and mean: offline there is no emotion model, and
the paper publishes only the combined EER.

    python bench/judge_fidelity.py [--judge local] [--fit FIT] [--n 100] [--subsets LIST] [--shared ../shared/vocalbench]

The LLaMA-Omni replies of the judge calibration set are official outputs too: some of the items
drawn here may be labelled calibration items (dev or test), so this measures fidelity on the
official replies, not on unseen ones.

Also prints the judge's calls/s (fresh calls only; cached verdicts are free).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

PUBLISHED = {  # LLaMA-Omni, VocalBench v2 English table
    "reasoning": 33.6, "creativity": 3.195, "single_round": 3.795, "instruction_following": 28.67, "safety": 27.75,
}
SUBSETS = ("reasoning", "creativity", "single_round", "instruction_following", "safety", "emotion")


def release_slice(shared: Path, work: Path, n: int, subsets: list[str]) -> Path:
    """A release folder holding N stratified items of each subset (metadata only)."""
    from vocalbench.data import limit_samples, load_samples

    root = work / "release"
    (root / "json").mkdir(parents=True)
    by_subset = {s: load_samples(str(shared / "en"), "en", [s]) for s in subsets}
    kept = limit_samples(by_subset, n)
    for subset, samples in kept.items():
        ids = {s.id for s in samples}
        records = json.loads((shared / "en" / "json" / f"{subset}.json").read_text(encoding="utf-8"))
        (root / "json" / f"{subset}.json").write_text(
            json.dumps([r for r in records if r["Qid"] in ids], ensure_ascii=False), encoding="utf-8")
    return root


def vocalbench(*args: str) -> None:
    subprocess.run([sys.executable, "-m", "vocalbench.cli", *args], check=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--judge", default="local")
    ap.add_argument("--fit", help="a fit from `vocalbench judge-fit` for a calibrated judge")
    ap.add_argument("--n", type=int, default=100, help="items per subset (default 100)")
    ap.add_argument("--shared", type=Path, default=Path(__file__).resolve().parents[1] / ".." / "shared" / "vocalbench")
    ap.add_argument("--keep", type=Path, help="keep the run folder here")
    ap.add_argument("--subsets", default=",".join(SUBSETS), help=f"comma-separated (default {','.join(SUBSETS)})")
    args = ap.parse_args()
    subsets = [s.strip() for s in args.subsets.split(",") if s.strip()]
    if unknown := set(subsets) - set(SUBSETS):
        sys.exit(f"--subsets: unknown {', '.join(sorted(unknown))} (known: {', '.join(SUBSETS)})")
    outputs = args.shared / "en" / "outputs" / "llama-omni"
    if not outputs.exists():
        sys.exit(f"no official llama-omni outputs under {args.shared}")
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        release = release_slice(args.shared, work, args.n, subsets)
        run = args.keep or work / "run"
        vocalbench("import", "--format", "official", "--outputs", str(outputs), "--data", str(release),
                   "--lang", "en", "--out", str(run), "--system", "llama-omni", "--quiet")
        t0 = time.perf_counter()
        vocalbench("score", str(run), "--judge", args.judge, *(["--fit", args.fit] if args.fit else []),
                   "--asr", "none", "--mos", "none", "--emotion", "none", "--quiet")
        seconds = time.perf_counter() - t0
        summary = json.loads((run / "summary.json").read_text(encoding="utf-8"))
    usage = summary["provenance"].get("judge_usage") or {}  # the ledger, per judge model
    for row in usage.values():
        if row.get("calls") and row.get("seconds"):
            row["calls_per_second"] = round(row["calls"] / row["seconds"], 3)
    print(f"judge {summary['provenance'].get('judge')}; {args.n} stratified items per subset of the official "
          f"llama-omni outputs; scoring took {seconds:.0f} s")
    print(f"judge usage: {json.dumps(usage)}")
    print()
    print("| subset | n | ours | 95 % CI | published (LLaMA-Omni v2) | inside CI |")
    print("|---|---|---|---|---|---|")
    for subset in SUBSETS:
        row = summary["subsets"].get(subset)
        if row is None:
            continue
        value, ci = row["value"], row.get("ci95")
        if subset == "emotion":
            extra = row.get("extra", {})
            sem = extra.get("semantic_rate")
            print(f"| emotion (semantic >= 3, %) | {row['n']} | {sem} | – | – (only EER is published) | – |")
            print(f"| emotion (semantic mean) | {row['n']} | {extra.get('semantic_mean')} | – | – | – |")
            continue
        pub = PUBLISHED[subset]
        inside = ci is not None and ci[0] <= pub <= ci[1]
        ci_text = f"[{ci[0]:.3f}, {ci[1]:.3f}]" if ci else "–"
        shown = "–" if value is None else f"{value:.3f}"
        print(f"| {subset} | {row['n']} | {shown} | {ci_text} | {pub} | {'yes' if inside else 'NO'} |")
    print()
    print("instruction_following: the shared llama-omni outputs carry no reply audio, so the paralinguistic items "
          "(speed, emotion, repeat: 0-199) are unscored (no_reply_audio) and the value is over the text-only items; "
          "the published figure had the audio and covers all of them.")


if __name__ == "__main__":
    main()
