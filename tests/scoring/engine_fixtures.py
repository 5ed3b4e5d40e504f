"""Fixtures shared by the engine tests (imported by name into each test module)."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path
from typing import Any

import pytest

SHARED = Path(__file__).resolve().parents[2].parent / "shared" / "vocalbench"
LLAMA_OMNI = SHARED / "en" / "outputs" / "llama-omni"
QWEN3_OMNI = SHARED / "zh" / "outputs" / "qwen3-omni"


@pytest.fixture(scope="session")
def shared() -> Path:
    if not (SHARED / "en" / "json").is_dir() or not LLAMA_OMNI.is_dir():
        pytest.skip(f"official VocalBench metadata/outputs not found at {SHARED}")
    return SHARED


@pytest.fixture(autouse=True)
def isolated_cache(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh evaluator/judge cache per test (VOCALBENCH_CACHE), also seen by subprocesses."""
    d = tmp_path_factory.mktemp("vbcache")
    monkeypatch.setenv("VOCALBENCH_CACHE", str(d))
    return d


def cli(*argv: str) -> int:
    from vocalbench.cli import main

    return main(list(argv))


def summary(run: Path) -> dict[str, Any]:
    return json.loads((run / "summary.json").read_text(encoding="utf-8"))


def score_rows(run: Path) -> list[tuple[str, str, str, str]]:
    db = sqlite3.connect(str(run / "store.sqlite"))
    try:
        return db.execute("SELECT subset, sample_id, name, evaluator FROM scores").fetchall()
    finally:
        db.close()


def meta(run: Path, key: str) -> Any:
    db = sqlite3.connect(str(run / "store.sqlite"))
    try:
        row = db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return None if row is None else json.loads(row[0])
    finally:
        db.close()


def copy_outputs(src: Path, dst: Path, subsets: list[str]) -> Path:
    """A writable copy of some official output files (json/, json_asr/, wav/)."""
    for sub in ("json", "json_asr", "wav"):
        for name in subsets:
            for p in (src / sub).glob(f"{name}*"):
                target = dst / sub / p.name
                target.parent.mkdir(parents=True, exist_ok=True)
                if p.is_dir():
                    shutil.copytree(p, target)
                else:
                    shutil.copyfile(p, target)
    return dst


def strip_timing(s: dict[str, Any]) -> dict[str, Any]:
    """A summary without the fields that legitimately differ between runs (timings, usage)."""
    out = json.loads(json.dumps(s))
    out.get("meta", {}).pop("scoring_seconds", None)
    out.get("provenance", {}).pop("judge_usage", None)
    out.get("provenance", {}).get("specs", {}).pop("judge", None)
    return out
