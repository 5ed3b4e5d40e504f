"""The judge's planner for ``--dry-run``: what a scoring pass would ask the judge, and its tokens,
without calling anything. :class:`PlanningJudge` stands in for the judge: it renders the prompts the
real judge would send, looks them up in the judge cache (hits cost nothing) and counts their tokens
instead of sending them (:mod:`vocalbench.scoring.plan` runs the scorers with it).

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
from dataclasses import asdict, dataclass, field
from functools import lru_cache
from typing import Any

from vocalbench.judge.json_judge import Judge
from vocalbench.judge.rubrics.record import Evidence, Rubric, Verdict
from vocalbench.records import JudgeTrace

JSON_ANSWER_TOKENS = 40  # '{"reason": "<one short sentence>", "score": 4}' and its end token
TEMPLATE_TOKENS_PER_MESSAGE = 5  # <|im_start|>role\n ... <|im_end|>\n
REPLY_PRIMER_TOKENS = 3  # <|im_start|>assistant\n
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


# a single-token request to the embedded llama.cpp server on a 2-core machine (measured idle: a
# one-token verdict of the 1.5B judge, prompt prefix shared with the item's other questions)
LOCAL_SECONDS_PER_REQUEST = 2.2


@dataclass
class JudgePlan:
    judge: str
    tokenizer: str
    subsets: list[SubsetPlan] = field(default_factory=list)
    seconds_per_request: float | None = None  # the embedded server's measured time per request

    def model_seconds(self) -> float | None:
        """The model requests' estimated time (embedded server only; an endpoint's is not known)."""
        return None if self.seconds_per_request is None else self.total().requests * self.seconds_per_request

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
        if self.seconds_per_request is not None:
            out["model_seconds"] = round(self.model_seconds() or 0.0, 1)
            out["seconds_per_request"] = self.seconds_per_request
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
        lines = [f"judge {self.judge} (dry run: nothing called; tokens: {self.tokenizer})", *lines]
        if self.seconds_per_request is not None:
            n = self.total().requests
            lines.append(f"model requests: {n:,} (the rest decided by graders and fitted rules), about "
                         f"{self.model_seconds() or 0.0:,.0f} s on the embedded server at {self.seconds_per_request:g} s "
                         f"a request (2 idle cores)")
        return "\n".join(lines)


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

    def __init__(self, judge: Judge) -> None:
        self.judge = judge
        self.id = str(judge.id)
        self.rows: dict[str, SubsetPlan] = {}

    def row(self, subset: str) -> SubsetPlan:
        return self.rows.setdefault(subset, SubsetPlan(subset))

    async def evaluate(self, rubric: Rubric, fields: dict[str, str], *, subset: str, sample_id: str,
                       evidence: Evidence | None = None) -> Verdict:
        j = self.judge
        without_model = j.without_model(rubric, evidence)
        if without_model is not None:  # settled by a grader, or a rule of grader features only
            self.row(subset).settled += 1
            return without_model
        requests = j.requests(rubric, fields)  # what the judge would send for this verdict
        _, trace, hit = j.lookup(rubric, j.prompt_key(requests), subset, sample_id)
        row = self.row(subset)
        if hit is not None:
            row.cached += 1
            return hit
        row.verdicts += 1
        row.requests += len(requests)
        row.prompt_tokens += sum(prompt_tokens(m) for m in requests)
        row.completion_tokens += len(requests) * min(JSON_ANSWER_TOKENS, j.max_tokens)
        value = float(rubric.hi) if rubric.kind == "scale" else 1.0
        return Verdict(value, JudgeTrace(model=self.id, prompt_hash="dry-run", rubric=rubric.ref, raw=""),
                       decided_by=j.decided_by("dry-run"))
