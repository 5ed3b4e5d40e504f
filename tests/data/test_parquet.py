"""The HF parquet layout: configs with an ``audio`` struct column load like the official json."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from conftest import official_items, write_release  # type: ignore[import-not-found]

from vocalbench.data import load_samples
from vocalbench.data.official import DataError

pytestmark = pytest.mark.usefixtures("tmp_cache")  # converted releases are cached under VOCALBENCH_CACHE

pa = pytest.importorskip("pyarrow", reason="parquet support needs pyarrow (pip install 'vocalbench[parquet]')")
pq = pytest.importorskip("pyarrow.parquet")


def _write_config(root: Path, config: str, records: list[dict], layout: str) -> None:
    from vocalbench import audio

    rows = []
    for i, rec in enumerate(records):
        t = np.arange(4000) / 16000
        wav = audio.to_wav_bytes(0.1 * np.sin(2 * np.pi * (300 + 20 * i) * t), 16000)
        row = {k: v for k, v in rec.items() if k != "Audio"}
        row["audio"] = {"bytes": wav, "path": f"{rec['Qid']}.wav"}
        rows.append(row)
    table = pa.Table.from_pylist(rows)
    path = root / config / "test-00000-of-00001.parquet" if layout == "folder" else root / f"{config}-00000-of-00001.parquet"
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(table, str(path))


def test_parquet_configs_match_the_official_json(shared: Path, tmp_path: Path) -> None:
    items = {"chinese_knowledge": official_items("zh", "chinese_knowledge", 4),
             "cs_knowledge": official_items("zh", "cs_knowledge", 3),
             "multi_round": official_items("zh", "multi_round", 2),
             "emotion": official_items("zh", "emotion", 2)}
    root = tmp_path / "parquet"
    for i, (config, records) in enumerate(items.items()):
        _write_config(root, config, records, "folder" if i % 2 else "flat")
    got = load_samples(str(root), "zh")
    ref = load_samples(str(write_release(tmp_path / "zh", items, audio=False)), "zh")
    assert [(s.subset, s.id, s.index) for s in got] == [(s.subset, s.id, s.index) for s in ref]
    for a, b in zip(got, ref):
        assert (a.question, a.reference, a.history, a.category) == (b.question, b.reference, b.history, b.category)
        assert {k: v for k, v in a.metadata.items() if k != "Audio"} == {k: v for k, v in b.metadata.items() if k != "Audio"}
        from vocalbench import audio

        assert audio.duration(a.audio.path) == pytest.approx(0.25)  # the bytes became a readable file
    # converted once, then reused from the cache
    again = load_samples(str(root), "zh", ["emotion"])
    assert [s.audio.path for s in again] == [s.audio.path for s in got if s.subset == "emotion"]


def test_broken_parquet_file_is_named(tmp_path: Path) -> None:
    root = tmp_path / "p"
    root.mkdir()
    (root / "safety-00000-of-00001.parquet").write_bytes(b"PAR1 not really")
    with pytest.raises(DataError, match=r"safety-00000-of-00001\.parquet: unreadable parquet file"):
        load_samples(str(root), "zh")
