"""The calibrated judge: yes/no and digit answers read as probabilities, combined by a fitted rule.

A small local model is a poor judge when it writes its own verdict: it says "yes" to almost
everything and gives every essay a 5. It is a much better *ranker* of focused questions. So for
each item this judge

1. asks the rubric's own question, then each of the rubric's **checks** (focused yes/no
   questions such as "Is the advice accurate?") that the family's rule gives a weight (all of
   them under ``judge-check``, whose answers fit the rules), each time requesting exactly one answer token
   with its top log-probabilities (llama.cpp returns them; ``max_tokens=1``). One item's questions
   go back to back and share the item as a prompt prefix, which llama.cpp keeps between calls, so
   each further question costs only its own few tokens;
2. reads the features: ``p_yes = P(yes) / (P(yes) + P(no))`` of the main question (binary), or its
   expected score ``E = sum k P(k) / sum P(k)`` (lo..hi scales), then ``p_yes`` of every check
   (``read_probabilities``);
3. maps them with the rubric family's decision rule (``RuleFit``): binary, a logistic combination
   and a threshold; scale, a linear combination clipped to lo..hi. The rules are fitted on the dev
   split of the labelled calibration set only (``vocalbench judge-check --fit``) and shipped with
   the package.

The raw features are what is cached and kept in the trace, so a new fit re-maps cached answers
without calling the model again. How valid each family is, is measured on the test split by
``vocalbench judge-check`` (judge/check.py).
"""

from __future__ import annotations

import asyncio
import json
import math
import time
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any, Literal

from vocalbench.components.base import ChatLLM, ChatResult
from vocalbench.concurrency import limiter
from vocalbench.judge.json_judge import Judge, endpoint_semaphore
from vocalbench.judge.rubrics.record import Evidence, Rubric, Verdict
from vocalbench.records import DecidedBy, JudgeTrace

FIT_FORMAT = 2  # named feature weights, grader features, settling
TOP_LOGPROBS = 20
MIN_ANSWER_MASS = 0.05  # below this, the model wanted to say something else: unparseable
_YES = {"yes", "是", "对"}
_NO = {"no", "否", "不"}


def family_of(rubric_id: str) -> str:
    """The calibration family of a rubric (the creativity categories share one per language)."""
    if rubric_id.startswith("creativity_"):
        return "creativity_" + rubric_id.rsplit("_", 1)[1]
    return rubric_id


def _zh(rubric: Rubric) -> bool:
    return rubric.id.endswith("_zh") or any("\u4e00" <= ch <= "\u9fff" for ch in rubric.system[:200])


def instruction(rubric: Rubric, scale: bool | None = None) -> str:
    """The one-token answer request: yes/no, or a digit for the main question of a scale rubric."""
    scale = rubric.kind == "scale" if scale is None else scale
    if not scale:
        return "只回答一个词：yes 或 no。" if _zh(rubric) else "Answer with one word: yes or no."
    return (f"只回答一个 {rubric.lo} 到 {rubric.hi} 的整数。" if _zh(rubric)
            else f"Answer with one digit from {rubric.lo} to {rubric.hi}.")


def read_probabilities(rubric: Rubric, top: dict[str, float] | None, scale: bool | None = None
                       ) -> dict[str, float] | None:
    """``{"p_yes", "mass"}`` (yes/no) or ``{"expected", "mass", "p1".."p5"}`` (a lo..hi digit) from
    the first token's log-probabilities; None when the answer tokens carry under ``MIN_ANSWER_MASS``."""
    if not top:
        return None
    scale = rubric.kind == "scale" if scale is None else scale
    probs: dict[str, float] = {}
    for token, logprob in top.items():
        word = token.strip().lower()
        probs[word] = probs.get(word, 0.0) + math.exp(logprob)
    if not scale:
        yes = sum(p for w, p in probs.items() if w in _YES)
        no = sum(p for w, p in probs.items() if w in _NO)
        if yes + no < MIN_ANSWER_MASS:
            return None
        return {"p_yes": round(yes / (yes + no), 6), "mass": round(yes + no, 6)}
    digits = {k: probs.get(str(k), 0.0) for k in range(rubric.lo, rubric.hi + 1)}
    mass = sum(digits.values())
    if mass < MIN_ANSWER_MASS:
        return None
    out = {"expected": round(sum(k * p for k, p in digits.items()) / mass, 6), "mass": round(mass, 6)}
    out.update({f"p{k}": round(p / mass, 6) for k, p in digits.items()})
    return out


MAIN = "main"
GRADER_PREFIX = "g:"


def features(raw: dict[str, Any] | None, evidence: Evidence | None = None) -> dict[str, float]:
    """The rule's named inputs: ``main`` (the main answer's p_yes or expected score) and
    ``check1``.. (each check's p_yes; a check not asked reads 0) from the model's raw answer, when
    there is one, and ``g:<name>`` for every feature of the grader's evidence, plus
    ``g:settled`` (the grader's verdict, 0.5 when it settled nothing)."""
    out: dict[str, float] = {}
    if raw is not None:
        main = raw["main"]
        out[MAIN] = float(main.get("p_yes", main.get("expected", 0.0)))
        for i, c in enumerate(raw.get("checks", []), 1):
            out[f"check{i}"] = 0.0 if c is None else float(c)
    if evidence is not None:
        out[GRADER_PREFIX + "settled"] = 0.5 if evidence.verdict is None else float(evidence.verdict)
        out.update({GRADER_PREFIX + k: float(v) for k, v in evidence.features.items()})
    return out


def is_model_feature(name: str) -> bool:
    return not name.startswith(GRADER_PREFIX)


@dataclass(frozen=True)
class RuleFit:
    """A rubric family's decision rule over named ``features``: ``z = bias + sum w[name] f[name]``
    (a feature without a weight counts 0); binary ``yes iff z >= threshold``, scale ``clip(z, lo, hi)``.
    With ``settle`` a grader's settled verdict is the answer as it is (no model call). A rule that
    weighs no model feature needs no model call at all. The default (``{"main": 1}``, no settling)
    is the model's main answer alone: p_yes >= 0.5, or E."""

    kind: Literal["binary", "scale"]
    weights: Mapping[str, float] = field(default_factory=lambda: {MAIN: 1.0})
    bias: float = 0.0
    threshold: float = 0.5
    settle: bool = False
    n_dev: int = 0  # labelled dev items it was fitted on (0: the unfitted default)
    grader: str = ""  # id@version of the grader whose features it weighs
    # the gate: P(the reply answers nothing: another question's reply, the question echoed, a
    # drift) = sigmoid(gate_bias + sum gate[name] f[name]); such a reply gets ``gate_value``
    # (scale: the expected value mixes it in; binary: a gated reply is never "yes")
    gate: Mapping[str, float] = field(default_factory=dict)
    gate_bias: float = 0.0
    gate_value: float = 1.0

    def score(self, feats: Mapping[str, float]) -> float:
        return self.bias + sum(w * feats.get(name, 0.0) for name, w in self.weights.items())

    def answers_nothing(self, feats: Mapping[str, float]) -> float:
        """The gate's probability that the reply answers nothing (0 without a gate)."""
        if not self.gate:
            return 0.0
        z = self.gate_bias + sum(w * feats.get(name, 0.0) for name, w in self.gate.items())
        return 1.0 / (1.0 + math.exp(-max(-60.0, min(60.0, z))))

    def uses_grader(self, evidence: Evidence | None) -> bool:
        """Whether the grader's evidence enters this rule's verdicts (settled ones, or weighed features)."""
        return evidence is not None and (
            self.settle or any(w != 0.0 and not is_model_feature(n) for n, w in {**self.weights, **self.gate}.items()))

    @property
    def needs_model(self) -> bool:
        return any(w != 0.0 and is_model_feature(name) for name, w in {**self.weights, **self.gate}.items())

    def checks_used(self, n_checks: int) -> list[int]:
        """Indices of the checks with a weight (the others need not be asked)."""
        return [i for i in range(n_checks) if self.weights.get(f"check{i + 1}", 0.0) != 0.0]

    def apply(self, feats: Mapping[str, float], lo: int = 1, hi: int = 5) -> float:
        z, gated = self.score(feats), self.answers_nothing(feats)
        if self.kind == "binary":
            return self.gate_value if gated >= 0.5 else (1.0 if z >= self.threshold else 0.0)
        quality = min(float(hi), max(float(lo), z))
        return round(gated * self.gate_value + (1.0 - gated) * quality, 4)

    def decide(self, raw: dict[str, Any] | None, evidence: Evidence | None, lo: int = 1, hi: int = 5) -> float:
        """The verdict: the grader's settled one where this rule takes it, else the rule's value."""
        if self.settle and evidence is not None and evidence.verdict is not None:
            return float(evidence.verdict)
        return self.apply(features(raw, evidence), lo, hi)


@dataclass
class Calibration:
    """The decision rules of one model, by rubric family; ``version`` names the fit."""

    version: str
    model: str
    families: dict[str, RuleFit] = field(default_factory=dict)
    fitted_on: str = ""

    def rule(self, rubric: Rubric) -> RuleFit:
        return self.families.get(family_of(rubric.id)) or RuleFit(rubric.kind)

    def to_json(self) -> str:
        body = {"format": FIT_FORMAT, "version": self.version, "model": self.model, "fitted_on": self.fitted_on,
                "families": {k: {**asdict(v), "weights": dict(v.weights)} for k, v in sorted(self.families.items())}}
        return json.dumps(body, ensure_ascii=False, indent=2) + "\n"

    @classmethod
    def from_json(cls, text: str, source: str = "calibration") -> Calibration:
        try:
            body = json.loads(text)
            if body.get("format") != FIT_FORMAT:
                raise ValueError(f"format {body.get('format')!r} is not {FIT_FORMAT} (an older fit: make a new one "
                                 f"with `vocalbench judge-fit`)")
            families = {k: RuleFit(**{**v, "weights": {str(n): float(w) for n, w in v["weights"].items()}})
                        for k, v in body.get("families", {}).items()}
            return cls(version=str(body["version"]), model=str(body["model"]), families=families,
                       fitted_on=str(body.get("fitted_on", "")))
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            raise ValueError(f"{source}: not a judge calibration ({type(exc).__name__}: {exc})") from None

    @classmethod
    def load(cls, path: str | Path) -> Calibration:
        p = Path(path)
        return cls.from_json(p.read_text(encoding="utf-8"), str(p))


def shipped_calibration() -> Calibration:
    """The local judge's fit that ships with the package (judge/calibration/local_fit.json)."""
    text = resources.files("vocalbench.judge.calibration").joinpath("local_fit.json").read_text("utf-8")
    return Calibration.from_json(text, "vocalbench/judge/calibration/local_fit.json")


def rules_first(rule: RuleFit, fit: str, rubric: Rubric, evidence: Evidence | None) -> Verdict | None:
    """The one rules-first decision (the judge, the dry-run planner and judge-check all ask it):
    the grader's settled verdict where the family's rule settles, else the rule's value where it
    weighs no model feature (the grader's features only), else None: the model must be asked."""
    settled = rule.settle and evidence is not None and evidence.verdict is not None
    if not settled and rule.needs_model:
        return None
    value = rule.decide(None, evidence, rubric.lo, rubric.hi)
    grader = evidence.grader if evidence is not None and rule.uses_grader(evidence) else None
    note = evidence.note if evidence is not None else None
    if settled:
        return Verdict(value, decided_by=DecidedBy(source="grader", grader=grader, note=note))
    return Verdict(value, decided_by=DecidedBy(source="rule", grader=grader, fit=fit, note=note))


class CalibratedJudge(Judge):
    """The judge role answering single tokens; ``id`` is ``model+<calibration version>@host``."""

    reads_evidence = True  # the graders' evidence, semantic features included, feeds its rules

    def __init__(self, llm: ChatLLM, calibration: Calibration, *, ask_every_check: bool = False,
                 **opts: Any) -> None:
        opts.setdefault("max_tokens", 1)
        super().__init__(llm, **opts)
        self.calibration = calibration
        # a run asks only the checks its rule weighs; judge-check asks all, since a fit needs every feature
        self.ask_every_check = ask_every_check
        self.id = f"{self.model}+{calibration.version}@{self.host}"

    @property
    def cache_model(self) -> str:
        # the raw probabilities are cached, independent of the fit
        return f"{self.model}+token-probabilities"

    def questions(self, rubric: Rubric, fields: dict[str, str]) -> list[list[dict[str, str]]]:
        """The messages of each question: the rubric's own, then its checks (same prefix)."""
        msgs = rubric.render(fields)
        item = msgs[-1]["content"]
        out = [[msgs[0], {"role": "user", "content": f"{item}\n\n{instruction(rubric)}"}]]
        for check in rubric.checks:
            out.append([msgs[0], {"role": "user", "content": f"{item}\n\n{check}\n{instruction(rubric, scale=False)}"}])
        return out

    def requests(self, rubric: Rubric, fields: dict[str, str]) -> list[list[dict[str, str]]]:
        """The questions one verdict sends: the main one and the checks its rule weighs."""
        every = self.questions(rubric, fields)
        return [every[k] for k in self.to_ask(rubric, every)]

    def prompt_key(self, requests: list[list[dict[str, str]]]) -> object:
        return requests

    def to_ask(self, rubric: Rubric, questions: list[list[dict[str, str]]]) -> list[int]:
        """Indices of the questions to send: the main one and the checks the rule weighs, or all
        of them when asked to, or when every answer is already cached (by judge-check, or a run
        under an earlier fit)."""
        every = list(range(len(questions)))
        if self.ask_every_check:
            return every
        used = [0] + [1 + i for i in self.calibration.rule(rubric).checks_used(len(questions) - 1)]
        if len(used) < len(questions) and self.cache.get_verdict(
                self.cache_model, self.cache_endpoint, rubric.hash, self.prompt_hash(questions)) is not None:
            return every
        return used

    def without_model(self, rubric: Rubric, evidence: Evidence | None) -> Verdict | None:
        """The verdict without the model, where the family's rule allows one (:func:`rules_first`)."""
        return rules_first(self.calibration.rule(rubric), self.calibration.version, rubric, evidence)

    def decided_by(self, prompt_hash: str, rubric: Rubric | None = None, evidence: Evidence | None = None
                   ) -> DecidedBy:
        """A model verdict's provenance: the model (``model@host``), its prompt, the fit that mapped
        its answers and the grader whose features the rule weighed beside them."""
        rule = self.calibration.rule(rubric) if rubric is not None else None
        grader = evidence.grader if evidence is not None and rule is not None and rule.uses_grader(evidence) else None
        return DecidedBy(source="model", model=self.llm.id, prompt_hash=prompt_hash, fit=self.calibration.version,
                         grader=grader)

    async def _ask(self, messages: list[dict[str, str]], spent: _Spent) -> ChatResult:
        """One question, retried on transient endpoint errors with backoff, within what is left of
        the verdict's ``call_seconds`` (``spent``: the verdict's time in attempts and waits so far,
        not its queueing for the endpoint; past it a ``TimeoutError``); others propagate. The one
        retry policy: :mod:`vocalbench.retry`."""
        from vocalbench.retry import Deadline, RetryPolicy, call_with_retries

        async def once(deadline: Deadline) -> ChatResult:
            async with endpoint_semaphore(self.endpoint, self.concurrency):
                started = time.perf_counter()
                try:
                    async with asyncio.timeout(deadline.left):
                        return await self.llm.chat(messages, max_tokens=self.max_tokens, temperature=0.0,
                                                   seed=self.seed, top_logprobs=TOP_LOGPROBS)
                finally:
                    deadline.spent += time.perf_counter() - started

        deadline = Deadline(self.call_seconds, spent.seconds)
        try:
            return await call_with_retries(once, RetryPolicy(self.max_attempts, self.backoff, self.max_backoff),
                                           deadline)
        finally:
            spent.seconds = deadline.spent

    async def evaluate(self, rubric: Rubric, fields: dict[str, str], *, subset: str, sample_id: str,
                       evidence: Evidence | None = None) -> Verdict:
        """Judge one item: the grader's evidence first (settled, or enough for the family's rule),
        else every question of the rubric that the rule weighs, then the rule. Never raises for
        endpoint or answer problems (``judge_unavailable``, ``judge_error:*``, ``judge_unparseable``)."""
        if not self.ask_every_check:
            without_model = self.without_model(rubric, evidence)
            if without_model is not None:
                return without_model
        return await self.ask_model(rubric, fields, subset=subset, sample_id=sample_id, evidence=evidence)

    async def ask_model(self, rubric: Rubric, fields: dict[str, str], *, subset: str, sample_id: str,
                        evidence: Evidence | None = None) -> Verdict:
        """The model's answers to the rubric's questions, mapped by the family's rule."""
        raw, verdict = await self.model_answers(rubric, fields, subset=subset, sample_id=sample_id)
        if raw is None:
            return verdict
        return self.from_answers(rubric, raw, evidence, verdict.trace)

    def from_answers(self, rubric: Rubric, raw: dict[str, Any], evidence: Evidence | None,
                     trace: JudgeTrace | None) -> Verdict:
        """The verdict of the model's raw answers (asked now, cached or recorded) under the rule."""
        value = self.calibration.rule(rubric).decide(raw, evidence, rubric.lo, rubric.hi)
        if trace is not None:
            trace = trace.model_copy(update={"raw": json.dumps({**raw, "evidence": _evidence_json(evidence)},
                                                               ensure_ascii=False)})
        return Verdict(value, trace, decided_by=self.decided_by(trace.prompt_hash if trace else "", rubric, evidence))

    async def model_answers(self, rubric: Rubric, fields: dict[str, str], *, subset: str, sample_id: str
                            ) -> tuple[dict[str, Any] | None, Verdict]:
        """The model's raw answers to the rubric's questions (cached): ``({"main", "checks"},
        verdict with the trace)``, or ``(None, verdict with the error)``."""
        from vocalbench.components.llm import error_text, is_transient

        every = self.questions(rubric, fields)
        asked = self.to_ask(rubric, every)
        questions = [every[k] for k in asked]
        prompt_hash, trace, hit = self.lookup(rubric, questions, subset, sample_id)
        if hit is not None and hit.trace is not None:
            return json.loads(hit.trace.raw), hit
        answers: list[dict[str, float]] = []
        tokens = [0, 0]
        spent = _Spent()  # one deadline (call_seconds) for every question of the verdict
        t0 = time.perf_counter()
        # one item's questions at a time per endpoint, so they share the prompt prefix on the server
        async with limiter(f"judge-item:{self.endpoint}", 1):
            for k, messages in enumerate(questions):
                try:
                    res = await self._ask(messages, spent)
                except Exception as exc:  # noqa: BLE001 - becomes the verdict's error
                    error = "judge_unavailable" if is_transient(exc) else f"judge_error:{type(exc).__name__}"
                    self._log(subset, sample_id, prompt_hash, False, (None, None), time.perf_counter() - t0, error)
                    return None, Verdict(None, trace(error_text(exc)), error=error)
                tokens[0] += res.prompt_tokens or 0
                tokens[1] += res.completion_tokens or 0
                read = read_probabilities(rubric, res.top_logprobs, scale=rubric.kind == "scale" and k == 0)
                if read is None:
                    kept = json.dumps({"question": k, "answer": res.text, "top_logprobs": res.top_logprobs},
                                      ensure_ascii=False)
                    self._log(subset, sample_id, prompt_hash, False, (tokens[0], tokens[1]),
                              time.perf_counter() - t0, "judge_unparseable")
                    return None, Verdict(None, trace(kept), error="judge_unparseable")
                answers.append(read)
        checks: list[float | None] = [None] * (len(every) - 1)
        for k, answer in zip(asked[1:], answers[1:]):
            checks[k - 1] = answer["p_yes"]
        raw_obj: dict[str, Any] = {"main": answers[0], "checks": checks}
        raw = json.dumps(raw_obj)
        value = self.calibration.rule(rubric).decide(raw_obj, None, rubric.lo, rubric.hi)
        self.cache.put_verdict(self.cache_model, self.cache_endpoint, rubric.hash, prompt_hash, value, raw)
        self._log(subset, sample_id, prompt_hash, False, (tokens[0], tokens[1]), time.perf_counter() - t0, None)
        return raw_obj, Verdict(value, trace(raw))


@dataclass
class _Spent:
    """A verdict's seconds in attempts and backoff so far (bounded by the judge's ``call_seconds``)."""

    seconds: float = 0.0


def _evidence_json(evidence: Evidence | None) -> dict[str, Any] | None:
    if evidence is None:
        return None
    return {"grader": evidence.grader, "verdict": evidence.verdict, "features": dict(evidence.features),
            "note": evidence.note}
