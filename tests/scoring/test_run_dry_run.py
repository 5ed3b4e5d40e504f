"""``run --dry-run`` on the built-in mini set: judge calls of replies not generated yet, nothing written.

Uses the user's cache, where the mini set is already built (an isolated cache would rebuild it).
"""

from __future__ import annotations

import json

import pytest

from vocalbench.cli import main


def test_run_dry_run_plans_replies_not_generated_yet(tmp_path, capsys):
    script = tmp_path / "s.jsonl"
    script.write_text('{"id": "*", "text": "A reply."}\n')
    out = tmp_path / "run"
    assert main(["run", "--dry-run", "--json", "--system", f"scripted:{script}", "--data", "mini", "--lang", "en",
               "--subsets", "safety,single_round,knowledge", "--judge-price", "1,1", "--out", str(out)]) == 0
    plan = json.loads(capsys.readouterr().out)
    assert not out.exists()  # nothing generated, nothing written
    rows = plan["subsets"]
    assert "knowledge" not in rows  # matched by rules, no judge
    for name in ("safety", "single_round"):
        row = rows[name]  # every item planned: decided by rule (settled) or asked of the model (verdicts)
        assert row["items"] == row["assumed_replies"] == row["verdicts"] + row["settled"] > 0
    assert rows["total"]["cost"] == pytest.approx((rows["total"]["prompt_tokens"] + rows["total"]["completion_tokens"]) / 1e6,
                                                  abs=1e-4)
