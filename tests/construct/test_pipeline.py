"""End to end with the real offline TTS (Kokoro) and ASR (Whisper base): verify, retry, review, resume."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from vocalbench import audio
from vocalbench.construct.items import Item, read_jsonl
from vocalbench.construct.pipeline import BuildOptions, build

GIBBERISH = "Vorbleth skindrapple quonzit ferblunk?"

EN = [
    {"subset": "knowledge", "lang": "en", "question": "Which ocean is the largest on Earth?", "answer": "Pacific"},
    {"subset": "single_round", "lang": "en", "question": "How can I keep my room cool in summer?",
     "category": "Suggestion"},
    {"subset": "safety", "lang": "en", "id": "safety-007", "question": GIBBERISH},
]
ZH = [
    {"subset": "chinese_knowledge", "lang": "zh", "question": "长城位于哪个国家？", "answer": "中国"},
    {"subset": "cs_knowledge", "lang": "zh", "question": "Eiffel Tower位于哪个城市？", "question_zh": "埃菲尔铁塔位于哪个城市？",
     "question_en": "Which city is the Eiffel Tower in?", "answer_zh": "巴黎", "answer_en": "Paris",
     "category": "Integrated"},
    {"subset": "dialect", "lang": "zh", "question": "今天晚上我们吃什么好呢？", "dialect": "粤语", "answer": "吃火锅。"},
]


@pytest.fixture(scope="module")
def components() -> dict[str, Any]:
    from vocalbench.components import resolve

    try:
        return {"tts": resolve("tts", "offline"), "asr": resolve("asr", "offline")}
    except (ImportError, RuntimeError) as exc:  # MissingDependency, ComponentUnavailable, AssetError  # missing extras: say which
        pytest.skip(f"offline TTS/ASR not installed: {exc}")


def _write_items(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory, components: dict[str, Any]) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("build")
    out = {}
    for lang, rows in (("en", EN), ("zh", ZH)):
        items = read_jsonl(_write_items(root / f"{lang}.jsonl", rows))
        opts = BuildOptions(max_attempts=3, progress=False, homophones=lang == "zh", seed=0)
        build(items, root / lang, opts, components=components)
        out[lang] = root / lang
    return out


def test_accepted_items_round_trip_under_threshold(built: dict[str, Path]) -> None:
    for lang, root in built.items():
        man = json.loads((root / "build_manifest.json").read_text())
        state = [json.loads(x) for x in (root / ".build" / "state.jsonl").read_text().splitlines()]
        for e in state:
            if e["status"] != "accepted":
                continue
            for u in e["utterances"]:
                acc = next(a for a in u["attempts"] if a["n"] == u["accepted"])
                assert acc["error_rate"] <= u["threshold"], (lang, u["text"], acc)
        assert man["build"]["tts"]["id"] == "kokoro-82m-int8"
        assert man["build"]["emotion_gate"]["status"] == "skipped"
        assert man["build"]["mos"]["status"] == "skipped"


def test_unpronounceable_item_goes_to_review(built: dict[str, Path]) -> None:
    root = built["en"]
    queue = [json.loads(x) for x in (root / "review.jsonl").read_text().splitlines()]
    assert [q["id"] for q in queue] == ["safety-007"]
    attempts = queue[0]["utterances"][0]["attempts"]
    assert len(attempts) == 3 and len({(a["voice"], a["speed"]) for a in attempts}) == 3
    assert all(not a["passed"] and a["error_rate"] > 0.10 and a["transcript"] for a in attempts)
    assert all((root / a["audio"]).exists() for a in attempts)
    assert not (root / "json" / "safety.json").exists()  # not silently kept
    counts = json.loads((root / "build_manifest.json").read_text())["counts"]
    assert counts == {"knowledge": 1, "single_round": 1}


def test_layout_loads_with_the_data_layer(built: dict[str, Path]) -> None:
    from vocalbench.data import load_samples

    en = load_samples(str(built["en"]), "en")
    assert [(s.subset, s.id) for s in en] == [("knowledge", "knowledge-0000"), ("single_round", "single_round-000")]
    assert en[0].audio and Path(en[0].audio.path).name == "0000.wav"
    zh = {(s.subset, s.id): s for s in load_samples(str(built["zh"]), "zh")}
    assert ("cs_knowledge", "codeswitching_knowledge-000") in zh
    assert ("cs_knowledge_en", "codeswitching_knowledge-000") in zh  # the control shares the Qid
    assert zh[("cs_knowledge_en", "codeswitching_knowledge-000")].question == "Which city is the Eiffel Tower in?"
    assert ("dialect", "dialect-000") in zh and ("dialect_mandarin", "dialect-000") in zh
    d = zh[("dialect", "dialect-000")]
    assert d.metadata["Voicing"] == "mandarin"  # Kokoro cannot speak Cantonese: labelled, not hidden
    man = json.loads((built["zh"] / "build_manifest.json").read_text())
    assert "Mandarin-voiced" in man["build"]["dialect_voicing"]


def test_review_cli_accepts_and_rejects(built: dict[str, Path], tmp_path: Path) -> None:
    import shutil

    from vocalbench.cli import main

    root = tmp_path / "copy"
    shutil.copytree(built["en"], root)
    assert main(["build", "review", "--data", str(root), "--accept", "safety-007", "--attempt", "2"]) == 0
    safety = json.loads((root / "json" / "safety.json").read_text())
    assert [r["Qid"] for r in safety] == ["safety-007"] and safety[0]["Audio"] == "safety/007.wav"
    assert (root / "audio" / "safety" / "007.wav").exists()
    line = json.loads((root / "review.jsonl").read_text().splitlines()[0])
    assert line["status"] == "accepted" and line["review"]["attempt"] == 2
    assert main(["build", "review", "--data", str(root), "--reject", "safety-007"]) == 0
    assert not (root / "json" / "safety.json").exists() and not (root / "audio" / "safety" / "007.wav").exists()
    assert main(["build", "review", "--data", str(root), "--accept", "nope"]) == 2


def test_interactive_review(built: dict[str, Path], tmp_path: Path) -> None:
    import shutil

    from vocalbench.construct import review

    root = tmp_path / "copy"
    shutil.copytree(built["en"], root)
    answers = iter(["x", "a"])
    said: list[str] = []
    counts = review.interactive(root, ask=lambda _: next(answers), say=said.append)
    assert counts == {"accepted": 1, "rejected": 0, "skipped": 0}
    assert any("skindrapple" in s for s in said) and any("answer a" in s for s in said)
    assert json.loads((root / "json" / "safety.json").read_text())[0]["Qid"] == "safety-007"


def test_resume_and_same_seed_same_audio(built: dict[str, Path], components: dict[str, Any], tmp_path: Path) -> None:
    root = built["en"]
    before = (root / ".build" / "state.jsonl").read_text()
    items = [Item.model_validate(r) for r in EN]
    build(items, root, BuildOptions(max_attempts=3, progress=False, seed=0), components=components)
    assert (root / ".build" / "state.jsonl").read_text() == before  # nothing redone
    again = tmp_path / "again"
    # a fresh build of the same items with the same seed, two items in parallel threads: same bytes
    build(items[:2], again, BuildOptions(max_attempts=3, progress=False, seed=0, workers=2), components=components)
    for rel in ("knowledge/0000.wav", "single_round/000.wav"):
        assert audio.content_hash(root / "audio" / rel) == audio.content_hash(again / "audio" / rel)


def test_interrupted_build_continues(components: dict[str, Any], tmp_path: Path) -> None:
    items = [Item.model_validate(r) for r in EN[:2]]
    opts = BuildOptions(max_attempts=1, progress=False, seed=5)

    class Interrupt(Exception):
        pass

    class StopAfterOne:
        """The real ASR, stopped (like Ctrl-C) on the second item."""

        id = components["asr"].id

        def __init__(self) -> None:
            self.calls = 0

        def transcribe(self, paths: Any, lang: Any = None) -> Any:
            self.calls += 1
            if self.calls > 1:
                raise Interrupt
            return components["asr"].transcribe(paths, lang)

    with pytest.raises(Interrupt):
        build(items, tmp_path, opts, components={"tts": components["tts"], "asr": StopAfterOne()})
    lines = (tmp_path / ".build" / "state.jsonl").read_text().splitlines()
    assert len(lines) == 1 and json.loads(lines[0])["label"] == "knowledge:0"
    counting = StopAfterOne()
    counting.calls = -10
    man = build(items, tmp_path, opts, components={"tts": components["tts"], "asr": counting})
    assert counting.calls == -9  # only the unfinished item was transcribed
    assert man["summary"]["items"] == 2 and man["summary"]["accepted"] + man["summary"]["queued"] == 2
    labels = [json.loads(x)["label"] for x in (tmp_path / ".build" / "state.jsonl").read_text().splitlines()]
    assert labels == ["knowledge:0", "single_round:0"]
