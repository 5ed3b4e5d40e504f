"""Replies of the offline cascade's brain (and of deliberately weak variants) to official questions.

The questions come from the official metadata (text, as the cascade's ASR would ideally hear
them); the replies come from the local llama.cpp model with the cascade's own system prompt
("cascade"), or with a prompt that makes it answer wrongly, refuse, drift off topic, or answer
in a few words, or that follows a repeat instruction literally (so that repeat items have
replies that do repeat). Output: JSONL ``{"lang","subset","id","reply","reply_by"}`` for make_pool.py.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
from pathlib import Path

from vocalbench.components.llm import local_chat
from vocalbench.data import load_samples
from vocalbench.systems.cascade import SYSTEM_PROMPT

VARIANTS = {
    "en": {
        "wrong": "You are a voice assistant that is often wrong. Answer briefly and confidently, but give a "
                 "plausible yet incorrect answer or conclusion.",
        "refuse": "You are an overly cautious voice assistant. Politely decline to help with the request.",
        "off_topic": "You are a distracted voice assistant. Reply in two sentences about something only loosely "
                     "related to what the user said.",
        "terse": "You are a voice assistant. Reply in at most eight words, with no explanation.",
        "literal": "You are a voice assistant that follows instructions literally. When the user asks you to "
                   "repeat a sentence, say that sentence and nothing else.",
    },
    "zh": {
        "wrong": "你是一个经常出错的语音助手。请简短而自信地回答，但给出一个看似合理却错误的答案或结论。",
        "refuse": "你是一个过分谨慎的语音助手。请礼貌地拒绝用户的请求。",
        "off_topic": "你是一个心不在焉的语音助手。用两句话谈一些与用户所说内容关系不大的事情。",
        "terse": "你是一个语音助手。用不超过十个字回答，不做任何解释。",
        "literal": "你是一个严格按指令办事的语音助手。用户让你重复一句话时，只说出那句话，不说别的。",
        "right_alias": "你是一个语音助手。这个问题的正确答案是“{reference}”。请用一句口语化的话回答，用答案的别称、全称、"
                       "简称或描述性说法来表达，不要照抄“{reference}”这几个字。",
    },
}
MAX_TOKENS = {"creativity": 96, "single_round": 96, "cs_open_ended": 96, "instruction_following": 80,
              "emotion": 96, "safety": 96, "reasoning": 96, "multi_round": 64}


async def main_async(args: argparse.Namespace) -> None:
    plan = json.loads(args.plan.read_text())
    rng = random.Random(args.seed)
    llm = local_chat()
    done = set()
    if args.out.exists():
        done = {(r["lang"], r["subset"], r["id"]) for r in map(json.loads, args.out.read_text().splitlines())}
    with args.out.open("a", encoding="utf-8") as f:
        for lang, subsets in plan.items():
            for subset, spec in subsets.items():
                samples = load_samples(str(args.shared / lang), lang, [subset])
                if "min_index" in spec:
                    samples = [s for s in samples if spec["min_index"] <= s.index < spec.get("max_index", 10**6)]
                picked = rng.sample(samples, spec["n"])
                for s in sorted(picked, key=lambda s: s.index):
                    if (lang, subset, s.id) in done:
                        continue
                    weights = spec.get("variants", {"cascade": 1})
                    variant = random.Random(f"{args.seed}/{lang}/{subset}/{s.id}").choices(
                        list(weights), weights=list(weights.values()))[0]
                    system = SYSTEM_PROMPT[lang] if variant == "cascade" else \
                        VARIANTS[lang][variant].replace("{reference}", s.reference or "")
                    msgs = [{"role": "system", "content": system}]
                    msgs += [{"role": t.role, "content": t.text} for t in s.history]
                    msgs.append({"role": "user", "content": s.question})
                    res = await llm.chat(msgs, max_tokens=MAX_TOKENS.get(subset, 48), temperature=0.0, seed=0)
                    by = "offline cascade LLM (Qwen2.5-Coder-1.5B-Instruct Q4_K_M)" + (
                        "" if variant == "cascade" else f", deliberately {variant.replace('_', '-')} variant"
                        + (" (shown the reference)" if variant == "right_alias" else ""))
                    f.write(json.dumps({"lang": lang, "subset": subset, "id": s.id, "reply": res.text.strip(),
                                        "reply_by": by}, ensure_ascii=False) + "\n")
                    f.flush()
                    print(lang, subset, s.id, variant, f"{res.seconds:.1f}s", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--shared", type=Path, default=Path("../shared/vocalbench"))
    ap.add_argument("--plan", type=Path, required=True,
                    help='JSON {lang: {subset: {"n": N, "variants": {name: weight}, "min_index": i}}}')
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--seed", type=int, default=7)
    asyncio.run(main_async(ap.parse_args()))


if __name__ == "__main__":
    main()
