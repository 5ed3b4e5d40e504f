"""Reproduce the official knowledge numbers through the CLI; resumable, protocol-aware re-scoring."""

from __future__ import annotations

from pathlib import Path

import pytest
from engine_fixtures import LLAMA_OMNI, cli, isolated_cache, meta, score_rows, shared, summary  # noqa: F401

SUBSET_KEYS = {"metric", "value", "n", "scored", "unscored", "system_errors", "complete", "ci95", "extra"}


@pytest.fixture()
def run(shared: Path, tmp_path: Path) -> Path:
    out = tmp_path / "llama-omni"
    assert cli("import", "--format", "official", "--outputs", str(LLAMA_OMNI), "--data", str(shared),
               "--lang", "en", "--out", str(out), "--system", "LLaMA-Omni", "--subsets", "knowledge") == 0
    return out


def test_knowledge_v2_and_v1_reproduce_the_official_numbers(run: Path) -> None:
    assert cli("score", str(run), "--subsets", "knowledge", "--judge", "none", "--quiet") == 0
    s = summary(run)
    k = s["subsets"]["knowledge"]
    assert set(k) == SUBSET_KEYS
    assert k["value"] == pytest.approx(54.6, abs=0.1)  # text replies (v2)
    assert (k["n"], k["scored"], k["unscored"], k["system_errors"], k["complete"]) == (2000, 2000, 0, 0, True)
    assert k["ci95"][0] < 54.6 < k["ci95"][1] and k["ci95"][1] - k["ci95"][0] < 6
    assert k["extra"]["word_boundary_accuracy"] == pytest.approx(53.0, abs=0.1)
    assert s["dimensions"]["knowledge"] == pytest.approx(54.6, abs=0.1)
    assert (s["lang"], s["protocol"], s["system"]) == ("en", "v2", "LLaMA-Omni")
    assert set(s) >= {"lang", "protocol", "system", "subsets", "dimensions", "overall", "provenance"}
    assert s["overall"]["value"] is None and "reasoning" in s["overall"]["missing"]
    assert s["overall"]["partial"] == {"value": pytest.approx(5.46, abs=0.01), "max": 10}
    assert s["provenance"]["leaderboard_comparable"] is False and s["provenance"]["judge"] is None
    rows = len(score_rows(run))
    assert rows == 6000  # main + word_boundary per item, and wer per item from the imported transcripts

    # a second score does no work and writes no rows
    assert cli("score", str(run), "--judge", "none", "--quiet") == 0
    assert len(score_rows(run)) == rows and meta(run, "last_score")["scored_items"] == 0

    # v1: the ASR transcripts shipped in json_asr
    assert cli("score", str(run), "--subsets", "knowledge", "--protocol", "v1", "--judge", "none", "--quiet") == 0
    s1 = summary(run)
    assert s1["protocol"] == "v1" and s1["subsets"]["knowledge"]["value"] == pytest.approx(37.35, abs=0.1)
    assert s1["subsets"]["knowledge"]["extra"]["word_boundary_accuracy"] == pytest.approx(35.85, abs=0.1)
    assert s1["provenance"]["asr_transcripts"].startswith("imported")
    assert '"protocol": "v1"' in (run / "config.json").read_text()
    evaluators = {ev for *_, ev in score_rows(run)}
    assert evaluators == {"knowledge_en.v2@1", "knowledge_en.v1@1"}  # both kept, summary reads the current one

    # back to v2: nothing rescored, same numbers as the first time
    assert cli("score", str(run), "--protocol", "v2", "--judge", "none", "--quiet") == 0
    assert meta(run, "last_score")["scored_items"] == 0
    assert summary(run)["subsets"]["knowledge"] == k


def test_changed_judge_leaves_rule_based_subsets_alone(run: Path) -> None:
    assert cli("score", str(run), "--judge", "none", "--quiet") == 0
    rows = sorted(score_rows(run))
    assert cli("score", str(run), "--judge", "openai:another-judge@http://127.0.0.1:9/v1", "--quiet") == 0
    assert sorted(score_rows(run)) == rows  # knowledge does not use a judge: same evaluator key, no work
    assert summary(run)["subsets"]["knowledge"]["value"] == pytest.approx(54.6, abs=0.1)


def test_score_errors_are_user_errors(run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli("score", str(tmp_path / "nope")) == 2
    assert "not a run folder" in capsys.readouterr().err
    assert cli("score", str(run), "--subsets", "creativity", "--judge", "none") == 2
    assert "creativity have no samples in this run" in capsys.readouterr().err
