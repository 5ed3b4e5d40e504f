"""The built-in mini set: complete coverage, verified audio, robust conditions, idempotent ensure."""

from __future__ import annotations

import json
import time
from collections import Counter
from pathlib import Path

import pytest

from vocalbench.construct import mini, perturb
from vocalbench.construct.items import read_jsonl

EXPECTED = {
    "en": {"knowledge", "reasoning", "creativity", "single_round", "multi_round", "instruction_following",
           "emotion", "safety", "robust", "robust_clean"},
    "zh": {"chinese_knowledge", "foreign_knowledge", "general_knowledge", "reasoning", "creativity", "single_round",
           "multi_round", "instruction_following", "emotion", "safety", "cs_knowledge", "cs_knowledge_en",
           "cs_open_ended", "robust", "robust_clean", "dialect", "dialect_mandarin"},
}
# The mini set's robust conditions: Robust PR's six headline ones + the mildest level per family.
MINI_CONDITIONS = {
    "background_noise/snr_-5", "white_noise/snr_-5", "reverberation/rt60_30", "packet_loss/dropping_70",
    "farfield/filter_400hz", "distortion/clipping_0.0001",
    "background_noise/snr_20", "white_noise/snr_20", "reverberation/rt60_05", "packet_loss/dropping_10",
    "farfield/filter_100hz", "distortion/clipping_0.5000",
}


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_items_are_small_and_cover_every_subset(lang: str) -> None:
    items = read_jsonl(mini.items_path(lang))
    assert len(items) <= 25
    subsets = Counter(i.subset for i in items)
    derived = {"robust", "cs_knowledge_en", "dialect_mandarin"}
    assert set(subsets) == EXPECTED[lang] - derived
    assert subsets["single_round"] >= 2
    para = {i.sub_category for i in items if i.subset == "instruction_following"}
    assert {"Plain repeat", "With emotion", "With speed", "Num"} <= para
    emo = [i for i in items if i.subset == "emotion"]
    assert emo and all(i.emotion and i.ratings and len(i.ratings) == 5 for i in emo)
    assert all(i.history for i in items if i.subset == "multi_round")
    # reasoning Qids sit in a binary-judge and a rubric range of this language (docs/build.md)
    from vocalbench.scoring.subsets.reasoning import BINARY_RANGES

    nums = [int(i.id.rsplit("-", 1)[1]) for i in items if i.subset == "reasoning" and i.id]
    kinds = {any(lo <= n < hi for lo, hi in BINARY_RANGES[lang]) for n in nums}
    assert kinds == {True, False}


def test_mini_items_are_our_own() -> None:
    """No mini question is copied from the official release (checked when it is present)."""
    official = Path(__file__).resolve().parents[2].parent / "shared" / "vocalbench"
    if not official.exists():
        pytest.skip("../shared/vocalbench is absent")
    for lang in ("en", "zh"):
        theirs = {r.get("Question") for f in (official / lang / "json").glob("*.json")
                  for r in json.loads(f.read_text(encoding="utf-8"))}
        ours = {i.question for i in read_jsonl(mini.items_path(lang))}
        assert not ours & theirs


def test_mini_robust_conditions_are_the_headline_plus_the_mildest() -> None:
    picked = perturb.mini_conditions()
    assert len(picked) == 12 and {c.key for c in picked} == MINI_CONDITIONS
    assert set(perturb.HEADLINE) <= MINI_CONDITIONS
    mild = perturb.mildest_conditions()
    assert sorted(c.category for c in mild) == sorted({c.category for c in perturb.CONDITIONS})
    assert not {c.key for c in mild} & set(perturb.HEADLINE)


def test_version_follows_the_robust_conditions(monkeypatch: pytest.MonkeyPatch) -> None:
    v = mini.version("en")
    monkeypatch.setattr(perturb, "mini_conditions", lambda: perturb.CONDITIONS)
    assert mini.version("en") != v


def test_version_follows_the_item_content(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    v = mini.version("en")
    edited = tmp_path / "items_en.jsonl"
    edited.write_text(mini.items_path("en").read_text(encoding="utf-8").replace("red planet", "Red Planet"),
                      encoding="utf-8")
    monkeypatch.setattr(mini, "items_path", lambda lang: edited)
    assert mini.version("en") != v


@pytest.mark.slow
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_ensure_builds_a_loadable_verified_set(lang: str) -> None:
    from vocalbench.data import load_samples

    root = mini.ensure(lang, progress=False)  # first use builds (minutes); later calls are instant
    t0 = time.perf_counter()
    assert mini.ensure(lang) == root
    assert time.perf_counter() - t0 < 1.0
    samples = load_samples("mini", lang)
    by = Counter(s.subset for s in samples)
    assert set(by) == EXPECTED[lang]
    assert by["robust"] == 12 * by["robust_clean"]
    assert {f"{s.category}/{s.metadata['Level']}".replace("dropping_0.", "dropping_") for s in samples
            if s.subset == "robust"} == MINI_CONDITIONS
    assert sum(n for s, n in by.items() if s != "robust") <= 30
    man = json.loads((root / "build_manifest.json").read_text())
    assert man["summary"]["queued"] == 0
    for item in man["items"]:
        for rec in item["records"]:
            assert rec["final_error_rate"] is not None
    assert man["build"]["emotion_gate"]["status"] == "skipped"
    assert man["perturb"]["conditions"] == 12 and set(man["perturb"]["condition_list"]) == MINI_CONDITIONS
    for s in samples:
        assert s.audio is not None and Path(s.audio.path).exists()
    if lang == "zh":
        ids = {s.id for s in samples if s.subset == "cs_knowledge"}
        assert ids == {s.id for s in samples if s.subset == "cs_knowledge_en"}
        assert {s.id for s in samples if s.subset == "dialect"} == {s.id for s in samples if s.subset == "dialect_mandarin"}
        assert {s.metadata.get("Voicing") for s in samples if s.subset == "dialect"} == {"mandarin"}
