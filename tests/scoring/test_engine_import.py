"""``vocalbench import``: official outputs (with their quirks) and our JSONL into a run folder."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from engine_fixtures import LLAMA_OMNI, QWEN3_OMNI, cli, copy_outputs, isolated_cache, shared  # noqa: F401

from vocalbench.run_config import RunConfig
from vocalbench.runner.store import RunStore

EN_COUNTS = {"knowledge": 2000, "reasoning": 1000, "creativity": 400, "single_round": 200, "multi_round": 400,
             "instruction_following": 900, "emotion": 500, "safety": 400}


def test_import_all_llama_omni_subsets(shared: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run = tmp_path / "run"
    assert cli("import", "--format", "official", "--outputs", str(LLAMA_OMNI), "--data", str(shared),
               "--lang", "en", "--out", str(run), "--system", "LLaMA-Omni") == 0
    out = capsys.readouterr().out
    assert "single_round: 200 items, 200 replies, 0 missing, 0 empty, 0 with ASR transcript, 0 with audio, " \
           "200 ids mapped by index" in out
    cfg = RunConfig.load(run)
    assert cfg.system.text == "LLaMA-Omni" and cfg.lang == "en"
    with RunStore(run) as store:
        replies = store.replies()
        assert store.counts()["samples"] == sum(EN_COUNTS.values()) == len(replies) == 5800
        for subset, n in EN_COUNTS.items():
            assert sum(1 for (s, _) in replies if s == subset) == n
        assert all(r.error is None for r in replies.values())  # every item answered
        sr = replies[("single_round", "single_round-007")]
        assert sr.extra["original_id"] == "chat-007" and sr.text
        kn = replies[("knowledge", "knowledge-0000")]
        assert kn.asr_text == "leonardo da vinci painted the famous painting mona lisa"
        assert kn.audio is not None and kn.audio.path.endswith("wav/knowledge/knowledge-0000.wav")
        assert replies[("instruction_following", "instruction-899")].text  # from json/instruction.json
        assert "answer" not in kn.extra and kn.source == "imported"


def test_missing_replies_are_recorded_and_bad_files_named(shared: Path, tmp_path: Path,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    run = tmp_path / "run"
    outputs = copy_outputs(LLAMA_OMNI, tmp_path / "out", ["knowledge", "reasoning", "safety"])
    assert cli("import", "--outputs", str(outputs), "--data", str(shared), "--lang", "en", "--out", str(run)) == 0
    # second delivery: three knowledge answers gone, reasoning broken on line 5, safety a JSON list
    lines = (outputs / "json" / "knowledge.json").read_text().splitlines()
    (outputs / "json" / "knowledge.json").write_text("\n".join(l for i, l in enumerate(lines) if i not in (3, 4, 1999)))
    lines = (outputs / "json" / "reasoning.json").read_text().splitlines()
    lines[4] = lines[4][:40]
    (outputs / "json" / "reasoning.json").write_text("\n".join(lines))
    safety = [json.loads(l) for l in (outputs / "json" / "safety.json").read_text().splitlines()]
    (outputs / "json" / "safety.json").write_text(json.dumps(safety[:-1]))
    capsys.readouterr()
    assert cli("import", "--outputs", str(outputs), "--data", str(shared), "--lang", "en", "--out", str(run)) == 2
    err = capsys.readouterr().err
    assert f"error: {outputs / 'json' / 'reasoning.json'}: malformed JSON on line 5" in err
    with RunStore(run) as store:
        kn = store.replies("knowledge")
        missing = sorted(sid for (_, sid), r in kn.items() if r.error is not None)
        assert missing == ["knowledge-0003", "knowledge-0004", "knowledge-1999"]
        assert kn[("knowledge", "knowledge-0003")].error.type == "missing_reply"
        assert "knowledge.json" in kn[("knowledge", "knowledge-0003")].error.message
        assert len(kn) == 2000  # missing replies are recorded, not dropped
        assert len(store.replies("reasoning")) == 1000 and all(not r.failed for r in store.replies("reasoning").values())
        sf = store.replies("safety")
        assert sf[("safety", "safety-399")].error.type == "missing_reply" and sum(r.failed for r in sf.values()) == 1


def test_zh_flat_wav_layout_and_response_fields(shared: Path, tmp_path: Path) -> None:
    run = tmp_path / "zh"
    assert cli("import", "--outputs", str(QWEN3_OMNI), "--data", str(shared), "--lang", "zh", "--out", str(run),
               "--subsets", "chinese_knowledge", "--system", "千问3-Omni") == 0
    with RunStore(run) as store:
        replies = store.replies("chinese_knowledge")
    first = replies[("chinese_knowledge", "chinese_knowledge-0000")]
    assert first.audio is not None and first.audio.path.endswith("wav/chinese_knowledge-0000.wav")
    assert first.text.startswith("以武术闻名") and first.asr_text
    assert sum(r.error is not None and r.error.type == "missing_reply" for r in replies.values()) == 990
    assert "千问3-Omni" in (run / "config.json").read_text(encoding="utf-8")  # ensure_ascii=False


def test_our_jsonl_format(shared: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import numpy as np

    from vocalbench import audio

    folder = tmp_path / "jsonl"
    audio.write(folder / "wav" / "a.wav", np.zeros(1600, dtype=np.float32), 16000)
    rows = [
        {"subset": "knowledge", "id": "knowledge-0000", "text": "Leonardo da Vinci.", "audio": "wav/a.wav",
         "timings": {"first_audio": 0.3, "last_chunk": 1.2}, "audio_duration": 0.1},
        {"subset": "knowledge", "id": "knowledge-0001", "text": None, "error": "timeout"},
        {"subset": "knowledge", "id": "knowledge-9999", "text": "no such item"},
    ]
    (folder / "replies.jsonl").write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    run = tmp_path / "run"
    assert cli("import", "--format", "jsonl", "--outputs", str(folder), "--data", str(shared), "--lang", "en",
               "--out", str(run)) == 0
    assert "knowledge-9999" in capsys.readouterr().err
    with RunStore(run) as store:
        rs = store.replies()
    assert len(rs) == 2000
    a = rs[("knowledge", "knowledge-0000")]
    assert a.audio.path == str((folder / "wav" / "a.wav").resolve()) and a.timings.first_audio == 0.3
    assert rs[("knowledge", "knowledge-0001")].error.type == "timeout"
    assert rs[("knowledge", "knowledge-0002")].error.type == "missing_reply"
    (folder / "replies.jsonl").write_text(json.dumps(rows[0]) + "\n{broken\n")
    assert cli("import", "--format", "jsonl", "--outputs", str(folder), "--data", str(shared), "--lang", "en",
               "--out", str(run)) == 2
    assert "replies.jsonl: malformed JSON on line 2" in capsys.readouterr().err
    with RunStore(run) as store:  # the earlier import is intact
        assert store.get_reply("knowledge", "knowledge-0001").error.type == "timeout"


def test_import_errors_are_user_errors(shared: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli("import", "--outputs", str(tmp_path / "none"), "--data", str(shared), "--lang", "en",
               "--out", str(tmp_path / "r")) == 2
    assert "no such outputs folder" in capsys.readouterr().err
    (tmp_path / "empty").mkdir()
    assert cli("import", "--outputs", str(tmp_path / "empty"), "--data", str(shared), "--lang", "en",
               "--out", str(tmp_path / "r")) == 2
    assert "not an official outputs folder" in capsys.readouterr().err


def test_robust_reuses_single_round_replies_for_its_clean_baseline(shared: Path, tmp_path: Path) -> None:
    outputs = copy_outputs(LLAMA_OMNI, tmp_path / "out", ["single_round"])
    robust = json.loads((shared / "en" / "json" / "robust.json").read_text())
    (outputs / "json" / "robust.json").write_text(
        "\n".join(json.dumps({"question_id": r["Qid"], "prediction": f"answer {i}"}) for i, r in enumerate(robust)))
    run = tmp_path / "run"
    assert cli("import", "--outputs", str(outputs), "--data", str(shared), "--lang", "en", "--out", str(run),
               "--quiet") == 0
    with RunStore(run) as store:
        clean = store.replies("robust_clean")
        samples = {s.id: s for s in store.samples("robust_clean")}
        single = {s.id: s for s in store.samples("single_round")}
        assert len(samples) == 100 and len(clean) == 100 and len(store.replies("robust")) == 3600
        for (_, sid), r in clean.items():
            origin = r.source.removeprefix("reused:single_round/")
            assert r.source.startswith("reused:single_round/") and single[origin].question == samples[sid].question
            assert r.text == store.get_reply("single_round", origin).text
