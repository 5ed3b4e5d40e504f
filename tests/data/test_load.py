"""Loading the official releases as Samples: counts, field mapping, audio paths, --limit."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
from conftest import write_release  # type: ignore[import-not-found]

from vocalbench import catalog
from vocalbench.data import available_subsets, load_samples
from vocalbench.data.official import DataError


def test_every_official_subset_loads_with_its_count(shared: Path) -> None:
    for lang, table in (("en", catalog.counts("en")), ("zh", catalog.counts("zh"))):
        samples = load_samples(str(shared), lang)
        counts = Counter(s.subset for s in samples)
        expected = {k: v for k, v in table.items() if v is not None}
        assert counts == expected, lang
        for subset in expected:  # index = the Qid's number = list position; keyed by (subset, Qid), unique
            items = [s for s in samples if s.subset == subset]
            if subset == "robust":  # 36 conditions of each base question share its number
                assert sorted({s.index for s in items}) == list(range(len(items) // 36))
            else:
                assert [s.index for s in items] == list(range(len(items)))
            assert len({s.id for s in items}) == len(items)
    assert available_subsets(str(shared), "en") == catalog.names("en")


def test_fields_are_mapped(shared: Path) -> None:
    en = {(s.subset, s.id): s for s in load_samples(str(shared), "en")}
    mr = en[("multi_round", "multi_round-000")]
    assert mr.history and mr.history[0].role == "user" and mr.history[1].role == "assistant"
    assert mr.reference and mr.category
    emo = en[("emotion", "emotion-000")]
    assert emo.metadata["Question_emo"] == "angry" and emo.metadata["Score"] == [5, 1, 2, 4, 2]
    surprised = [s for (sub, _), s in en.items() if sub == "emotion" and s.metadata["Question_emo"] == "surprised"]
    assert len(surprised) == 100 and all("Prompt_prob" not in s.metadata for s in surprised)  # absent for these
    inst = en[("instruction_following", "instruction-000")]
    assert inst.metadata["Text_emo"] == "angry" and inst.sub_category is not None
    assert en[("instruction_following", "instruction-700")].sub_category is None
    assert en[("instruction_following", "instruction-400")].reference  # the 100 items with an Answer
    rb = en[("robust", "robust-background_noise-snr_-5-000")]
    assert rb.category == "background_noise" and rb.metadata["Level"] == "snr_-5"
    assert Path(rb.audio.path).is_absolute() and rb.audio.path.endswith("audio/robust/background_noise/snr_-5/000.wav")
    assert rb.audio.duration is None  # read lazily, not at load time

    zh = {(s.subset, s.id): s for s in load_samples(str(shared), "zh")}
    clean = zh[("robust_clean", "robust_clean-001")]
    assert clean.audio.path.endswith("audio/single_round/002.wav")  # zh robust_clean reuses single_round audio
    assert zh[("chinese_knowledge", "chinese_knowledge-0000")].audio.path.endswith("audio/knowledge/chinese/0000.wav")
    cs = zh[("cs_knowledge", "codeswitching_knowledge-000")]
    cs_en = zh[("cs_knowledge_en", "codeswitching_knowledge-000")]  # same Qid, different subset
    assert cs.metadata["Answer_zh"] == "盐湖城" and cs.metadata["Answer_en"] == "Salt Lake City"
    assert cs_en.reference == "Salt Lake City" and cs.reference is None
    nulls = [s for (sub, _), s in zh.items() if sub == "cs_knowledge" and s.metadata.get("Question_zh") is None]
    assert len(nulls) == 8  # null in 6 items, absent in 2


def test_subset_selection_adds_robust_clean_and_rejects_unknown(shared: Path) -> None:
    samples = load_samples(str(shared), "en", ["robust"])
    assert Counter(s.subset for s in samples) == {"robust": 3600, "robust_clean": 100}
    with pytest.raises(DataError, match="cs_knowledge.*not in this release"):
        load_samples(str(shared), "en", ["cs_knowledge"])


def test_limit_is_stratified_and_deterministic(shared: Path) -> None:
    a = load_samples(str(shared), "en", ["reasoning", "instruction_following", "knowledge"], limit=16)
    b = load_samples(str(shared), "en", ["reasoning", "instruction_following", "knowledge"], limit=16)
    assert [s.id for s in a] == [s.id for s in b]
    by = Counter(s.subset for s in a)
    assert by == {"reasoning": 16, "instruction_following": 16, "knowledge": 16}
    reasoning_cats = {s.category for s in a if s.subset == "reasoning"}
    assert len(reasoning_cats) == 8  # every category of the 8 is represented
    inst_cats = {s.category for s in a if s.subset == "instruction_following"}
    assert inst_cats == {"Paralinguistic", "Content", "Style", "Situation", "Format"}
    topics = {s.metadata["Topic"] for s in a if s.subset == "knowledge"}
    assert len(topics) == 13


def test_limit_on_robust_keeps_all_conditions_and_their_clean_items(shared: Path) -> None:
    for lang in ("en", "zh"):
        samples = load_samples(str(shared), lang, ["robust"], limit=3)
        clean = [s for s in samples if s.subset == "robust_clean"]
        robust = [s for s in samples if s.subset == "robust"]
        assert len(clean) == 3 and len(robust) == 3 * 36
        assert {s.question for s in robust} == {s.question for s in clean}
        assert len({(s.category, s.metadata["Level"]) for s in robust}) == 36


def test_data_errors_name_file_item_and_field(tmp_path: Path) -> None:
    rel = write_release(tmp_path / "rel", {"knowledge": [
        {"Qid": "knowledge-0000", "Audio": "knowledge/0000.wav", "Question": "Q?", "Answer": "A"},
        {"Qid": "knowledge-0001", "Audio": "knowledge/0001.wav", "Question": "Q2?"},
    ]}, audio=False)
    with pytest.raises(DataError) as err:
        load_samples(str(rel), "en")
    msg = str(err.value)
    assert "knowledge.json" in msg and "knowledge-0001" in msg and "'Answer'" in msg
    with pytest.raises(DataError, match="no such data folder"):
        load_samples(str(tmp_path / "nope"), "en")
    (tmp_path / "bad" / "json").mkdir(parents=True)
    (tmp_path / "bad" / "json" / "safety.json").write_text('[{"Qid": "safety-000",')
    with pytest.raises(DataError, match=r"safety\.json: malformed JSON at line 1"):
        load_samples(str(tmp_path / "bad"), "en")


def test_builtin_mini_set_loads_through_the_same_path() -> None:
    """DATA 'mini' goes through data.mini.ensure (built once into the shared cache, then reused)."""
    pytest.importorskip("vocalbench.data.mini", reason="the built-in mini set is not in this checkout yet")
    samples = load_samples("mini", "en", ["knowledge", "robust"], limit=1)
    subsets = Counter(s.subset for s in samples)
    assert subsets["knowledge"] == 1 and subsets["robust_clean"] == 1 and subsets["robust"] >= 1
    assert all(s.audio is not None and Path(s.audio.path).is_absolute() for s in samples)
    assert json.loads(samples[0].model_dump_json())["lang"] == "en"
