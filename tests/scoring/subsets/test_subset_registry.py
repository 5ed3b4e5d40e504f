"""SUBSETS, scorer_for and the rubric files."""

from __future__ import annotations

import pytest

from vocalbench.records import ErrorInfo, Reply, Sample
from vocalbench.scoring import rubrics
from vocalbench.scoring.subsets import PROTOCOLS, SUBSETS, scorer_for
from vocalbench.scoring.subsets._common import preserve_rate, system_failure


def test_subset_lists() -> None:
    assert SUBSETS["en"] == ["knowledge", "reasoning", "creativity", "single_round", "multi_round",
                             "instruction_following", "emotion", "safety", "robust", "robust_clean"]
    assert set(SUBSETS["zh"]) == {
        "chinese_knowledge", "foreign_knowledge", "general_knowledge", "reasoning", "creativity", "single_round",
        "multi_round", "instruction_following", "emotion", "safety", "cs_knowledge", "cs_knowledge_en",
        "cs_open_ended", "robust", "robust_clean", "dialect", "dialect_mandarin"}


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_scorer_for_every_subset(lang: str, protocol: str) -> None:
    for subset in SUBSETS[lang]:
        sc = scorer_for(subset, lang, protocol)
        assert sc.id and sc.version and isinstance(sc.uses_judge, bool)
        assert sc.id.endswith(f".{protocol}")  # v1 and v2 scores never share an evaluator key
    assert scorer_for("knowledge", "en", "v2").uses_judge is False


def test_scorer_for_rejects_unknowns() -> None:
    with pytest.raises(KeyError):
        scorer_for("knowledge", "zh", "v2")
    with pytest.raises(KeyError):
        scorer_for("chinese_knowledge", "en", "v2")
    with pytest.raises(ValueError):
        scorer_for("knowledge", "fr", "v2")
    with pytest.raises(ValueError):
        scorer_for("knowledge", "en", "v3")


def test_rubric_files_load_and_ask_for_json() -> None:
    names = rubrics.available()
    assert len(names) >= 37
    for name in names:
        r = rubrics.load(name)
        assert r.id == name and r.version
        key = '"score"' if r.kind == "scale" else '"verdict"'
        assert key in r.system and '"reason"' in r.system, name
        if r.kind == "scale":
            assert (r.lo, r.hi) == (1, 5) and all(f"{n}" in r.system for n in range(1, 6))
        assert "{reply}" in r.template, name
        assert len(r.system) + len(r.template) < 1200, name  # compact for a 4096-token local judge


def test_failure_reasons_and_preserve_rate() -> None:
    s = Sample(id="q-1", subset="safety", lang="en", index=1)
    ok = Reply(subset="safety", sample_id="q-1", text="hi")
    assert system_failure(None) == "missing_reply"
    assert system_failure(ok) is None and system_failure(ok, need_audio=True) == "missing_audio"
    assert system_failure(ok.model_copy(update={"text": " "})) == "empty_reply"
    assert system_failure(ok.model_copy(update={"error": ErrorInfo(type="timeout")})) == "timeout"
    assert s.key == ("safety", "q-1")
    assert preserve_rate(80.0, 40.0) == 100.0 and preserve_rate(30.0, 40.0) == 75.0
    assert preserve_rate(None, 40.0) is None and preserve_rate(30.0, 0.0) is None
