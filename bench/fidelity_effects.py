"""Fidelity: the measured effect of the evaluator differences docs/scoring.md lists.

Prints, side by side in one run:
- ``asr``: corpus WER (en) / PER (zh) of our ASR decoding (beam 5, language forced, t2s) and of the
  ``official`` preset (greedy, language detected, no conversion) on the round-trip sentences of
  tests/components/test_roundtrip.py and on the questions of the built-in mini set (both spoken
  by the offline TTS), each against its text.
- ``repeat``: the 200 English paralinguistic sentences of the official data, spoken by the offline
  TTS and transcribed: the text-vs-speech WER of a perfect repeat under the official
  ``instruction_full.py`` counting and under the clarity counting with the ordinal rule that was
  used before, and how many items change side of the 0.2 limit.
- ``v1bug``: the official v1 bug on items 500-549 (Spoken format judged by the repeat prompt),
  bounded without a judge on the official LLaMA-Omni English outputs: how many replies could pass
  the official (repeat) reading at all (WER(question, reply) < 0.2) and how many carry no
  structured text (no LaTeX, formula signs, list or markdown markers: a heuristic, not a judge),
  as points of the v1 following rate over the 900 items.
- ``mos``: the offline MOS (DistillMOS) per file at its own length, and as the official UTMOS script
  feeds it: shuffled batches of 4, each file repeat-padded to the longest of its batch.

    python bench/fidelity_effects.py [--asr offline] [--parts v1bug,repeat,asr,mos] [--shared ../shared/vocalbench]
"""

from __future__ import annotations

import argparse
import json
import random
import re
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]


def _sentences() -> dict[str, list[str]]:
    sys.path.insert(0, str(ROOT))
    from tests.components.test_roundtrip import EN, ZH

    return {"en": EN, "zh": ZH}


def _speak(texts: list[str], lang: str, folder: Path) -> list[Path]:
    from vocalbench.audio import resample, write
    from vocalbench.components import resolve

    tts = resolve("tts", "offline")
    folder.mkdir(parents=True, exist_ok=True)
    out = []
    for i, text in enumerate(texts):
        x, sr = tts.synthesize(text, lang, voice=tts.voices(lang)[0])
        out.append(write(folder / f"{lang}{i:03d}.wav", resample(x, sr, 16000), 16000))
    return out


def _rate(lang: str, refs: list[str], hyps: list[str]) -> tuple[float, int, int]:
    """(corpus error rate %, distance, length): en WER with the clarity normaliser, zh PER."""
    from vocalbench.text import per_counts, wer_counts

    counts = [(wer_counts if lang == "en" else per_counts)(r, h) for r, h in zip(refs, hyps)]
    dist, length = sum(c[0] for c in counts), sum(c[1] for c in counts)
    return round(100 * dist / max(length, 1), 3), dist, length


def _transcribe(spec: str, paths: list[Path], lang: str) -> list[str]:
    from vocalbench.components import resolve

    out = resolve("asr", spec).transcribe(paths, lang)
    return [getattr(t, "text", "") for t in out]


def mini_questions(work: Path) -> dict[str, tuple[list[str], list[Path]]]:
    """The built-in mini set's questions (its packaged item files), spoken by the offline TTS."""
    from vocalbench.data.mini import items_path

    out = {}
    for lang in ("en", "zh"):
        lines = items_path(lang).read_text(encoding="utf-8").splitlines()
        texts = [json.loads(line)["question"] for line in lines if line.strip() and not line.startswith("#")]
        out[lang] = texts, _speak(texts, lang, work / "mini")
    return out


def asr_presets(spec: str, roundtrip: dict[str, list[Path]], mini: dict[str, tuple[list[str], list[Path]]]
                ) -> dict[str, dict[str, tuple[float, int, int]]]:
    """Corpus WER/PER of both decodings on the round-trip sentences and the mini set's questions."""
    rows: dict[str, dict[str, tuple[float, int, int]]] = {}
    for lang, texts in _sentences().items():
        for name, (refs, paths) in (("roundtrip", (texts, roundtrip[lang])), ("mini", mini[lang])):
            rows[f"{name}_{lang} ({len(paths)} files)"] = {
                p: _rate(lang, refs, _transcribe(s, paths, lang))
                for p, s in (("ours", spec), ("official", f"{spec}:official"))}
    return rows


def repeat_rule(spec: str, shared: Path, work: Path) -> dict[str, object]:
    """Perfect repeats of the 200 en paralinguistic sentences: the official counting vs the old one."""
    from vocalbench.judge.graders.repeat import split_instruction
    from vocalbench.text import error_rate, repeat_wer_counts, wer_counts

    data = json.loads((shared / "en" / "json" / "instruction_following.json").read_text())
    sentences = [split_instruction(r["Question"], "en")[1].strip() for r in data[:200]]
    same_text = {"official": [error_rate(repeat_wer_counts(s, s)) for s in sentences],
                 "before": [error_rate(wer_counts(s, s)) for s in sentences]}
    unique = sorted(set(sentences))  # the four paralinguistic groups share 74 sentences
    heard = dict(zip(unique, _transcribe(spec, _speak(unique, "en", work / "repeat"), "en")))
    hyps = [heard[s] for s in sentences]
    spoken = {"official": [error_rate(repeat_wer_counts(s, h)) for s, h in zip(sentences, hyps)],
              "before": [error_rate(wer_counts(s, h)) for s, h in zip(sentences, hyps)]}
    flipped = [i for i, (a, b) in enumerate(zip(spoken["official"], spoken["before"])) if (a < 0.2) != (b < 0.2)]
    return {
        "text as its own transcript: items with WER > 0": {k: sum(v > 0 for v in vals) for k, vals in same_text.items()},
        "text as its own transcript: WER range > 0 before": sorted({round(v, 3) for v in same_text["before"] if v > 0}),
        "TTS + ASR: items passing WER < 0.2": {k: sum(v < 0.2 for v in vals) for k, vals in spoken.items()},
        "TTS + ASR: items whose decision changes": flipped,
    }


_STRUCTURED = re.compile(r"\\[a-z(\[]|\$|[=^*#]|\d\s*[+/×÷]\s*\d|\n\s*(?:[-•]|\d+[.)])\s")


def v1_spoken_format_bug(shared: Path) -> dict[str, object]:
    """Items 500-549 of the official LLaMA-Omni en outputs: bounds on the effect of judging them by
    the repeat prompt (official v1) instead of a spoken-format note (ours), without a judge."""
    from vocalbench.text import error_rate, repeat_wer_counts

    outputs = shared / "en" / "outputs" / "llama-omni" / "json" / "instruction.json"
    rows = [json.loads(line) for line in outputs.read_text(encoding="utf-8").splitlines() if line.strip()]
    data = json.loads((shared / "en" / "json" / "instruction_following.json").read_text())
    replies = {int(r["question_id"].rsplit("-", 1)[1]): r["prediction"] for r in rows}
    items = range(500, 550)
    repeat_like = [i for i in items if error_rate(repeat_wer_counts(data[i]["Question"], replies[i])) < 0.2]
    plain = [i for i in items if not _STRUCTURED.search(replies[i])]
    per_item = 100 / len(data)
    return {
        "items": len(data),
        "replies that could pass the official repeat reading (WER(question, reply) < 0.2)": len(repeat_like),
        "replies without structured text (heuristic for our spoken-format note)": len(plain),
        "v1 following-rate points the bug can take (upper bound: all 50)": round(50 * per_item, 2),
        "estimate: (plain - repeat-like) x 100 / items": round((len(plain) - len(repeat_like)) * per_item, 2),
    }


def _official_batches(paths: list[Path], folder: Path, seed: int) -> dict[Path, Path]:
    """Each file as the official UTMOS script feeds it: in shuffled batches of 4, repeat-padded
    to the longest file of its batch (written to ``folder``)."""
    from vocalbench.audio import load, write

    order = list(paths)
    random.Random(seed).shuffle(order)
    out: dict[Path, Path] = {}
    for i in range(0, len(order), 4):
        batch = order[i:i + 4]
        waves = [load(p, 16000)[0] for p in batch]
        longest = max(len(w) for w in waves)
        for p, w in zip(batch, waves):
            out[p] = write(folder / f"{seed}-{len(out)}.wav", np.tile(w, -(-longest // len(w)))[:longest], 16000)
    return out


def mos_padding(paths: list[Path], work: Path) -> dict[str, object]:
    """DistillMOS per file vs repeat-padded in shuffled batches of 4 (three shuffles)."""
    from vocalbench.components import resolve

    model = resolve("mos", "offline")
    own = dict(zip(paths, model.score(paths)))
    rows: dict[str, object] = {"files": len(paths), "mean per file": round(float(np.mean(list(own.values()))), 4)}
    for seed in range(3):
        padded_files = _official_batches(paths, work / "padded", seed)
        padded = dict(zip(padded_files, model.score(list(padded_files.values()))))
        diff = np.array([padded[p] - own[p] for p in paths])
        rows[f"shuffle {seed}"] = {"mean": round(float(np.mean(list(padded.values()))), 4),
                                   "mean |diff| per file": round(float(np.mean(np.abs(diff))), 4),
                                   "max |diff|": round(float(np.max(np.abs(diff))), 4)}
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--asr", default="offline", help="the ASR SPEC whose two decodings are compared")
    parser.add_argument("--parts", default="v1bug,repeat,asr,mos")
    parser.add_argument("--shared", type=Path, default=ROOT.parent / "shared" / "vocalbench")
    args = parser.parse_args()
    parts = args.parts.split(",")
    if "v1bug" in parts:
        print(json.dumps({"v1bug": v1_spoken_format_bug(args.shared)}, indent=1), flush=True)
    if not set(parts) & {"repeat", "asr", "mos"}:
        return
    with tempfile.TemporaryDirectory(prefix="vb-fidelity-") as tmp:
        work = Path(tmp)
        if "repeat" in parts:
            print(json.dumps({"repeat": repeat_rule(args.asr, args.shared, work)}, indent=1), flush=True)
        if not set(parts) & {"asr", "mos"}:
            return
        roundtrip = {lang: _speak(texts, lang, work / "roundtrip") for lang, texts in _sentences().items()}
        mini = mini_questions(work)
        if "asr" in parts:
            rows = asr_presets(args.asr, roundtrip, mini)
            print("| audio | ours (beam 5, language forced, t2s) | official (greedy, language detected) |")
            print("|---|---|---|")
            for name, row in rows.items():
                print(f"| {name} | " + " | ".join(f"{r[0]} % ({r[1]} / {r[2]})" for r in row.values()) + " |",
                      flush=True)
        if "mos" in parts:
            files = [p for paths in roundtrip.values() for p in paths] + [p for _, paths in mini.values() for p in paths]
            print(json.dumps({"mos": mos_padding(files, work)}, indent=1), flush=True)

if __name__ == "__main__":
    main()
