"""The judge's relevance of the answer to an interruption: what it is shown, and a real rating."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from vocalbench.duplex.records import TimedWord
from vocalbench.duplex.scenarios import Part, Scenario
from vocalbench.duplex.score import MEASURES, judge_relevance, relevance_evaluator, relevance_fields
from vocalbench.runner.store import RunStore


def _interruption(lang: str = "en") -> Scenario:
    first = Part("Tell me a long story about a dragon who lives in a library.", 0.5, 3.5, "v", 0.0, True)
    second = Part("Wait, actually, what is the capital of Japan?", 9.0, 11.0, "v", 0.0, True)
    return Scenario("interruption-000", "interruption", lang, "x.wav", 20.0, [first, second], 3.5, (9.0, 11.0))


def _words(*items: tuple[float, str]) -> list[TimedWord]:
    return [TimedWord(start=t, end=t + 0.3, text=w) for t, w in items]


def test_the_judge_sees_the_interruption_and_what_was_said_from_its_start() -> None:
    sc = _interruption()
    said = _words((4.0, "Once"), (4.4, "upon"), (4.8, "a"), (5.2, "time"), (11.5, "Tokyo"), (11.9, "is"),
                  (12.2, "the"), (12.5, "capital."))
    assert relevance_fields(sc, said) == {"question": "Wait, actually, what is the capital of Japan?",
                                          "reply": "Tokyo is the capital."}
    assert relevance_fields(sc, _words((4.0, "Once"), (4.4, "upon"))) is None  # nothing after it: nothing to rate
    smooth = Scenario("smooth-000", "smooth", "en", "x.wav", 9.0, [sc.parts[0]], 3.5, None)
    assert relevance_fields(smooth, said) is None
    assert "relevance" in MEASURES["interruption"]


@pytest.mark.judge
@pytest.mark.slow
def test_the_local_judge_rates_an_answer_above_one_that_ignores_the_interruption(tmp_path: Path) -> None:
    """Two real verdicts of the local judge (the unfitted family: the model's own 1-5 answer), each
    a relevance Score in the run store under the judge's evaluator, with who decided it."""
    from vocalbench.judge.factory import build_judge
    from vocalbench.judge.spec import JudgeSpec

    sc = _interruption()
    judge = build_judge(JudgeSpec.parse("local"), lazy=True)
    answered = _words((11.5, "The"), (11.8, "capital"), (12.1, "of"), (12.3, "Japan"), (12.6, "is"), (12.9, "Tokyo."))
    ignored = _words((11.5, "And"), (11.8, "so"), (12.1, "the"), (12.3, "dragon"), (12.6, "read"), (12.9, "another"),
                     (13.2, "old"), (13.5, "book."))
    store = RunStore(tmp_path)

    async def both() -> tuple[object, object]:
        a = await judge_relevance(judge, store, sc, "interruption-000/r1", answered)
        b = await judge_relevance(judge, store, sc, "interruption-000/r2", ignored)
        assert a is not None and b is not None
        return a, b

    good, bad = asyncio.run(both())
    assert good.value is not None and bad.value is not None, (good, bad)  # type: ignore[attr-defined]
    assert good.value > bad.value  # type: ignore[attr-defined]
    [kept] = [s for s in store.scores_of("duplex", relevance_evaluator(judge.id), ["interruption-000/r1"])]
    assert kept.value == good.value and kept.decided_by is not None and kept.decided_by.source == "model"  # type: ignore[attr-defined]
    assert str(kept.details["rubric"]).startswith("duplex_relevance_en@")

    # the run's pass over these replays reuses the stored verdicts and says the judge is not
    # validated for this family (no labelled replies of it exist)
    from vocalbench.duplex.run import _rate_relevance

    rows: list[dict[str, dict[str, object]]] = [{"metrics": {}}, {"metrics": {}}, {"metrics": {}}]
    rated = [(sc, "interruption-000/r1", answered, rows[0]), (sc, "interruption-000/r2", ignored, rows[1]),
             (sc, "interruption-000/r3", _words((4.0, "Once")), rows[2])]
    unrated, validity = _rate_relevance(rated, store, JudgeSpec.parse("local"), "en", quiet=True)  # type: ignore[arg-type]
    assert [r["metrics"]["relevance"] for r in rows] == [good.value, bad.value, None] and unrated == {}  # type: ignore[attr-defined]
    assert validity == {"family": "duplex_relevance_en", "validated": False, "status": "not checked"}
    assert _rate_relevance(rated, store, JudgeSpec.parse("none"), "en", quiet=True) == (  # type: ignore[arg-type]
        {"judge_not_configured": 2}, None)
    store.close()
