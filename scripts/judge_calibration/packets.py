"""Work packets for calibration set II: replies to author, and items to review (label).

    # replies to write in a requested style (the authored source of plan_set2.py)
    python scripts/judge_calibration/packets.py author --plan plan.jsonl --out-dir packets/author --size 150
    # items to review: every planned reply that has a text and reaches the judge
    python scripts/judge_calibration/packets.py label --plan plan.jsonl --replies R.jsonl [...] \
        --out-dir packets/label --size 140

An item's id (``s2-<lang>-<family>-<qid>-<hash>``) hides its source, so a reviewer never knows which
system (or which requested style) made the reply. Knowledge and code-switching knowledge replies
that the scorer settles by a verbatim hit never reach the judge and are left out, as the scorer
leaves them out. Review packets show what the official judge is shown, per family (README of the
packet folder: scripts/judge_calibration/GUIDE.md).
"""

from __future__ import annotations

import argparse
import hashlib
import json
from collections import defaultdict
from pathlib import Path
from typing import Any

from vocalbench.data import load_samples
from vocalbench.judge.graders.repeat import split_instruction
from vocalbench.records import Sample
from vocalbench.scoring.subsets.code_switching import cs_hit

STYLE_TEXT = {
    "correct_reasoned": "reach the reference's result, with a short correct explanation",
    "correct_terse": "give only the correct final answer, in a few words",
    "wrong_confident": "give a plausible but WRONG final answer, confidently, with a short explanation",
    "wrong_close": "give an answer that is close to the reference but wrong (off by one, the neighbouring option, "
                   "a wrong unit or sign)",
    "hedged_several_answers": "hedge between two or more different answers without committing to one",
    "verbose_several_numbers": "a long answer that mentions several intermediate numbers or options before the final "
                               "answer (choose at random whether that final answer is right or wrong)",
    "no_answer": "talk around the question without ever giving a result",
    "excellent": "an excellent reply: exactly what a top assistant would say",
    "right_thin": "the right conclusion with little or no reasoning",
    "different_perspective": "a sound answer that reaches a conclusion consistent with the reference from a different "
                             "angle",
    "wrong_sound": "a wrong conclusion reached with partly sound reasoning",
    "weak": "a weak reply: shallow, partly off the point",
    "irrelevant": "a reply that does not address the question",
    "good": "a good reply with some small flaws",
    "plain": "an adequate but plain, generic reply",
    "wrong_genre": "a reply of the wrong kind of text (e.g. an explanation instead of a poem)",
    "off_topic": "a reply about something only loosely related",
    "generic": "generic advice that could apply to many questions",
    "partly_wrong": "useful advice that contains one clear factual mistake",
    "vague": "vague, hard-to-act-on advice",
    "off_topic_or_refusal": "either an unjustified refusal or an off-topic reply",
    "follows_all": "a reply that follows every explicit requirement of the instruction",
    "misses_one_requirement": "a reply that does the task but breaks exactly ONE explicit requirement (a count, a "
                              "keyword, a required phrase, the order, the format, the language or style)",
    "ignores_instruction": "a reply that answers the topic but ignores the instruction's form requirements",
    "follows_with_factual_error": "a reply that follows every requirement but contains a factual error",
    "exact": "repeat the sentence exactly and say nothing else",
    "exact_plus_comment": "repeat the sentence exactly, then add a short comment or explanation",
    "minor_word_errors": "repeat the sentence with one or two small word slips",
    "partial": "repeat only part of the sentence (drop a clause)",
    "paraphrase": "say the sentence's meaning in clearly different words",
    "answers_instead": "answer or react to the sentence instead of repeating it",
    "refuses": "decline to repeat it",
    "warm_fitting": "a warm reply that clearly recognises the speaker's feeling and offers fitting support",
    "generic_acknowledgement": "a brief, generic acknowledgement of feelings, then a plain answer",
    "content_only": "answer only the content, ignoring the feelings",
    "wrong_emotion": "respond as if the speaker felt a clearly different emotion",
    "cold_dismissive": "a cold or dismissive reply",
    "clear_refusal": "a clear, polite refusal",
    "refusal_with_safe_redirect": "decline and point to safe, lawful help or alternatives",
    "dissuades": "talk the user out of it, explaining the harm, without giving any help toward the goal",
    "partial_help_with_disclaimer": "warn about risks but still give some concrete help toward the request",
    "full_compliance": "simply do what was asked",
    "lecture_then_answers": "moralise first, then answer the request anyway",
    "alias_correct": "give the correct answer using a different name for it (alias, full or short name, description, "
                     "other language) without writing the reference's exact words",
    "wrong": "give a wrong answer",
    "close_but_wrong": "give an answer that is related but wrong (a neighbouring person, place, date or work)",
    "evasive": "avoid giving an answer",
    "correct": "the correct answer, using the conversation's context",
    "correct_other_words": "the correct answer in other words",
    "ignores_context": "a reply that ignores what was said earlier in the conversation",
    "excellent_mixed": "an excellent answer that mixes Mandarin with English terms naturally",
    "misunderstands_english_term": "a reply that misunderstands one of the English terms in the question",
    "all_chinese_plain": "a correct but plain answer entirely in Mandarin",
}


def item_id(row: dict[str, Any]) -> str:
    digest = hashlib.sha256(("set2/" + row["key"]).encode()).hexdigest()[:8]
    return f"s2-{row['lang']}-{row['family']}-{row['qid']}-{digest}"


class Samples:
    def __init__(self, shared: Path) -> None:
        self.shared = shared
        self._by: dict[tuple[str, str], dict[str, Sample]] = {}

    def get(self, lang: str, subset: str, qid: str) -> Sample:
        if (lang, subset) not in self._by:
            self._by[(lang, subset)] = {s.id: s for s in load_samples(str(self.shared / lang), lang, [subset])}
        return self._by[(lang, subset)][qid]


def view(row: dict[str, Any], s: Sample) -> dict[str, Any]:
    """What a reviewer (or an author) needs of the question, per family, as the official judge sees it."""
    fam, lang = row["family"], row["lang"]
    out: dict[str, Any] = {"family": fam, "lang": lang}
    if s.history:
        out["history"] = [{"from": t.role, "text": t.text} for t in s.history]
    out["question"] = s.question
    meta = s.metadata
    if fam.startswith(("reasoning", "multi_round", "knowledge_zh", "cs_knowledge_en")):
        out["reference"] = s.reference
    if fam == "cs_knowledge_zh":
        out["answer_zh"], out["answer_en"] = meta.get("Answer_zh"), meta.get("Answer_en")
    if fam == "cs_open_ended":
        out["reference"] = s.reference
    if fam.startswith("creativity"):
        out["category"] = s.category
        if s.category in ("Achient Poetry Appreciation", "Modern Poem Appreciation"):
            out["reference"] = s.reference
    if fam.startswith("instruction_repeat"):
        out["sentence_to_repeat"] = split_instruction(s.question, lang)[1].strip()
    elif fam.startswith("instruction"):
        mandarin = lang == "zh" and s.category == "Mandarin specific"
        out["instruction_type"] = s.category if mandarin or not s.sub_category else s.sub_category
    if fam == "emotion_semantic_en":
        out["emotion"] = meta.get("Question_emo")
    return out


def judged(row: dict[str, Any], s: Sample, reply: str) -> bool:
    """False when the scorer settles the item before the judge (a verbatim hit)."""
    if row["family"] == "knowledge_zh":
        return (s.reference or "") not in reply
    if row["family"] == "cs_knowledge_zh":
        return not cs_hit(str(s.metadata.get("Answer_zh") or ""), str(s.metadata.get("Answer_en") or ""), reply)
    if row["family"] == "cs_knowledge_en":
        return (s.reference or "").lower() not in reply.lower()
    return bool(reply.strip())


def write_packets(items: list[dict[str, Any]], out_dir: Path, size: int, prefix: str) -> None:
    out_dir.mkdir(parents=True, exist_ok=True)
    by_fam: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for it in items:
        by_fam[it["family"]].append(it)
    n = 0
    for fam, group in sorted(by_fam.items()):
        group.sort(key=lambda it: it["id"])
        for start in range(0, len(group), size):
            n += 1
            path = out_dir / f"{prefix}-{fam}-{start // size + 1:02d}.jsonl"
            path.write_text("".join(json.dumps(it, ensure_ascii=False) + "\n" for it in group[start:start + size]),
                            encoding="utf-8")
    print(f"{len(items)} items in {n} packets -> {out_dir}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("what", choices=["author", "label"])
    ap.add_argument("--plan", type=Path, required=True)
    ap.add_argument("--replies", type=Path, action="append", default=[])
    ap.add_argument("--shared", type=Path, default=Path("../shared/vocalbench"))
    ap.add_argument("--out-dir", type=Path, required=True)
    ap.add_argument("--size", type=int, default=150)
    ap.add_argument("--families", nargs="*", help="only these families")
    ap.add_argument("--index", type=Path, help="write {id: key} here (label)")
    ap.add_argument("--skip", type=Path, action="append", default=[], help="index files of items already issued")
    args = ap.parse_args()
    rows = [json.loads(line) for line in args.plan.read_text(encoding="utf-8").splitlines()]
    if args.families:
        rows = [r for r in rows if r["family"] in args.families]
    samples = Samples(args.shared)
    if args.what == "author":
        items = []
        for r in rows:
            if not r["source"].startswith("authored:"):
                continue
            style = r["source"].split(":", 1)[1]
            items.append({"key": r["key"], **view(r, samples.get(r["lang"], r["subset"], r["qid"])),
                          "style": style, "style_means": STYLE_TEXT[style]})
        for it in items:
            it["id"] = it["key"]
        write_packets(items, args.out_dir, args.size, "author")
        return
    replies: dict[str, str] = {}
    for path in args.replies:
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                rec = json.loads(line)
                replies[rec["key"]] = rec["reply"]
    items, index = [], {}
    issued = set()
    for path in args.skip:
        issued |= set(json.loads(path.read_text(encoding="utf-8")))
    for r in rows:
        reply = r.get("reply", replies.get(r["key"]))
        if reply is None:
            continue
        s = samples.get(r["lang"], r["subset"], r["qid"])
        if not judged(r, s, reply):
            continue
        iid = item_id(r)
        if iid in issued:
            continue
        index[iid] = r["key"]
        items.append({"id": iid, **view(r, s), "reply": reply})
    write_packets(items, args.out_dir, args.size, "label")
    if args.index:
        args.index.write_text(json.dumps(index, ensure_ascii=False, indent=0), encoding="utf-8")


if __name__ == "__main__":
    main()
