"""Every summary row counts every item of its subset: an evaluator that raises on one item (what a
lost Ray task does) leaves that item unscored with its reason, never out of the row's n; a row
that would count fewer items stops scoring before summary.json is written."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from engine_fixtures import SHARED, cli, shared  # noqa: F401  (fixture)
from spoken_replies import spoken_release

from vocalbench.records import Reply
from vocalbench.run_config import RunConfig
from vocalbench.scoring.base import SubsetResult
from vocalbench.scoring.engine import Components, ScoringIncomplete, check_counts, score_run


class OneFailingTranscript(Components):
    """Transcripts are the replies' own text, but one item's evaluator call raises."""

    def __init__(self, cfg: RunConfig, failing: str) -> None:
        super().__init__(cfg)
        self.failing = failing

    async def transcribe(self, reply: Reply, lang: str | None) -> str:
        if reply.sample_id == self.failing:
            raise RuntimeError("the replica holding this call was lost")
        return reply.text or ""


def test_an_item_whose_evaluator_raised_is_counted_unscored(tmp_path: Path, shared: Path) -> None:  # noqa: F811
    rel, script = spoken_release(tmp_path, SHARED, 4)
    run = tmp_path / "run"
    assert cli("generate", "--system", f"scripted:{script}", "--data", str(rel), "--lang", "en", "--out", str(run),
               "--quiet", "--no-warmup") == 0
    cfg = RunConfig.load(run).updated(judge="none", mos="none", emotion="none", quiet=True)
    failing = sorted(p.stem for p in (run / "audio").rglob("*.wav"))[1]
    summary = asyncio.run(score_run(run, cfg, progress=False, components=OneFailingTranscript(cfg, failing)))
    wer = summary.subsets["wer"]
    assert (wer.n, wer.scored, wer.unscored, wer.complete) == (4, 3, 1, False)
    assert wer.extra["unscored_reasons"] == {"scorer_error:RuntimeError": 1}
    assert summary.subsets["utmos"].n == 4


def test_a_row_short_of_items_stops_before_the_summary() -> None:
    row = SubsetResult(metric="wer", value=1.0, n=3, scored=3, unscored=0, system_errors=0, complete=True)
    check_counts({"wer": row}, "single_round", 3)
    with pytest.raises(ScoringIncomplete, match="wer over 3 items where the run holds 4"):
        check_counts({"wer": row}, "single_round", 4)
