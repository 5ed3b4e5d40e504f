"""Output ids in imports: exact ids win, only a subset's pre-rename ids map by number, others are reported."""

from __future__ import annotations

import json
from pathlib import Path

from vocalbench.data.outputs import ImportStats, official_replies
from vocalbench.records import Sample


def _samples(subset: str, prefix: str, n: int, digits: int) -> list[Sample]:
    return [Sample(id=f"{prefix}-{i:0{digits}d}", subset=subset, lang="en", index=i, question=f"q{i}")
            for i in range(n)]


def _write(tmp_path: Path, name: str, records: list[dict[str, str]]) -> Path:
    (tmp_path / "json").mkdir(exist_ok=True)
    (tmp_path / "json" / f"{name}.json").write_text("\n".join(json.dumps(r) for r in records), encoding="utf-8")
    return tmp_path


def test_an_unrelated_id_is_reported_never_mapped(tmp_path: Path) -> None:
    # was: unrelated-0003 mapped onto knowledge-0003 by its number and overwrote the exact match
    out = _write(tmp_path, "knowledge", [
        {"question_id": "knowledge-0003", "prediction": "exact"},
        {"question_id": "unrelated-0003", "prediction": "other"},
        {"question_id": "unrelated-0001", "prediction": "other"},
    ])
    stats = ImportStats()
    replies = {r.sample_id: r for r in official_replies(out, "knowledge", _samples("knowledge", "knowledge", 4, 4), stats)}
    assert replies["knowledge-0003"].text == "exact" and "original_id" not in replies["knowledge-0003"].extra
    assert replies["knowledge-0001"].error is not None and replies["knowledge-0001"].error.type == "missing_reply"
    assert any("2 output record(s) match no knowledge item" in w and "unrelated-0003, unrelated-0001" in w
               for w in stats.warnings)


def test_pre_rename_ids_map_by_number_but_exact_ids_win(tmp_path: Path) -> None:
    out = _write(tmp_path, "single_round", [
        {"question_id": "single_round-000", "prediction": "exact"},
        {"question_id": "chat-000", "prediction": "legacy duplicate"},
        {"question_id": "chat-001", "prediction": "legacy"},
    ])
    stats = ImportStats()
    replies = {r.sample_id: r for r in official_replies(out, "single_round", _samples("single_round", "single_round", 2, 3), stats)}
    assert replies["single_round-000"].text == "exact"
    assert replies["single_round-001"].text == "legacy" and replies["single_round-001"].extra["original_id"] == "chat-001"
    assert any("chat-000 (record 2) maps onto single_round-000, which has its own output" in w for w in stats.warnings)
