"""Rebuild one item per subset of the official en and zh metadata, load it, and run a system on it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from vocalbench.construct.items import Item, read_official
from vocalbench.construct.pipeline import BuildOptions, build

OFFICIAL = Path(__file__).resolve().parents[2].parent / "shared" / "vocalbench"


def _one_per_subset(lang: str) -> list[Item]:
    """The item with the shortest question of each subset (keeps synthesis time small)."""
    items = read_official(OFFICIAL / lang, lang)
    out: dict[str, Item] = {}
    for it in items:
        if it.subset not in out or len(it.question) < len(out[it.subset].question):
            out[it.subset] = it
    return list(out.values())


@pytest.fixture(scope="module")
def components() -> dict[str, Any]:
    from vocalbench.components import resolve

    try:
        return {"tts": resolve("tts", "offline"), "asr": resolve("asr", "offline")}
    except (ImportError, RuntimeError) as exc:  # MissingDependency, ComponentUnavailable, AssetError
        pytest.skip(f"offline TTS/ASR not installed: {exc}")


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_rebuilt_slice_loads_and_runs(lang: str, components: dict[str, Any], tmp_path: Path) -> None:
    if not (OFFICIAL / lang / "json").exists():
        pytest.skip(f"../shared/vocalbench/{lang}/json is absent")
    from vocalbench.data import load_samples

    items = _one_per_subset(lang)
    # one attempt, best kept: this test is about the layout round trip, not about verification
    opts = BuildOptions(max_attempts=1, on_fail="keep_best", progress=False, homophones=True)
    man = build(items, tmp_path / lang, opts, components=components)
    official = {p.stem for p in (OFFICIAL / lang / "json").glob("*.json")} - {"robust"}
    assert set(man["counts"]) == official
    samples = load_samples(str(tmp_path / lang), lang)
    assert {s.subset for s in samples} == official
    for s in samples:
        original = json.loads((OFFICIAL / lang / "json" / f"{s.subset}.json").read_text(encoding="utf-8"))
        rec = next(r for r in original if r["Qid"] == s.id)
        assert s.question == rec["Question"] and s.reference == rec.get("Answer")
        assert s.metadata.get("Score") == rec.get("Score") and s.metadata.get("Text_emo") == rec.get("Text_emo")
        assert s.audio is not None and Path(s.audio.path).exists()
    if lang == "zh":
        cs = {s.id for s in samples if s.subset == "cs_knowledge"}
        assert cs == {s.id for s in samples if s.subset == "cs_knowledge_en"}

    # a system answers the rebuilt set through the runner (scripted replies: no model needed)
    try:
        from vocalbench.cli import main
    except ImportError as exc:  # pragma: no cover
        pytest.skip(f"cli unavailable: {exc}")
    script = tmp_path / "script.jsonl"
    script.write_text(json.dumps({"id": "*", "text": "Scripted reply to {id}.", "audio": {"tone": 220, "seconds": 0.5}})
                      + "\n")
    run = tmp_path / "run"
    rc = main(["generate", "--system", f"scripted:{script}", "--data", str(tmp_path / lang), "--lang", lang,
               "--out", str(run), "--quiet", "--no-warmup"])
    assert rc == 0
    from vocalbench.runner.store import RunStore

    stores = sorted(run.rglob("store.sqlite"))
    assert stores, f"no run store under {run}"
    with RunStore(stores[0].parent) as store:
        replies = list(store.replies().values())
    assert len(replies) == len(samples)
    assert all(r.error is None and r.text and r.text.startswith("Scripted reply") for r in replies)
