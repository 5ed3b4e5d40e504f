"""``--dry-run`` plans the judge calls of a pass without calling anything, and the judge ledger
books what the real pass then made, per judge model.

Official llama-omni outputs (safety, 400 items) scored by the OpenAI-compatible judge double; the
local (calibrated) judge is planned without starting its server.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from engine_fake_judge import FakeJudgeServer
from engine_fixtures import LLAMA_OMNI, cli, isolated_cache, shared, summary  # noqa: F401

from vocalbench.judge import rubrics
from vocalbench.judge.factory import build_judge
from vocalbench.judge.plan import PlanningJudge, count_tokens, parse_price
from vocalbench.judge.spec import JudgeSpec


def _import(shared: Path, run: Path) -> None:
    assert cli("import", "--outputs", str(LLAMA_OMNI), "--data", str(shared), "--lang", "en", "--out", str(run),
               "--subsets", "safety", "--quiet") == 0


def _plan(capsys: pytest.CaptureFixture[str], run: Path, *flags: str) -> dict:
    capsys.readouterr()
    assert cli("score", str(run), "--dry-run", "--json", *flags) == 0
    return json.loads(capsys.readouterr().out)


def test_dry_run_matches_the_pass_and_the_ledger(shared, tmp_path, capsys):
    run, again = tmp_path / "run", tmp_path / "again"
    _import(shared, run)
    config_before = (run / "config.json").read_text()
    with FakeJudgeServer(delay=0.0) as srv:
        plan = _plan(capsys, run, "--judge", srv.spec, "--judge-price", "2.5,10")
        assert srv.count() == 0 and not (run / "summary.json").exists()
        assert (run / "config.json").read_text() == config_before  # a dry run changes nothing
        row = plan["subsets"]["safety"]
        assert (row["items"], row["verdicts"], row["cached"], row["requests"]) == (400, 400, 0, 400)
        assert row["prompt_tokens"] > 400 * 100 and row["completion_tokens"] == 400 * 40
        assert row["cost"] == pytest.approx(round((row["prompt_tokens"] * 2.5 + row["completion_tokens"] * 10) / 1e6, 4))
        assert plan["subsets"]["total"]["verdicts"] == 400 and plan["judge"] == "fake-judge@127.0.0.1"

        assert cli("score", str(run), "--judge", srv.spec, "--quiet") == 0
        assert srv.count() == 400  # what the plan said
        ledger = summary(run)["provenance"]["judge_usage"]
        assert list(ledger) == ["fake-judge@127.0.0.1"]
        booked = ledger["fake-judge@127.0.0.1"]
        assert (booked["calls"], booked["cache_hits"], booked["errors"]) == (400, 0, 0)
        assert booked["completion_tokens"] == 400 * 12 and booked["prompt_tokens"] > 0 and booked["seconds"] > 0

        # resumed: nothing left to judge; a fresh run of the same items finds every verdict cached
        assert _plan(capsys, run, "--judge", srv.spec)["subsets"]["safety"]["items"] == 0
        _import(shared, again)
        cached = _plan(capsys, again, "--judge", srv.spec)["subsets"]["safety"]
        assert (cached["items"], cached["verdicts"], cached["cached"]) == (400, 0, 400)
        assert srv.count() == 400


def test_local_judge_is_planned_per_question_without_a_server(shared, tmp_path, capsys):
    run = tmp_path / "run"
    _import(shared, run)
    plan = _plan(capsys, run)  # the run's judge: local (the calibrated llama.cpp judge)
    assert plan["judge"].startswith("qwen2.5-1.5b+cal-")
    safety = plan["subsets"]["safety"]  # the shipped rule weighs the graders alone: no model request
    assert (safety["items"], safety["settled"], safety["verdicts"], safety["requests"]) == (400, 400, 0, 0)
    # the model requests of the whole pass and their time on the embedded server (2 cores)
    total = plan["subsets"]["total"]["requests"]
    assert plan["model_seconds"] == round(total * plan["seconds_per_request"], 1)


async def test_planning_judge_counts_the_requests_of_a_calibrated_verdict():
    from vocalbench.judge.rubrics.record import Evidence

    judge = PlanningJudge(build_judge(JudgeSpec("local"), lazy=True))  # starts no server
    # binary reasoning: the family's rule asks the model for the items its grader leaves open
    binary = rubrics.load("reasoning_binary_en")
    assert judge.judge.calibration.rule(binary).settle and judge.judge.calibration.rule(binary).needs_model
    fields = {"question": "Why is the sky blue?", "reference": "Air scatters blue light most.",
              "reply": "Because of the sea."}
    v = await judge.evaluate(binary, fields, subset="reasoning", sample_id="q1",
                             evidence=Evidence("answers@1", None, {}, "span"))
    row = judge.rows["reasoning"]
    assert v.value == 1.0 and (row.verdicts, row.requests) == (1, 1)  # the main question, no checks
    # an item the family's grader settles costs no request, in the plan as in a run
    await judge.evaluate(binary, {"question": "2+2?", "reference": "4", "reply": "four"}, subset="reasoning",
                         sample_id="q2", evidence=Evidence("answers@1", 1.0, {}, "4 = 4"))
    assert (judge.rows["reasoning"].requests, judge.rows["reasoning"].settled) == (1, 1)
    # and a family whose rule weighs the grader's features alone (single-round since issue 27) none
    single = rubrics.load("single_round_en")
    await judge.evaluate(single, {"question": "What is a cat?", "reply": "A small feline."}, subset="single_round",
                         sample_id="q3")
    assert judge.rows["single_round"].requests == 0


def test_token_estimate_and_price():
    assert 8 <= count_tokens("Hello, how are you doing today? I am fine.") <= 16
    assert 5 <= count_tokens("你好，今天过得怎么样？我很好。") <= 14
    assert parse_price("0.4,1.6") == (0.4, 1.6)
    for bad in ("1", "a,b", "-1,2"):
        with pytest.raises(ValueError, match="--judge-price"):
            parse_price(bad)

