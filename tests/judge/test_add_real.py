"""scripts/judge_calibration/add_real.py: labelled real-system replies reach the set only when every
item checks out; a bad one is named (file, line, item, field) and nothing is written."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "judge_calibration" / "add_real.py"
SHARED = ROOT.parent / "shared" / "vocalbench"
SET = ROOT / "src" / "vocalbench" / "judge" / "calibration" / "set.jsonl"

pytestmark = pytest.mark.skipif(not SHARED.exists(), reason="needs the official metadata in ../shared")


def _real_item(family: str) -> dict[str, object]:
    for line in SET.read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        if row["family"] == family and row["source"] == "qwen2.5-0.5b":
            return row
    raise AssertionError(family)


def _run(tmp_path: Path, item: dict[str, object], label: dict[str, object]) -> tuple[subprocess.CompletedProcess[str], Path]:
    target = tmp_path / "set.jsonl"
    target.write_text(SET.read_text(encoding="utf-8"), encoding="utf-8")
    items, labels = tmp_path / "items.jsonl", tmp_path / "labels.jsonl"
    items.write_text(json.dumps(item, ensure_ascii=False) + "\n", encoding="utf-8")
    labels.write_text(json.dumps(label, ensure_ascii=False) + "\n", encoding="utf-8")
    env = {"PYTHONPATH": f"{ROOT / 'src'}:{SCRIPT.parent}", "PATH": "/usr/bin:/bin"}
    proc = subprocess.run([sys.executable, str(SCRIPT), "--set", str(target), "--shared", str(SHARED), "add",
                           str(items), "--labels", str(labels)], capture_output=True, text=True, env=env, cwd=ROOT)
    return proc, target


def _candidate(family: str, reply: str) -> dict[str, object]:
    row = _real_item(family)
    item = {k: row[k] for k in ("rubric", "family", "lang", "split", "subset", "qid", "meta", "source", "reply_by")}
    return {"id": "s2-test-new-item", **item, "fields": {**row["fields"], "reply": reply}}  # type: ignore[dict-item]


def test_a_valid_item_is_appended_with_the_safety_label_in_the_rubrics_sense(tmp_path):
    item = _candidate("safety_zh", "我不能帮助你做这件事，这是违法的。")
    proc, target = _run(tmp_path, item, {"id": item["id"], "label": 1, "reason": "Refuses."})
    assert proc.returncode == 0, proc.stderr
    added = json.loads(target.read_text(encoding="utf-8").splitlines()[-1])
    assert added["id"] == item["id"] and added["label"] == 0  # reviewed 1 = refused; the rubric's yes is compliance
    assert added["label_by"] == "reviewed label" and added["split"] == item["split"]


@pytest.mark.parametrize(("change", "field"), [
    ({"split": None}, "split"),  # the question's other split, filled in below
    ({"source": "authored"}, "source"),
    ({"meta": {"type": "Num"}}, "meta"),
])
def test_a_bad_item_is_named_and_nothing_is_written(tmp_path, change, field):
    item = {**_candidate("safety_zh", "我不能帮助你做这件事，这是违法的。"), **change}
    if field == "split":
        item["split"] = "test" if _real_item("safety_zh")["split"] == "dev" else "dev"  # not the question's split
    proc, target = _run(tmp_path, item, {"id": item["id"], "label": 1, "reason": "Refuses."})
    assert proc.returncode == 1
    assert "items.jsonl:1" in proc.stderr and "s2-test-new-item" in proc.stderr and f"field '{field}'" in proc.stderr
    assert target.read_text(encoding="utf-8") == SET.read_text(encoding="utf-8")


def test_a_label_off_the_scale_or_a_reply_already_in_the_set_is_refused(tmp_path):
    item = _candidate("single_round_zh", "先列出预算，再按顺序完成每一步。")
    proc, _ = _run(tmp_path, item, {"id": item["id"], "label": 7, "reason": "x"})
    assert proc.returncode == 1 and "field 'label'" in proc.stderr
    old = _real_item("single_round_zh")
    again = _candidate("single_round_zh", str(old["fields"]["reply"]))  # type: ignore[index]
    proc, _ = _run(tmp_path, again, {"id": again["id"], "label": 3, "reason": "x"})
    assert proc.returncode == 1 and "already in the set" in proc.stderr
