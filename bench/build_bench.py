"""Construction pipeline benchmark (not a test): perturbation speed and synthesis + verification RTF.

    python bench/build_bench.py [--clean N] [--items N] [--skip-synth]

1. Perturbation: N clean queries (Kokoro speech when available, else a synthetic voiced signal)
   through all 36 robust conditions; prints output-audio seconds per wall second per core, with the
   room impulse responses simulated fresh (cold) and from the RIR cache (warm), side by side.
   Target: >= 200x real time per core.
2. Synthesis + verification: builds a few items with the offline TTS and ASR; prints the real-time
   factor ((synthesis + ASR seconds) / audio seconds) and the share of records that needed retries.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from vocalbench import audio
from vocalbench.construct import perturb as P

SENTENCES = [
    "What should I pack for a weekend camping trip in the mountains?",
    "How can I make my small apartment feel more spacious?",
    "What are some easy dinners I can cook in under thirty minutes?",
    "How do I politely decline an invitation from a close friend?",
    "What is the best way to start running if I have never exercised?",
    "How can I keep my houseplants healthy during the winter?",
    "What should I consider before adopting a dog?",
    "How do I prepare for a job interview at a large company?",
]


def _cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def _voiced(seconds: float, seed: int, sr: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    t = np.arange(int(seconds * sr)) / sr
    phase = 2 * np.pi * np.cumsum(120 + 40 * np.sin(2 * np.pi * 0.5 * t)) / sr
    x = sum(np.sin(k * phase) / k for k in range(1, 10)) * (0.5 + 0.5 * np.sin(2 * np.pi * 3.5 * t) ** 2)
    return (0.3 * x / np.max(np.abs(x)) + 0.005 * rng.standard_normal(t.size)).astype(np.float32)


def make_release(root: Path, n: int) -> str:
    """A release with ``n`` robust_clean queries and a few other queries (for the babble)."""
    tts: Any = None
    try:
        from vocalbench.components import resolve

        tts = resolve("tts", "offline")
        source = f"Kokoro ({tts.id})"
    except (ImportError, RuntimeError) as exc:  # no TTS installed: a synthetic voiced signal of similar length
        source = f"synthetic voiced signal (TTS unavailable: {exc})"

    def speak(i: int, text: str) -> tuple[np.ndarray, int]:
        if tts is None:
            return _voiced(3.5, i, 24000), 24000
        x, sr = tts.synthesize(text, "en", voice=tts.voices("en")[i % 3])
        return x, sr
    clean, other = [], []
    for i in range(n + 4):
        x, sr = speak(i, SENTENCES[i % len(SENTENCES)])
        if i < n:
            rel = f"robust/{i:03d}.wav"
            clean.append({"Set": "Chat", "Qid": f"robust-{i:03d}", "Audio": rel, "Question": SENTENCES[i % 8],
                          "Answer": "-", "Category": "Suggestion"})
        else:
            rel = f"single_round/{i:03d}.wav"
            other.append({"Set": "Chat", "Qid": f"single_round-{i:03d}", "Audio": rel, "Question": "-"})
        audio.write(root / "audio" / rel, x, sr)
    (root / "json").mkdir(parents=True, exist_ok=True)
    (root / "json" / "robust_clean.json").write_text(json.dumps(clean))
    (root / "json" / "single_round.json").write_text(json.dumps(other))
    return source


def bench_perturb(n: int) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as tmp, tempfile.TemporaryDirectory() as rir_cache:
        root = Path(tmp) / "rel"
        source = make_release(root, n)
        results = {}
        saved = os.environ.get("VOCALBENCH_CACHE")
        for label in ("cold (RIRs simulated)", "warm (RIR cache)"):
            os.environ["VOCALBENCH_CACHE"] = rir_cache
            c0, t0 = _cpu(), time.perf_counter()
            sec = P.perturb_robust(root, lang="en", seed=0, progress=False)
            wall, cpu = time.perf_counter() - t0, _cpu() - c0
            out = sec["output_audio_seconds"]
            results[label] = out / cpu
            print(f"  {label:24s} {sec['items']:5d} files, {out:8.1f} s audio, wall {wall:6.2f} s, "
                  f"cpu {cpu:6.2f} s -> {out / wall:7.1f}x real time (wall), {out / cpu:7.1f}x per core")
        if saved is None:
            os.environ.pop("VOCALBENCH_CACHE", None)
        else:
            os.environ["VOCALBENCH_CACHE"] = saved
        print(f"  clean audio: {source}")
    return results


def bench_synthesis(n: int) -> None:
    from vocalbench.construct.items import Item
    from vocalbench.construct.pipeline import BuildOptions, build

    rows = [Item(subset="single_round", lang="en", question=s, category="Suggestion") for s in SENTENCES[:n]]
    rows += [Item(subset="chinese_knowledge", lang="zh", question=q, answer="-")
             for q in ["中国最长的河流是哪一条？", "一年有几个季节？", "熊猫主要吃什么？", "长城大约有多长？"][: max(1, n // 2)]]
    with tempfile.TemporaryDirectory() as tmp:
        for lang in ("en", "zh"):
            items = [r for r in rows if r.lang == lang]
            c0, t0 = _cpu(), time.perf_counter()
            man = build(items, Path(tmp) / lang, BuildOptions(progress=False, homophones=lang == "zh"))
            wall, cpu = time.perf_counter() - t0, _cpu() - c0
            s = man["summary"]
            print(f"  {lang}: {len(items)} items, {s['audio_seconds']:.1f} s audio synthesised, RTF "
                  f"{s['rtf']:.3f} (synth {s['synth_seconds']:.1f} s + ASR {s['asr_seconds']:.1f} s), wall {wall:.1f} s, "
                  f"cpu {cpu:.1f} s; retry share {s['retry_share']:.0%}; accepted {s['accepted']}/{s['items']}; "
                  f"mean error (accepted) {s['mean_error_accepted']}; first attempt {s['mean_error_first_attempt']}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--clean", type=int, default=6, help="clean queries to perturb (x36 files)")
    ap.add_argument("--items", type=int, default=4, help="en items to synthesise and verify (zh: half)")
    ap.add_argument("--skip-synth", action="store_true")
    args = ap.parse_args()
    print(f"perturbation: {args.clean} clean queries x 36 conditions (target >= 200x real time per core)")
    res = bench_perturb(args.clean)
    warm = res["warm (RIR cache)"]
    print(f"  => {warm:.0f}x real time per core with cached RIRs: {'meets' if warm >= 200 else 'MISSES'} the 200x target")
    if not args.skip_synth:
        print("synthesis + verification (offline Kokoro + Whisper base):")
        bench_synthesis(args.items)
    return 0


if __name__ == "__main__":
    sys.exit(main())
