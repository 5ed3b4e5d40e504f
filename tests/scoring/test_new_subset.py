"""A subset declared in this one module (its scorer, its tally, its declaration) flows through
``vocalbench import``, ``score``, ``summary.json``, ``list subsets`` and ``report`` with no other
file touched: every layer reads the declaration (docs/extending.md)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from vocalbench import catalog
from vocalbench.catalog import SubsetSpec, declare
from vocalbench.records import Reply, Sample, Score
from vocalbench.scoring.base import ScoringContext
from vocalbench.scoring.subsets.rules import ScorerIdentity, failed, scored, system_failure
from vocalbench.scoring.tally import MAIN, MeanTally


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

    def tally(self) -> MeanTally:
        return MeanTally("accuracy", scale=100)


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
