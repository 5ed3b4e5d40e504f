"""The stress suite with the real local judge (llama.cpp, the embedded 1.5B model) on a handful of
items: a family whose rule asks the model for the items its grader leaves open."""

from __future__ import annotations

from typing import Any

import pytest

from vocalbench.judge import graders
from vocalbench.judge.calibration import load_items
from vocalbench.judge.stress import run_stress, transformations

pytestmark = [pytest.mark.slow, pytest.mark.judge]


async def test_stress_suite_asks_the_local_judge_for_open_transformed_replies(tmp_path, monkeypatch):
    from vocalbench.judge.factory import local_judge

    monkeypatch.setenv("VOCALBENCH_CACHE", str(tmp_path))
    items = [i for i in load_items("test", ["reasoning_binary_zh"])
             if graders.grade(i.rubric, i.fields, i.meta).verdict is None][:2]
    judge = local_judge(lazy=True)
    calls = 0
    chat = judge.llm.chat

    async def counted(*args: Any, **kwargs: Any) -> Any:
        nonlocal calls
        calls += 1
        return await chat(*args, **kwargs)

    monkeypatch.setattr(judge.llm, "chat", counted)
    figures, outcomes = await run_stress(judge, items, {}, limit=1, pools=("check",), concurrency=1)
    fam = figures["reasoning_binary_zh"]
    assert set(fam["transformations"]) == set(transformations("reasoning_binary_zh", "binary"))
    assert all(o.error is None for o in outcomes) and fam["errors"] == 0
    assert 0 < calls <= len(outcomes)  # a handful: open originals and transformed replies, nothing settled
    assert fam["passed"] is False and fam["why"].startswith("not validated: partial stress run")
    assert fam["transformations"]["padding"]["n"] == 1 and fam["transformations"]["padding"]["passed"] is None
