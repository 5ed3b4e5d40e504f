"""``--dry-run``: the judge calls a scoring pass would make, and their tokens, without calling anything.

The subset scorers run as they would, item by item, on the items the engine would (re)score
(resumed items are skipped exactly as the engine skips them), but with a planning context: its
judge renders the prompts the real judge would send, looks them up in the judge cache (hits cost
nothing) and counts their tokens instead of sending them; ASR transcripts are taken from the reply
text (or the imported transcript); MOS and emotion are "not run", so checks that need them stay
pending and the judge is still counted (an upper bound for the paralinguistic instructions). Items
without a reply yet (``run --dry-run``) get their reference answer, or a typical reply length, as
the reply text.

Tokens are counted with the local judge model's own tokenizer (Qwen2.5, read from its GGUF
vocabulary when the model is assembled; nothing is started) plus the chat template's few tokens per
message, else estimated at 4.9 characters per token (0.65 per CJK character; measured against that
vocabulary on the official questions, answers and rubrics). A calibrated (local)
verdict asks its main question and each check as separate single-token requests; a JSON judge
is counted at ``JSON_ANSWER_TOKENS`` completion tokens per request.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from functools import lru_cache
from typing import Any

from vocalbench import catalog
from vocalbench.components import resolve_evaluator
from vocalbench.components.base import ComponentUnavailable
from vocalbench.components.rubric import Evidence, Rubric, Verdict
from vocalbench.config import RunConfig, is_off, judge_options
from vocalbench.records import AudioRef, JudgeTrace, Reply, Sample, Score
from vocalbench.scoring.base import ItemScorer, ScoringContext

JSON_ANSWER_TOKENS = 40  # '{"reason": "<one short sentence>", "score": 4}' and its end token
TEMPLATE_TOKENS_PER_MESSAGE = 5  # <|im_start|>role\n ... <|im_end|>\n
REPLY_PRIMER_TOKENS = 3  # <|im_start|>assistant\n
TYPICAL_REPLY_CHARS = 600  # the text assumed for an item that has no reply and no reference yet
_CJK = re.compile(r"[\u3000-\u303f\u3400-\u9fff\uff00-\uffef]")


@dataclass
class SubsetPlan:
    """What scoring one subset would ask the judge."""

    subset: str
    items: int = 0  # items the engine would (re)score
    verdicts: int = 0  # verdicts the judge would be asked for (cache hits excluded)
    cached: int = 0  # verdicts already in the judge cache
    settled: int = 0  # verdicts the rules-first graders decide without the model
    requests: int = 0  # endpoint requests behind those verdicts
    prompt_tokens: int = 0
    completion_tokens: int = 0
    assumed_replies: int = 0  # items whose reply does not exist yet


@dataclass
class JudgePlan:
    judge: str
    tokenizer: str
    subsets: list[SubsetPlan] = field(default_factory=list)

    def total(self) -> SubsetPlan:
        out = SubsetPlan("total")
        for s in self.subsets:
            for k in ("items", "verdicts", "cached", "settled", "requests", "prompt_tokens", "completion_tokens",
                      "assumed_replies"):
                setattr(out, k, getattr(out, k) + getattr(s, k))
        return out

    def to_dict(self, price: tuple[float, float] | None = None) -> dict[str, Any]:
        rows = [*self.subsets, self.total()]
        out: dict[str, Any] = {"judge": self.judge, "tokenizer": self.tokenizer,
                               "subsets": {r.subset: asdict(r) for r in rows}}
        if price is not None:
            for r in rows:
                out["subsets"][r.subset]["cost"] = round(cost(r, price), 4)
            out["price_per_million"] = {"input": price[0], "output": price[1]}
        return out

    def table(self, price: tuple[float, float] | None = None) -> str:
        head = ["subset", "items", "by rule", "verdicts", "cached", "requests", "prompt tok", "completion tok"]
        head += ["est. cost"] if price else []
        rows = [head]
        for r in [*self.subsets, self.total()]:
            row = [r.subset, *(f"{getattr(r, k):,}" for k in ("items", "settled", "verdicts", "cached", "requests",
                                                                 "prompt_tokens", "completion_tokens"))]
            rows.append(row + ([f"{cost(r, price):.4f}"] if price else []))
        widths = [max(len(r[i]) for r in rows) for i in range(len(head))]
        lines = ["  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths)))
                 for r in rows]
        return "\n".join([f"judge {self.judge} (dry run: nothing called; tokens: {self.tokenizer})", *lines])


def cost(row: SubsetPlan, price: tuple[float, float]) -> float:
    """Estimated cost of ``row`` at (input, output) prices per million tokens."""
    return (row.prompt_tokens * price[0] + row.completion_tokens * price[1]) / 1e6


def parse_price(text: str) -> tuple[float, float]:
    """``IN,OUT`` (prices per million prompt and completion tokens) -> floats; a clear error otherwise."""
    parts = text.split(",")
    try:
        if len(parts) != 2:
            raise ValueError
        price = (float(parts[0]), float(parts[1]))
    except ValueError:
        raise ValueError(f"--judge-price expects IN,OUT (prices per million tokens), got {text!r}") from None
    if min(price) < 0:
        raise ValueError(f"--judge-price must not be negative, got {text!r}")
    return price


# -- token counting ------------------------------------------------------------------------------
@lru_cache(maxsize=1)
def _vocab() -> Any:
    """The local judge model's tokenizer (its GGUF vocabulary only), or None when not assembled."""
    try:
        from llama_cpp import Llama

        from vocalbench.components.assets import ASSETS, models_dir

        asset = ASSETS["qwen2.5-1.5b"]
        path = models_dir() / asset.folder / asset.filename
        if not path.is_file():
            return None
        saved = os.dup(2)  # llama.cpp warns about the context of a vocabulary-only load on fd 2
        try:
            with open(os.devnull, "w") as null:
                os.dup2(null.fileno(), 2)
                return Llama(str(path), vocab_only=True, verbose=False)
        finally:
            os.dup2(saved, 2)
            os.close(saved)
    except Exception:  # noqa: BLE001 - any problem: fall back to the character estimate
        return None


def tokenizer_name() -> str:
    return "qwen2.5 vocabulary" if _vocab() is not None else "estimate: 4.9 chars/token, 0.65/CJK char"


def count_tokens(text: str) -> int:
    vocab = _vocab()
    if vocab is not None:
        return len(vocab.tokenize(text.encode("utf-8"), add_bos=False, special=False))
    cjk = len(_CJK.findall(text))
    return round(cjk * 0.65 + (len(text) - cjk) / 4.9)


def prompt_tokens(messages: list[dict[str, str]]) -> int:
    return sum(count_tokens(m["content"]) + TEMPLATE_TOKENS_PER_MESSAGE for m in messages) + REPLY_PRIMER_TOKENS


class PlanningJudge:
    """Counts what ``judge`` would be asked, per subset; answers every verdict with a passing value."""

    def __init__(self, judge: Any) -> None:
        from vocalbench.components.calibrated_judge import CalibratedJudge

        self.judge = judge
        self.id = str(judge.id)
        self.calibrated = isinstance(judge, CalibratedJudge)
        self.rows: dict[str, SubsetPlan] = {}

    def row(self, subset: str) -> SubsetPlan:
        return self.rows.setdefault(subset, SubsetPlan(subset))

    async def evaluate(self, rubric: Rubric, fields: dict[str, str], *, subset: str, sample_id: str,
                       evidence: Evidence | None = None) -> Verdict:
        j = self.judge
        if self.calibrated:
            without_model = j.rule_verdict(rubric, evidence)
            if without_model is not None:  # settled by a grader, or a rule of grader features only
                self.row(subset).settled += 1
                verdict: Verdict = without_model
                return verdict  # else the questions the judge sends: the main one and the checks its rule weighs
            every = j.questions(rubric, fields)
            requests = [every[k] for k in j.to_ask(rubric, every)]
        else:
            requests = [j.messages(rubric, fields)]
        _, trace, hit = j.lookup(rubric, requests if self.calibrated else requests[0], subset, sample_id)
        row = self.row(subset)
        if hit is not None:
            row.cached += 1
            cached: Verdict = hit
            return cached
        row.verdicts += 1
        row.requests += len(requests)
        row.prompt_tokens += sum(prompt_tokens(m) for m in requests)
        row.completion_tokens += len(requests) * (1 if self.calibrated else min(JSON_ANSWER_TOKENS, j.max_tokens))
        value = float(rubric.hi) if rubric.kind == "scale" else 1.0
        return Verdict(value, JudgeTrace(model=self.id, prompt_hash="dry-run", rubric=rubric.ref, raw=""))


def planning_context(cfg: RunConfig, judge: PlanningJudge) -> ScoringContext:
    """A scoring context that calls nothing: transcripts from the reply text, no MOS or emotion."""
    from vocalbench.data.official import audio_duration

    async def transcribe(reply: Reply, lang: str | None) -> str:
        return reply.asr_text if reply.asr_text is not None else (reply.text or "")

    async def not_run(reply: Reply) -> Any:
        raise ComponentUnavailable("dry_run", "not run in a dry run")

    return ScoringContext(lang=cfg.lang, protocol=cfg.protocol, judge=judge, transcribe=transcribe, mos=not_run,
                          emotion=not_run, audio_duration=audio_duration)


def assumed_reply(sample: Sample) -> Reply:
    """The reply assumed for an item not generated yet: its reference answer, or a typical length."""
    text = sample.reference or "x" * TYPICAL_REPLY_CHARS
    return Reply(subset=sample.subset, sample_id=sample.id, text=text, audio=AudioRef(path="(not generated)"),
                 source="assumed")


async def plan_subset(scorer: ItemScorer, items: Iterable[tuple[Sample, Reply | None]], ctx: ScoringContext,
                      row: SubsetPlan) -> None:
    """Run ``scorer`` over ``items`` in the planning context; the judge fills ``row``."""
    for sample, reply in items:
        row.items += 1
        if reply is None:
            row.assumed_replies += 1
            reply = assumed_reply(sample)
        await scorer.score(sample, reply, ctx)


def pending_items(store: Any, subset: str, key: str, samples: list[Sample] | None = None,
                  page: int = 256) -> Iterable[tuple[Sample, Reply | None]]:
    """The (sample, reply) pairs of ``subset`` the engine would score under ``key``: resumed items are
    skipped as the engine skips them. With ``samples`` (a run still to generate), their items without
    a reply are included with ``None``; without, only the store's replied items count (``score``)."""
    from vocalbench.scoring.engine import _needs_work

    pages: Iterable[list[Sample]]
    if samples is None:
        pages = store.sample_pages(subset, page)
    else:
        mine = [s for s in samples if s.subset == subset]
        pages = [mine[i:i + page] for i in range(0, len(mine), page)]
    for chunk in pages:
        ids = [s.id for s in chunk]
        existing: dict[str, list[Score]] = {}
        states: dict[str, bool] = {}
        if store is not None:
            for sc in store.scores_of(subset, key, ids):
                existing.setdefault(sc.sample_id, []).append(sc)
            states = store.reply_states(subset, ids)
        todo = [s for s in chunk if (s.id not in states and samples is not None)
                or _needs_work(existing.get(s.id), states.get(s.id))]
        replies = store.replies_of(subset, [s.id for s in todo]) if store is not None else {}
        yield from ((s, replies.get((s.subset, s.id))) for s in todo)


async def plan_judge(cfg: RunConfig, *, store: Any = None, samples: list[Sample] | None = None,
                     subsets: list[str] | None = None) -> JudgePlan | None:
    """The judge plan of scoring ``store`` (``score --dry-run``), or of a run over ``samples`` whose
    store (when it exists yet) holds what is already done (``run --dry-run``); None without a judge."""
    from vocalbench.scoring.engine import _selected, evaluator_key
    from vocalbench.scoring.subsets import scorer_for

    if is_off(cfg.judge):
        return None
    # the judge as it would be, starting nothing: the local server would start on its first request
    judge = PlanningJudge(resolve_evaluator("judge", cfg.judge.strip(), lazy=True, **judge_options(cfg)))
    known = (store.get_meta("judge_ids", {}) or {}) if store is not None else {}
    judge_id = str(known.get(cfg.judge.strip(), judge.id))
    plan = JudgePlan(judge=judge_id, tokenizer=tokenizer_name())
    ctx = planning_context(cfg, judge)
    if samples is None:
        names = _selected(store, cfg, subsets)
    else:

        names = catalog.ordered(sorted({s.subset for s in samples}), cfg.lang)
    for name in names:
        scorer = scorer_for(name, cfg.lang, cfg.protocol)
        if not getattr(scorer, "uses_judge", False):
            continue
        row = judge.row(name)
        await plan_subset(scorer, pending_items(store, name, evaluator_key(scorer, judge_id), samples), ctx, row)
        plan.subsets.append(row)
    return plan
