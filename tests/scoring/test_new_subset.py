"""A subset declared in this one module (its scorer and its declaration, whose measure gives its
number) flows through ``vocalbench import``, ``score``, ``summary.json``, ``list subsets`` and
``report`` with no other file touched: every layer reads the declaration (docs/extending.md)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from vocalbench import catalog
from vocalbench.catalog import Ratio, SubsetSpec, declare
from vocalbench.records import Reply, Sample, Score
from vocalbench.scoring.base import ScoringContext
from vocalbench.scoring.subsets.rules import ScorerIdentity, failed, scored, system_failure
from vocalbench.scoring.tally import MAIN


class Echo(ScorerIdentity):
    """Rule-based: 1 when the reply repeats the reference (case-insensitive), else 0."""

    version = "1"
    uses_judge = False

    def __init__(self, protocol: str) -> None:
        self.id = f"echo.{protocol}"

    async def score(self, sample: Sample, reply: Reply | None, ctx: ScoringContext) -> list[Score]:
        reason = system_failure(reply)
        if reason or reply is None:
            return [failed(sample, MAIN, self.ref, reason or "missing_reply", 0.0)]
        hit = (sample.reference or "").lower() in (reply.text or "").lower()
        return [scored(sample, MAIN, self.ref, float(hit), rule="substring")]


class Misspelt(ScorerIdentity):
    """Rule-based: the letters of the reference the reply gets wrong, over the reference's letters."""

    version = "1"
    uses_judge = False
    id = "misspelt"

    async def score(self, sample: Sample, reply: Reply | None, ctx: ScoringContext) -> list[Score]:
        ref, got = (sample.reference or "").lower(), (reply.text if reply is not None else "") or ""
        wrong = sum(a != b for a, b in zip(ref, got.lower().ljust(len(ref))))
        return [scored(sample, MAIN, self.ref, wrong / len(ref), wrong=wrong, letters=len(ref))]


@pytest.fixture
def echo() -> Iterator[SubsetSpec]:
    spec = declare(SubsetSpec(
        "echo", {"en": 3}, "accuracy", "the reply repeats the reference",
        lambda subset, lang, protocol: Echo(protocol), label="Echo", required=("Answer",), percent=True))
    yield spec
    catalog.forget("echo")


@pytest.fixture(autouse=True)
def _cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("VOCALBENCH_CACHE", str(tmp_path / "cache"))


def _release(root: Path) -> Path:
    """An official-layout release with the echo subset only."""
    (root / "json").mkdir(parents=True)
    records = [{"Qid": f"echo-{i}", "Audio": f"echo/echo-{i}.wav", "Question": f"Say {w}.", "Answer": w}
               for i, w in enumerate(["apple", "pear", "plum"])]
    (root / "json" / "echo.json").write_text(json.dumps(records), encoding="utf-8")
    return root


def test_a_subset_declared_in_one_module_flows_through_every_layer(echo: SubsetSpec, tmp_path: Path,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    from vocalbench.cli import main
    from vocalbench.commands.list_parts import rows
    from vocalbench.data import available_subsets, load_samples
    from vocalbench.data.validate import validate

    data = _release(tmp_path / "en")
    assert available_subsets(str(data), "en") == ["echo"]
    assert [s.reference for s in load_samples(str(data), "en")] == ["apple", "pear", "plum"]
    problems = [p.message for p in validate(data, "en", metadata_only=True).problems]
    assert not any("unknown subset" in m for m in problems), problems
    assert {"lang": "en", "subset": "echo", "items": 3, "scoring": "accuracy: the reply repeats the reference",
            "package": __name__.split(".")[0]} in rows("subsets", "en")  # the module that declared it

    outputs = tmp_path / "outputs.jsonl"
    outputs.write_text("\n".join(json.dumps({"subset": "echo", "id": f"echo-{i}", "text": t}) for i, t in
                                 enumerate(["An apple.", "A peach.", "Plum!"])), encoding="utf-8")
    run = tmp_path / "run"
    assert main(["import", "--format", "jsonl", "--outputs", str(outputs), "--data", str(data), "--lang", "en",
                 "--out", str(run), "--system", "echo-bot"]) == 0
    assert main(["score", str(run), "--judge", "none", "--asr", "none", "--mos", "none", "--emotion", "none",
                 "--quiet"]) == 0
    summary = json.loads((run / "summary.json").read_text(encoding="utf-8"))
    row = summary["subsets"]["echo"]
    assert (row["metric"], row["value"], row["n"], row["scored"], row["complete"]) == \
        ("accuracy", pytest.approx(66.6667), 3, 3, True)

    out = tmp_path / "report"
    assert main(["report", str(run), "--out", str(out), "--quiet"]) == 0
    viewer = (out / "viewer.html").read_text(encoding="utf-8")
    assert "echo-1" in viewer and "A peach." in viewer
    capsys.readouterr()


def test_an_undeclared_subset_is_unknown() -> None:
    from vocalbench.scoring.subsets import scorer_for

    with pytest.raises(KeyError, match="no subset 'echo'"):
        scorer_for("echo", "en")


def test_a_metric_is_one_declaration(tmp_path: Path) -> None:
    """A corpus-level rate (Σ wrong letters / Σ letters × 100), declared as the subset's ``measure``:
    no tally written, its row's value and interval are the statistics graph's."""
    from vocalbench.cli import main
    from vocalbench.report.runs import load_run
    from vocalbench.scoring import graph

    declare(SubsetSpec("misspelt", {"en": 3}, "letter_error_rate", "letters of the reference spelt wrong",
                       lambda subset, lang, protocol: Misspelt(), required=("Answer",),
                       measure=Ratio("wrong", "letters", scale=100)))
    try:
        data = tmp_path / "en"
        (data / "json").mkdir(parents=True)
        words = ["apple", "pear", "plum"]
        (data / "json" / "misspelt.json").write_text(json.dumps([
            {"Qid": f"misspelt-{i}", "Audio": f"misspelt/misspelt-{i}.wav", "Question": f"Spell {w}.", "Answer": w}
            for i, w in enumerate(words)]), encoding="utf-8")
        outputs = tmp_path / "outputs.jsonl"
        outputs.write_text("\n".join(json.dumps({"subset": "misspelt", "id": f"misspelt-{i}", "text": t})
                                     for i, t in enumerate(["appel", "pear", "plumb"])), encoding="utf-8")
        run = tmp_path / "run"
        assert main(["import", "--format", "jsonl", "--outputs", str(outputs), "--data", str(data), "--lang", "en",
                     "--out", str(run), "--system", "speller"]) == 0
        assert main(["score", str(run), "--judge", "none", "--asr", "none", "--mos", "none", "--emotion", "none",
                     "--quiet"]) == 0
        row = json.loads((run / "summary.json").read_text(encoding="utf-8"))["subsets"]["misspelt"]
        assert (row["metric"], row["value"], row["n"], row["scored"]) == ("letter_error_rate", round(2 / 13 * 100, 4), 3, 3)
        got = graph.evaluate(load_run(run).graph)["subset:misspelt"]
        assert row["ci95"] == got.rounded()[1] and row["ci95"][0] <= row["value"] <= row["ci95"][1]
    finally:
        catalog.forget("misspelt")
