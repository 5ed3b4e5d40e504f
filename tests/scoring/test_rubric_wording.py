"""No rubric repeats official prompt wording: no run of 12 words (English) or 20 characters
(Mandarin) of any rubric file appears in the official judge prompts.

The official text is not in the project: scripts/fidelity/official_fingerprint.py wrote only
truncated SHA-256 hashes of its runs into data/official_prompt_runs.txt.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from wording_runs import copied_runs, run_hashes

from vocalbench.judge import rubrics

FINGERPRINT = set((Path(__file__).parent / "data" / "official_prompt_runs.txt").read_text().split())


def _rubric_text(rubric_id: str) -> str:
    """The rubric's criterion text: everything after the header (ids are file names, not wording)."""
    return (rubrics.FOLDER / f"{rubric_id}.md").read_text("utf-8").split("\n---\n", 1)[1]


@pytest.mark.parametrize("rubric_id", rubrics.available())
def test_rubric_repeats_no_official_run(rubric_id: str) -> None:
    assert copied_runs(_rubric_text(rubric_id), FINGERPRINT) == []


def test_the_check_finds_a_copied_run() -> None:
    """A run shared with the fingerprinted text is found, in either language; a paraphrase is not."""
    source = ("Rate the reply on how vivid its images are and how well it keeps to the request. "
              "评分时看回复的意象是否鲜明、语言是否凝练、结构是否完整以及是否紧扣题目的要求。")
    fingerprint = run_hashes(source)
    copied = "Please rate the reply on how vivid its images are and how well it keeps to the request today."
    assert copied_runs(copied, fingerprint) != []
    assert copied_runs("请你在评分时看回复的意象是否鲜明、语言是否凝练、结构是否完整。", fingerprint) != []
    assert copied_runs("Score the answer by the freshness of its pictures and whether it stays on the task.",
                       fingerprint) == []
    assert len(FINGERPRINT) > 10_000 and all(len(h) == 12 for h in FINGERPRINT)
