"""CallableSystem: a plain Python callable as a system under test, timed by the harness like any other."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import numpy as np

from vocalbench.audio import write
from vocalbench.concurrency import limiter
from vocalbench.records import AudioRef, Sample, Turn
from vocalbench.systems.base import Waiting, collect
from vocalbench.systems.inprocess import CallableSystem

SR = 16000


def make_samples(tmp: Path, n: int, subset: str = "single_round", history: int = 0) -> list[Sample]:
    """``n`` samples sharing one real 0.8 s query wav, with ``history`` alternating text turns."""
    t = np.arange(int(0.8 * SR)) / SR
    wav = write(tmp / "query.wav", (0.2 * np.sin(2 * np.pi * 330.0 * t) * np.hanning(t.size)).astype(np.float32), SR)
    turns = [Turn(role="user" if i % 2 == 0 else "assistant", text=f"turn {i}") for i in range(history)]
    return [Sample(id=f"{subset}-{i:03d}", subset=subset, lang="en", index=i, question=f"question {i}",
                   audio=AudioRef(path=str(wav)), history=turns) for i in range(n)]


def test_a_generator_streams_text_and_audio_and_sees_the_query(tmp_path: Path) -> None:
    heard: list[tuple[int, int, list[dict[str, str]]]] = []

    def answer(audio: np.ndarray, rate: int, history: list[dict[str, str]]) -> Iterator[object]:
        heard.append((audio.size, rate, history))
        yield "Hello"
        time.sleep(0.05)  # compute between chunks: timed as the gap between them
        yield (np.full(SR // 4, 0.1, dtype=np.float32), SR)
        yield " there"
        yield (np.full(SR // 4, 0.1, dtype=np.float32), SR)

    sample = make_samples(tmp_path, 1, subset="multi_round", history=2)[0]
    system = CallableSystem(answer, name="gen")

    async def go() -> object:
        await system.start()
        return await collect(system, sample)

    got = asyncio.run(go())
    assert got.error is None and got.text == "Hello there" and got.chunks == 2  # type: ignore[attr-defined]
    assert got.audio is not None and got.audio.size == SR // 2  # type: ignore[attr-defined]
    t = got.timings  # type: ignore[attr-defined]
    assert t.first_text is not None and t.first_audio is not None and t.first_audio - t.first_text >= 0.04
    assert heard == [(int(0.8 * SR), SR, [{"role": "user", "text": "turn 0"}, {"role": "assistant", "text": "turn 1"}])]
    assert system.describe()["callable"].endswith("answer")


def test_plain_functions_and_async_generators(tmp_path: Path) -> None:
    loop_threads: set[int] = set()

    def whole(audio: np.ndarray, rate: int, history: list[dict[str, str]]) -> tuple[str, ...] | str:
        loop_threads.add(threading.get_ident())
        return "all at once"

    async def streamed(audio: np.ndarray, rate: int, history: list[dict[str, str]]) -> AsyncIterator[object]:
        yield "async "
        await asyncio.sleep(0)
        yield "reply"

    sample = make_samples(tmp_path, 1)[0]

    async def go() -> tuple[object, object, int]:
        a, b = CallableSystem(whole), CallableSystem(streamed)
        await a.start()
        await b.start()
        return await collect(a, sample), await collect(b, sample), threading.get_ident()

    first, second, loop_thread = asyncio.run(go())
    assert first.text == "all at once" and second.text == "async reply"  # type: ignore[attr-defined]
    assert loop_threads and loop_thread not in loop_threads  # a plain function computes off the event loop


def test_calls_are_serialised_and_the_queue_is_not_latency(tmp_path: Path) -> None:
    """Two samples at once: the second waits (``Waiting``) and its clock starts when it is called."""
    def slow(audio: np.ndarray, rate: int, history: list[dict[str, str]]) -> Iterator[object]:
        time.sleep(0.3)
        yield "done"

    samples = make_samples(tmp_path, 2)
    system = CallableSystem(slow)

    async def events_of(sample: object) -> list[object]:
        return [ev async for ev in system.stream(sample)]  # type: ignore[arg-type]

    async def go() -> tuple[list[object], list[object], list[object]]:
        await system.start()
        a, b = await asyncio.gather(events_of(samples[0]), events_of(samples[1]))
        timed = await asyncio.gather(*(collect(system, s) for s in samples))
        return a, b, list(timed)

    a, b, timed = asyncio.run(go())
    assert sum(isinstance(ev, Waiting) for ev in [*a, *b]) == 1
    assert all(0.25 < t.timings.first_text < 0.55 for t in timed)  # type: ignore[attr-defined]


def test_start_fixes_the_harness_limit_at_one_unless_concurrent(tmp_path: Path) -> None:
    """The generator's ``concurrency(system.resource, N)`` shares the limit the system set first."""
    async def limits() -> tuple[int, int]:
        one, many = CallableSystem(lambda a, r, h: "x", name="one"), CallableSystem(lambda a, r, h: "x", name="many",
                                                                                     concurrent=True)
        await one.start()
        await many.start()
        return limiter(one.resource, 8)._value, limiter(many.resource, 8)._value

    assert asyncio.run(limits()) == (1, 8)


def test_a_bad_piece_fails_the_attempt_with_its_reason(tmp_path: Path) -> None:
    def odd(audio: np.ndarray, rate: int, history: list[dict[str, str]]) -> Iterator[object]:
        yield 42

    got = asyncio.run(collect(CallableSystem(odd), make_samples(tmp_path, 1)[0]))
    assert got.error is not None and got.error.type == "bad_reply_piece" and "int" in got.error.message
