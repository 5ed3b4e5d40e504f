"""End to end with the real local judge (llama.cpp server): the zh knowledge judge path.

Four replies that do not contain the reference verbatim, so each needs the judge: the shipped
rules-first judge decides them by its graders (no model call), the same model under the default
rule (``--judge gguf:qwen2.5-1.5b``: its one-token answer alone) asks the real server; a nonce in
the replies keeps the judge cache from answering for the server. Marked ``judge``; skipped when
llama-cpp-python is not installed.
"""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import pytest
from engine_fixtures import QWEN3_OMNI, cli, meta, shared, summary  # noqa: F401

from vocalbench.runner.store import RunStore

pytestmark = pytest.mark.judge


def test_zh_knowledge_judge_scores_real_items(shared: Path, tmp_path: Path) -> None:
    pytest.importorskip("llama_cpp", reason="the local judge needs llama-cpp-python (pip install 'vocalbench[llm]')")
    from vocalbench.components.llm_server import ensure_server

    ensure_server()  # reuse the shared server (or start it) before timing anything
    nonce = uuid.uuid4().hex[:8]
    qwen = {json.loads(l)["Qid"]: json.loads(l)["Response"]
            for l in (QWEN3_OMNI / "json" / "chinese_knowledge.json").read_text(encoding="utf-8").splitlines()}
    rows = [
        {"subset": "chinese_knowledge", "id": "chinese_knowledge-0005", "text": qwen["chinese_knowledge-0005"] + f"\n（{nonce}）"},
        {"subset": "chinese_knowledge", "id": "chinese_knowledge-0000", "text": f"是嵩山的 Shaolin Temple。（{nonce}）"},
        {"subset": "general_knowledge", "id": "general_knowledge-0000", "text": f"最低的一层是平流层。（{nonce}）"},
        {"subset": "general_knowledge", "id": "general_knowledge-0001", "text": f"我不知道。（{nonce}）"},
    ]
    folder = tmp_path / "jsonl"
    folder.mkdir()
    (folder / "r.jsonl").write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in rows), encoding="utf-8")
    run = tmp_path / "run"
    assert cli("import", "--format", "jsonl", "--outputs", str(folder), "--data", str(shared), "--lang", "zh",
               "--out", str(run), "--quiet") == 0
    assert cli("score", str(run), "--judge", "local", "--quiet") == 0
    with RunStore(run) as store:
        scores = {(s.subset, s.sample_id): s for s in store.scores() if s.name == "main"}
        assert not any(u.calls for u in store.judge_usage().values())  # the graders decided them all
    for r in rows:
        s = scores[(r["subset"], r["id"])]
        assert s.unscored is None and s.system_error is None, (r["id"], s.unscored)
        assert s.value in (0.0, 1.0) and s.details.get("rule") == "judge"
        # settled by the grader: it is the verdict's judge, and no model is named
        assert s.judge is None and s.decided_by is not None and s.decided_by.source in ("grader", "rule")
        assert s.decided_by.grader and s.decided_by.model is None
    first = summary(run)
    decided = first["subsets"]["chinese_knowledge"]["decided_by"]
    assert decided["model"] == 0 and decided["grader"] + decided["rule"] == 2
    assert first["provenance"]["judge"].startswith("qwen2.5-1.5b+cal-")
    validity = first["provenance"]["judge_validity"]
    # since issue 27 the rules no longer pass any answer with new content: below the agreement bar
    assert validity["families"]["knowledge_zh"]["status"] == "below the agreement bar"
    assert "chinese_knowledge" in validity["unvalidated_subsets"]
    assert validity["same_model_as_system"] is False  # imported outputs: the system's model is unknown
    ck = first["subsets"]["chinese_knowledge"]
    assert ck["scored"] == 1000 and ck["system_errors"] == 998 and ck["unscored"] == 0
    # resumed: nothing is judged again
    assert cli("score", str(run), "--judge", "local", "--quiet") == 0
    assert meta(run, "last_score")["judge_calls"] == 0 and summary(run)["subsets"] == first["subsets"]

    # the same model asked for every item (the default rule: its answer alone)
    assert cli("score", str(run), "--judge", "gguf:qwen2.5-1.5b", "--quiet") == 0
    with RunStore(run) as store:
        scores = {(s.subset, s.sample_id): s for s in store.scores() if s.name == "main"}
        usage = [u for judge, u in store.judge_usage().items() if "+unfitted@" in judge]
    assert usage and usage[0].calls >= 4 and usage[0].cache_hits == 0 and usage[0].prompt_tokens > 0
    for r in rows:
        s = scores[(r["subset"], r["id"])]
        assert s.value in (0.0, 1.0) and s.judge is not None and "main" in json.loads(s.judge.raw)
    assert summary(run)["provenance"]["judge_validity"]["families"]["knowledge_zh"]["status"] == "not checked"
