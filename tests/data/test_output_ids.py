"""Output ids in imports: exact ids win, only a subset's pre-rename ids map by number, others are reported."""

from __future__ import annotations

import json
from pathlib import Path

from vocalbench.data.outputs import ImportStats, official_replies
from vocalbench.records import Reply, Sample


def _samples(subset: str, prefix: str, n: int, digits: int) -> list[Sample]:
    return [Sample(id=f"{prefix}-{i:0{digits}d}", subset=subset, lang="en", index=i, question=f"q{i}")
            for i in range(n)]


def _import(tmp_path: Path, samples: list[Sample], ids_and_texts: list[tuple[str, str]]) -> tuple[dict[str, Reply], ImportStats]:
    """Replies of ``samples`` from an official outputs file of (question_id, prediction) records."""
    subset = samples[0].subset
    (tmp_path / "json").mkdir(exist_ok=True)
    lines = (json.dumps({"question_id": i, "prediction": t}) for i, t in ids_and_texts)
    (tmp_path / "json" / f"{subset}.json").write_text("\n".join(lines), encoding="utf-8")
    stats = ImportStats()
    return {r.sample_id: r for r in official_replies(tmp_path, subset, samples, stats)}, stats


def test_an_unrelated_id_is_reported_never_mapped(tmp_path: Path) -> None:
    # was: unrelated-0003 mapped onto knowledge-0003 by its number and overwrote the exact match
    replies, stats = _import(tmp_path, _samples("knowledge", "knowledge", 4, 4), [
        ("knowledge-0003", "exact"), ("unrelated-0003", "other"), ("unrelated-0001", "other")])
    assert replies["knowledge-0003"].text == "exact" and "original_id" not in replies["knowledge-0003"].extra
    assert replies["knowledge-0001"].error is not None and replies["knowledge-0001"].error.type == "missing_reply"
    assert any("2 output record(s) match no knowledge item" in w and "unrelated-0003, unrelated-0001" in w
               for w in stats.warnings)


def test_pre_rename_ids_map_by_number_but_exact_ids_win(tmp_path: Path) -> None:
    replies, stats = _import(tmp_path, _samples("single_round", "single_round", 2, 3), [
        ("single_round-000", "exact"), ("chat-000", "legacy duplicate"), ("chat-001", "legacy")])
    assert replies["single_round-000"].text == "exact"
    assert replies["single_round-001"].text == "legacy" and replies["single_round-001"].extra["original_id"] == "chat-001"
    assert any("chat-000 (record 2) maps onto single_round-000, which has its own output" in w for w in stats.warnings)
