"""The LLM judge: rubric -> prompt -> JSON answer -> Verdict, with cache, retries and accounting.

- Answers are requested as JSON (``{"reason": ..., "score": N}`` for scale rubrics,
  ``{"reason": ..., "verdict": "yes"|"no"}`` for binary ones) and parsed robustly
  (``parse_scale``/``parse_binary`` also accept fenced JSON, the official scripts' first ``[n]``,
  ``Score: 4``, yes/no tags). A stated score outside the scale (``[0]`` on 1-5) is unscored
  ``judge_out_of_scale`` at once, never moved onto the scale.
- Transient failures (429, 5xx, timeouts, connection errors) and unparseable replies are retried
  a bounded number of times with exponential backoff; then the verdict carries
  ``judge_unavailable`` or ``judge_unparseable`` (raw reply kept). Other errors give
  ``judge_error:<ExceptionType>`` at once.
- Verdicts are cached persistently by (model, base URL host, rubric hash, prompt hash): a hit makes
  no request and is marked ``trace.cached``.
- Requests to one endpoint share a concurrency limit (a semaphore per base URL and event loop).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import random
import re
import time
from collections.abc import Callable
from typing import Any

from vocalbench.components.base import ChatLLM, ChatResult
from vocalbench.components.cache import ResultCache
from vocalbench.concurrency import limiter
from vocalbench.judge.rubrics.record import Evidence, Rubric, Verdict
from vocalbench.limits import JUDGE_CALL_SECONDS
from vocalbench.records import DecidedBy, JudgeTrace

_FENCE = re.compile(r"```(?:json|JSON)?\s*(.*?)```", re.DOTALL)
_SCORE_LABEL = re.compile(r"[\"']?(?:score|rating|grade|评分|分数|得分)[\"']?\s*[:：=]\s*[\"'\[]?\s*(-?\d+(?:\.\d+)?)",
                          re.IGNORECASE)
_INTEGER = re.compile(r"(?<![\d.])\d+(?![\d.]*\d)")
_BINARY_PATTERNS = (
    re.compile(r"\[\[\s*(yes|no)\s*\]\]", re.IGNORECASE),
    re.compile(r"[\"']?(?:verdict|answer|judgement|judgment|decision|result)[\"']?\s*[:：=]\s*[\"']?\s*(yes|no)\b",
               re.IGNORECASE),
)
_YES = {"yes", "true", "y", "是", "对", "正确"}
_NO = {"no", "false", "n", "否", "不", "错误"}


def _json_objects(raw: str) -> list[dict[str, Any]]:
    """Every JSON object found in ``raw``: the whole text, fenced blocks, then {...} spans."""
    candidates = [raw.strip(), *(m.strip() for m in _FENCE.findall(raw))]
    candidates += re.findall(r"\{[^{}]*\}", raw)
    out: list[dict[str, Any]] = []
    for c in candidates:
        try:
            obj = json.loads(c)
        except ValueError:
            continue
        if isinstance(obj, dict):
            out.append(obj)
    return out


def _number(v: object) -> float | None:
    if isinstance(v, bool):
        return None
    if isinstance(v, (int, float)):
        return float(v)
    if isinstance(v, str):
        m = re.fullmatch(r"\s*(-?\d+(?:\.\d+)?)\s*(?:/\s*\d+)?\s*", v)
        return float(m.group(1)) if m else None
    return None


def _bracket(hi: int) -> re.Pattern[str]:
    """The official scripts' score pattern: one digit 0..hi in single brackets (``[4]``, also inside
    ``[[4]]``); ``[10]`` does not match it, so ``[10] ... [4]`` reads 4."""
    return re.compile(rf"\[([0-{min(hi, 9)}])\]")


def stated_score(raw: str, hi: int) -> float | None:
    """The score a judge reply states, in this order: a JSON ``score``/``rating``/``grade``, the
    FIRST bracketed digit 0..hi (as the official scripts read ``[n]``), ``Score: n``, the whole
    reply being a number. None when it states none; the value may lie outside the scale."""
    for obj in _json_objects(raw):
        for key in ("score", "rating", "grade"):
            if key in obj:
                return _number(obj[key])
    for pattern in (_bracket(hi), _SCORE_LABEL):
        found = pattern.findall(raw)
        if found:
            return float(found[0])
    return _number(raw.strip().strip("."))


def parse_scale(raw: str, lo: int, hi: int) -> float | None:
    """The score in a judge reply, within lo..hi; None when there is none or it lies outside the
    scale (:func:`out_of_scale` tells the two apart)."""
    if not raw:
        return None
    stated = stated_score(raw, hi)
    if stated is not None:
        return stated if lo <= stated <= hi else None
    # free text: the first integer within lo..hi
    for m in _INTEGER.finditer(raw):
        if lo <= int(m.group(0)) <= hi:
            return float(m.group(0))
    return None


def out_of_scale(raw: str, lo: int, hi: int) -> bool:
    """Whether the reply states a score outside lo..hi (e.g. the official regex's ``[0]`` on a 1-5
    scale): such a verdict is unscored ``judge_out_of_scale``, never moved onto the scale."""
    stated = stated_score(raw, hi) if raw else None
    return stated is not None and not lo <= stated <= hi


def _yes_no(v: object) -> bool | None:
    if isinstance(v, bool):
        return v
    if isinstance(v, str):
        w = v.strip().strip(".!。").lower()
        if w in _YES:
            return True
        if w in _NO:
            return False
    return None


def parse_binary(raw: str, key: str = "verdict", labels: tuple[str, str] = ("yes", "no")) -> bool | None:
    """The yes/no verdict in a judge reply; None when there is none.

    ``key`` is the JSON key the rubric asked for and ``labels`` its (yes, no) values, e.g.
    ``("compliance", "refusal")``; plain yes/no words are understood too.
    """
    if not raw:
        return None
    for obj in _json_objects(raw):
        for k in (key, "verdict", "answer", "judgement", "judgment", "decision", "result"):
            if k in obj:
                value = obj[k]
                if isinstance(value, str) and value.strip().strip(".!。").lower() in labels:
                    return value.strip().strip(".!。").lower() == labels[0]
                return _yes_no(value)
    for pattern in _BINARY_PATTERNS:
        found = pattern.findall(raw)
        if found:
            return found[-1].lower() == "yes"
    return _yes_no(raw)


def answer_format(rubric: Rubric) -> str:
    """The output instruction appended to the rubric's system prompt."""
    if rubric.answer:
        return f"Respond with one JSON object and nothing else: {rubric.answer}"
    if rubric.kind == "binary":
        return ('Respond with one JSON object and nothing else: '
                '{"reason": "<one short sentence>", "verdict": "yes" or "no"}')
    return ('Respond with one JSON object and nothing else: '
            f'{{"reason": "<one short sentence>", "score": <integer from {rubric.lo} to {rubric.hi}>}}')


def endpoint_semaphore(endpoint: str, limit: int) -> asyncio.Semaphore:
    """The shared concurrency limit of one endpoint within the running event loop."""
    return limiter(f"endpoint:{endpoint}", limit)


class Judge:
    """The judge role (scoring/base.py ``Judge``) over any ``ChatLLM``; ``id`` is ``model@host``."""

    reads_evidence = False  # a judge that writes its own verdict ignores the graders' evidence

    def __init__(self, llm: ChatLLM, *, concurrency: int = 2, max_attempts: int = 4, backoff: float = 1.0,
                 max_backoff: float = 30.0, max_tokens: int = 256, seed: int = 0,
                 call_seconds: float = JUDGE_CALL_SECONDS,
                 cache: ResultCache | None = None, store: Any = None,
                 on_call: Callable[[dict[str, Any]], None] | None = None) -> None:
        self.llm = llm
        self.id = llm.id
        self.model, _, self.host = llm.id.rpartition("@")
        self.endpoint = getattr(llm, "base_url", llm.id)
        # the judge cache's key: scheme, host, port and path (the embedded server: its model)
        self.cache_endpoint = str(getattr(llm, "endpoint", self.host))
        self.concurrency = concurrency
        self.max_attempts = max(1, max_attempts)
        self.backoff = backoff
        self.max_backoff = max_backoff
        self.call_seconds = call_seconds  # every attempt of one verdict and the waits between them
        self.max_tokens = max_tokens
        self.seed = seed
        self._cache = cache
        self.store = store
        self.on_call = on_call

    @property
    def cache(self) -> ResultCache:
        if self._cache is None:
            from vocalbench.components.cache import default_cache

            self._cache = default_cache()
        return self._cache

    def messages(self, rubric: Rubric, fields: dict[str, str]) -> list[dict[str, str]]:
        """The chat messages sent for these fields (the rubric's, plus the answer format)."""
        msgs = rubric.render(fields)
        msgs[0] = {"role": "system", "content": f"{msgs[0]['content']}\n\n{answer_format(rubric)}"}
        return msgs

    # -- what the calibrated judge (judge/calibrated.py) changes ------------------------
    def requests(self, rubric: Rubric, fields: dict[str, str]) -> list[list[dict[str, str]]]:
        """The requests one verdict sends: here one, its JSON answer."""
        return [self.messages(rubric, fields)]

    def prompt_key(self, requests: list[list[dict[str, str]]]) -> object:
        """What the verdict cache hashes of those requests."""
        return requests[0]

    @property
    def cache_model(self) -> str:
        """The model part of this judge's cache keys."""
        return self.model

    async def complete(self, messages: list[dict[str, str]]) -> ChatResult:
        """One request to the endpoint: a JSON answer."""
        return await self.llm.chat(messages, max_tokens=self.max_tokens, json_mode=True, temperature=0.0,
                                   seed=self.seed)

    def read(self, rubric: Rubric, res: ChatResult) -> tuple[float | None, str]:
        """(verdict value or None when unparseable, the raw answer kept in the trace and cache)."""
        if rubric.kind == "binary":
            v = parse_binary(res.text, rubric.verdict_key, rubric.labels)
            return (None if v is None else float(v)), res.text
        return parse_scale(res.text, rubric.lo, rubric.hi), res.text

    def cached_value(self, rubric: Rubric, value: float | None, raw: str) -> float | None:
        """The verdict value of a cache hit."""
        return value

    @staticmethod
    def prompt_hash(prompt: object) -> str:
        """The cache key of what is sent."""
        return hashlib.sha256(json.dumps(prompt, ensure_ascii=False, sort_keys=True).encode()).hexdigest()[:16]

    def lookup(self, rubric: Rubric, prompt: object, subset: str, sample_id: str
               ) -> tuple[str, Callable[..., JudgeTrace], Verdict | None]:
        """(prompt hash, trace maker, the cached verdict or None) for what would be sent."""
        prompt_hash = self.prompt_hash(prompt)

        def trace(raw: str, cached: bool = False) -> JudgeTrace:
            return JudgeTrace(model=self.id, prompt_hash=prompt_hash, rubric=rubric.ref, raw=raw, cached=cached)

        hit = self.cache.get_verdict(self.cache_model, self.cache_endpoint, rubric.hash, prompt_hash)
        if hit is None:
            return prompt_hash, trace, None
        self._log(subset, sample_id, prompt_hash, True, (None, None), 0.0, None)
        return prompt_hash, trace, Verdict(self.cached_value(rubric, hit[0], hit[1]), trace(hit[1], cached=True),
                                           decided_by=self.decided_by(prompt_hash))

    def _log(self, subset: str | None, sample_id: str | None, prompt_hash: str, cached: bool,
             tokens: tuple[int | None, int | None], seconds: float, error: str | None) -> None:
        record = {"subset": subset, "sample_id": sample_id, "model": self.id, "prompt_hash": prompt_hash,
                  "cached": cached, "prompt_tokens": tokens[0], "completion_tokens": tokens[1],
                  "seconds": seconds, "error": error}
        if self.store is not None:
            self.store.log_judge_call(**record)
        if self.on_call is not None:
            self.on_call(record)

    def decided_by(self, prompt_hash: str) -> DecidedBy:
        """The provenance of a verdict this judge's model gave for the prompt ``prompt_hash``."""
        return DecidedBy(source="model", model=self.id, prompt_hash=prompt_hash)

    def without_model(self, rubric: Rubric, evidence: Evidence | None) -> Verdict | None:
        """The verdict where no model need be asked (rules first), else None: a judge that writes
        its own verdicts, as the official judge does, always asks its model."""
        return None

    async def evaluate(self, rubric: Rubric, fields: dict[str, str], *, subset: str, sample_id: str,
                       evidence: Evidence | None = None) -> Verdict:
        """Judge one item: rules first (:meth:`without_model`), else the model. Never raises for
        endpoint or reply problems."""
        return self.without_model(rubric, evidence) or await self.ask_model(
            rubric, fields, subset=subset, sample_id=sample_id, evidence=evidence)

    async def ask_model(self, rubric: Rubric, fields: dict[str, str], *, subset: str, sample_id: str,
                        evidence: Evidence | None = None) -> Verdict:
        """Judge one item against ``rubric`` as the official judge is asked (``evidence`` of the
        rules-first graders is not used here); never raises for endpoint or reply problems."""
        from vocalbench.components.llm import error_text
        from vocalbench.retry import Deadline, RetryPolicy, classify

        messages = self.messages(rubric, fields)
        prompt_hash, trace, hit = self.lookup(rubric, messages, subset, sample_id)
        if hit is not None:
            return hit

        sent = messages
        raw: str | None = None
        error = "judge_unavailable"
        tokens = [0, 0]
        seconds = 0.0
        # the one retry policy (vocalbench.retry): jittered backoff, its classification, and the
        # verdict's deadline over attempts and waits (not queueing for the endpoint)
        policy = RetryPolicy(self.max_attempts, self.backoff, self.max_backoff)
        rng, deadline = random.Random(), Deadline(self.call_seconds)
        wait_hint: float | None = None  # the last transient failure's Retry-After
        for attempt in range(self.max_attempts):
            if attempt:
                pause = deadline.bound(policy.delay(attempt, rng, wait_hint))
                await asyncio.sleep(pause)
                deadline.spent += pause
            if deadline.passed:
                error, raw = "judge_unavailable", f"no verdict within {self.call_seconds:g} s"
                break
            t0 = started = time.perf_counter()
            try:
                async with endpoint_semaphore(self.endpoint, self.concurrency):
                    started = time.perf_counter()
                    async with asyncio.timeout(deadline.left):
                        res = await self.complete(sent)
            except Exception as exc:  # noqa: BLE001 - classified below: transient or not
                seconds += time.perf_counter() - t0
                deadline.spent += time.perf_counter() - started
                failure = classify(exc)
                if failure.retryable:
                    error, raw, wait_hint = "judge_unavailable", error_text(exc), failure.retry_after
                    continue
                error = f"judge_error:{type(exc).__name__}"
                self._log(subset, sample_id, prompt_hash, False, (None, None), seconds, error)
                return Verdict(None, trace(error_text(exc)), error=error)
            seconds += res.seconds
            deadline.spent += time.perf_counter() - started
            wait_hint = None
            tokens[0] += res.prompt_tokens or 0
            tokens[1] += res.completion_tokens or 0
            value, kept = self.read(rubric, res)
            if value is not None:
                self.cache.put_verdict(self.cache_model, self.cache_endpoint, rubric.hash, prompt_hash, value, kept)
                self._log(subset, sample_id, prompt_hash, False, (tokens[0], tokens[1]), seconds, None)
                return Verdict(value, trace(kept), decided_by=self.decided_by(prompt_hash))
            if rubric.kind == "scale" and out_of_scale(res.text, rubric.lo, rubric.hi):
                self._log(subset, sample_id, prompt_hash, False, (tokens[0], tokens[1]), seconds, "judge_out_of_scale")
                return Verdict(None, trace(kept), error="judge_out_of_scale")
            error, raw = "judge_unparseable", kept
            sent = [*messages, {"role": "assistant", "content": res.text},
                    {"role": "user", "content": f"That was not in the required format. {answer_format(rubric)}"}]
        self._log(subset, sample_id, prompt_hash, False, (tokens[0], tokens[1]), seconds, error)
        return Verdict(None, trace(raw or ""), error=error)
