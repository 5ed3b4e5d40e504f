"""Datasets by name through huggingface_hub, offline: small releases laid out in a temporary HF
cache (``HF_HUB_CACHE``) and resolved by huggingface_hub's own ``snapshot_download`` with
``HF_HUB_OFFLINE=1`` in a child process (the variable is read when huggingface_hub is imported).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from conftest import official_items, write_release  # type: ignore[import-not-found]

from vocalbench.data.hub import HubRef, parse, pinned
from vocalbench.data.official import DataError

pytest.importorskip("huggingface_hub", reason="datasets by name need huggingface_hub (pip install 'vocalbench[hub]')")

SHA1, SHA2 = "1" * 40, "2" * 40


def lay_out(hub: Path, repo: str, sha: str, branch: str = "main") -> Path:
    """The HF cache folders of one dataset commit (``refs/<branch>`` -> ``snapshots/<sha>``)."""
    folder = hub / f"datasets--{repo.replace('/', '--')}"
    (folder / "refs").mkdir(parents=True, exist_ok=True)
    (folder / "refs" / branch).write_text(sha)
    return folder / "snapshots" / sha


def vb(tmp: Path, hub: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_HUB_CACHE": str(hub), "VOCALBENCH_CACHE": str(tmp / "vbcache")}
    env.pop("HF_HOME", None)
    return subprocess.run([sys.executable, "-m", "vocalbench.cli", *args], capture_output=True, text=True, env=env,
                          timeout=300)


def test_hf_name_offline_generate_score_and_resume_keep_the_revision(shared, tmp_path):
    hub = tmp_path / "hub"
    write_release(lay_out(hub, "vbtest/tiny", SHA1), {"knowledge": official_items("en", "knowledge", 3)})
    script = tmp_path / "s.jsonl"
    script.write_text('{"id": "*", "text": "Leonardo da Vinci.", "audio": {"tone": 220, "seconds": 0.2}}\n')
    run = tmp_path / "run"
    gen = ["generate", "--system", f"scripted:{script}", "--data", "hf:vbtest/tiny", "--lang", "en", "--out", str(run),
           "--quiet"]
    r = vb(tmp_path, hub, *gen)
    assert r.returncode == 0, r.stderr
    r = vb(tmp_path, hub, "score", str(run), "--judge", "none", "--asr", "none", "--mos", "none", "--emotion", "none",
           "--quiet")
    assert r.returncode == 0, r.stderr
    summary = json.loads((run / "summary.json").read_text())
    assert summary["provenance"]["data"] == {"hf": "vbtest/tiny", "requested": None, "revision": SHA1}
    assert summary["subsets"]["knowledge"]["n"] == 3
    assert json.loads((run / "config.json").read_text())["data"] == "hf:vbtest/tiny"

    # a new commit on main: a resumed run keeps the commit it started with, a new run takes the new one
    write_release(lay_out(hub, "vbtest/tiny", SHA2), {"knowledge": official_items("en", "knowledge", 5)})
    assert vb(tmp_path, hub, *gen).returncode == 0
    fresh = tmp_path / "fresh"
    assert vb(tmp_path, hub, *gen[:-3], "--out", str(fresh), "--quiet").returncode == 0
    import sqlite3

    for folder, n, sha in ((run, 3, SHA1), (fresh, 5, SHA2)):
        db = sqlite3.connect(str(folder / "store.sqlite"))
        try:
            assert db.execute("SELECT COUNT(*) FROM samples").fetchone()[0] == n
            meta = json.loads(db.execute("SELECT value FROM meta WHERE key = 'data_source'").fetchone()[0])
        finally:
            db.close()
        assert meta["revision"] == sha


def test_vocalbench_zh_by_name_in_the_parquet_layout(shared, tmp_path):
    pa = pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq

    from vocalbench import audio

    hub = tmp_path / "hub"
    snap = lay_out(hub, "VocalNet/VocalBench-zh", SHA1)
    rows = []
    for i, rec in enumerate(official_items("zh", "chinese_knowledge", 3)):
        wav = audio.to_wav_bytes(0.1 * np.sin(2 * np.pi * (300 + 20 * i) * np.arange(4000) / 16000), 16000)
        rows.append({**{k: v for k, v in rec.items() if k != "Audio"}, "audio": {"bytes": wav, "path": f"{i}.wav"}})
    (snap / "chinese_knowledge").mkdir(parents=True)
    pq.write_table(pa.Table.from_pylist(rows), str(snap / "chinese_knowledge" / "test-00000-of-00001.parquet"))
    r = vb(tmp_path, hub, "validate", "VocalNet/VocalBench-zh", "--lang", "zh", "--json")
    assert r.returncode == 0, r.stderr
    report = json.loads(r.stdout)
    assert report["items"] == 3 and not report.get("errors")
    # a pinned revision that is not in the cache, offline: one clear line naming the dataset
    r = vb(tmp_path, hub, "validate", f"VocalNet/VocalBench-zh@{SHA2}", "--lang", "zh", "--metadata-only")
    assert r.returncode != 0
    assert f"hf:VocalNet/VocalBench-zh@{SHA2}: not in the HF cache and HF_HUB_OFFLINE is set" in r.stderr


def test_names_and_pins(tmp_path, monkeypatch):
    assert parse("VocalNet/VocalBench") == HubRef("VocalNet/VocalBench")
    assert parse("hf:someone/set@v1.2") == HubRef("someone/set", "v1.2")
    assert parse("mini") is None and parse(str(tmp_path)) is None
    assert parse("other/name") is None  # only the VocalBench releases are taken without hf:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "VocalNet" / "VocalBench").mkdir(parents=True)
    assert parse("VocalNet/VocalBench") is None  # a local folder of that name wins
    with pytest.raises(DataError, match="expected hf:OWNER/NAME"):
        parse("hf:not a repo")
    recorded = {"hf": "someone/set", "revision": SHA1}
    assert pinned("hf:someone/set", recorded) == f"hf:someone/set@{SHA1}"
    assert pinned("hf:someone/set@v2", recorded) == "hf:someone/set@v2"  # an explicit revision is kept
    assert pinned("hf:other/set", recorded) == "hf:other/set"
