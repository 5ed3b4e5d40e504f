"""The real local judge: llama.cpp server started (or reused) by ensure_server, Qwen2.5 1.5B."""

from __future__ import annotations

import time

import pytest

from vocalbench.components.cache import ResultCache
from vocalbench.judge.rubrics import Rubric

pytestmark = pytest.mark.judge

CORRECT = Rubric(
    id="t_correct", version="1", kind="binary",
    system=("You check answers to factual questions. Compare the model's answer with the reference answer. "
            "Say yes if the model's answer states the same fact as the reference, no if it states a different one."),
    template="Question: {question}\nReference answer: {reference}\nModel's answer: {answer}",
)
CASES = {
    "en": ("What is the capital of France?", "Paris", "The capital of France is Paris.",
           "The capital of France is Berlin."),
    "zh": ("中国的首都是哪座城市？", "北京", "中国的首都是北京。", "中国的首都是上海。"),
}


@pytest.fixture(scope="module")
def server():
    from vocalbench.components.llm_server import ensure_server

    t0 = time.perf_counter()
    handle = ensure_server()
    print(f"\nllama.cpp server ready in {time.perf_counter() - t0:.1f} s at {handle.base_url} (owned={handle.owned})")
    yield handle
    handle.stop()  # stops it when no other process uses it


def test_server_is_reused_within_the_process(server):
    from vocalbench.components.llm_server import ensure_server

    again = ensure_server()
    assert again is server
    assert again.base_url.startswith("http://127.0.0.1:")


def test_other_processes_reuse_it_and_never_stop_it_while_it_is_used(server):
    import json
    import subprocess
    import sys

    from vocalbench.components.llm_server import BUSY_TIMEOUT, _answers

    code = ("import json; from vocalbench.components.llm_server import ensure_server as e; h = e(); "
            "h.stop(); print(json.dumps([h.port, h.owned]))")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120)
    port, owned = json.loads(r.stdout.strip().splitlines()[-1])
    assert port == server.port and owned is False
    # the borrower's stop() gave up its lease only: this process still leases the server
    assert _answers(server.port, server.model_alias, BUSY_TIMEOUT)  # it may be busy with another client


@pytest.mark.parametrize("lang", ["en", "zh"])
async def test_judge_tells_right_from_wrong(server, lang, tmp_path):
    from vocalbench.components.llm import OpenAIChat
    from vocalbench.judge.json_judge import Judge

    question, reference, right, wrong = CASES[lang]
    judge = Judge(OpenAIChat(server.model_alias, server.base_url, key_env=()),
                  cache=ResultCache(tmp_path / "judge.sqlite"))
    t0 = time.perf_counter()
    good = await judge.evaluate(CORRECT, {"question": question, "reference": reference, "answer": right},
                                subset="knowledge", sample_id=f"{lang}-1")
    t1 = time.perf_counter()
    bad = await judge.evaluate(CORRECT, {"question": question, "reference": reference, "answer": wrong},
                               subset="knowledge", sample_id=f"{lang}-2")
    t2 = time.perf_counter()
    print(f"\n{lang}: right -> {good.value} ({t1 - t0:.1f} s) {good.trace.raw!r}\n"
          f"{lang}: wrong -> {bad.value} ({t2 - t1:.1f} s) {bad.trace.raw!r}")
    assert good.error is None and bad.error is None
    assert good.value == 1.0 and bad.value == 0.0

    # The same call again through a client whose requests fail: the only way to answer is the cache
    # (keyed by the endpoint, so the same base URL), so a correct answer proves no request was made.
    offline = Judge(OpenAIChat(server.model_alias, server.base_url, key_env=()),
                    cache=ResultCache(tmp_path / "judge.sqlite"), max_attempts=1)

    async def no_request(*args: object, **kwargs: object) -> None:
        raise AssertionError("the judge asked the endpoint although the verdict is cached")

    offline.llm.chat = no_request  # type: ignore[method-assign]
    cached = await offline.evaluate(CORRECT, {"question": question, "reference": reference, "answer": right},
                                    subset="knowledge", sample_id=f"{lang}-1")
    assert cached.trace.cached and cached.value == good.value and cached.error is None


async def test_a_second_client_waits_instead_of_cutting_a_streaming_reply(server):
    """A judge call arriving while the cascade streams its reply must not end that stream early
    (llama-cpp-python's server interrupts by default; a cut stream looks like an empty reply)."""
    import asyncio

    from openai import AsyncOpenAI

    client = AsyncOpenAI(base_url=server.base_url, api_key="unused")
    messages = [{"role": "user", "content": "Count from one to twenty in words, separated by commas."}]

    async def streamed() -> tuple[str, str | None]:
        text, finish = "", None
        stream = await client.chat.completions.create(model=server.model_alias, messages=messages, stream=True,
                                                      max_tokens=24, temperature=0)
        async for chunk in stream:
            if chunk.choices:
                text += chunk.choices[0].delta.content or ""
                finish = chunk.choices[0].finish_reason or finish
        return text, finish

    async def other() -> str:
        await asyncio.sleep(0.5)  # arrives while the first one streams
        res = await client.chat.completions.create(model=server.model_alias, max_tokens=1, temperature=0,
                                                   messages=[{"role": "user", "content": "Say yes."}])
        return res.choices[0].message.content or ""

    (text, finish), _ = await asyncio.gather(streamed(), other())
    assert finish in ("length", "stop") and len(text.split(",")) >= 4, (finish, text)
