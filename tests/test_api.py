"""The Python API (docs/api.md): the worked example runs as written and prints what the page shows;
the API and the command line give the same run; options are checked like flags."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import vocalbench
from vocalbench.runner.folder import RunFolderError

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "vocalbench-echo"
DOC = ROOT / "docs" / "api.md"
FAST = {"lang": "en", "judge": "none", "asr": "none", "mos": "none", "emotion": "none", "limit": 1}


def _env() -> dict[str, str]:
    paths = [p for p in (os.environ.get("PYTHONPATH", ""), str(EXAMPLE)) if p]
    return {**os.environ, "PYTHONPATH": os.pathsep.join(paths)}


def test_the_worked_example_prints_what_the_docs_show(tmp_path: Path) -> None:
    text = DOC.read_text(encoding="utf-8")
    code = re.search(r"## Worked example.*?```python\n(.*?)```", text, re.S)
    shown = re.search(r"Output.*?```text\n(.*?)```", text, re.S)
    assert code is not None and shown is not None
    r = subprocess.run([sys.executable, "-c", code.group(1)], cwd=tmp_path, env=_env(), capture_output=True,
                       text=True, timeout=600, check=False)
    assert r.returncode == 0, r.stderr
    assert r.stdout == shown.group(1)
    assert (tmp_path / "runs" / "echo" / "report" / "leaderboard.html").is_file()


def test_api_and_command_line_make_the_same_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.syspath_prepend(str(EXAMPLE))
    system = "vocalbench_echo:echo_system"
    api = vocalbench.evaluate(system=system, subsets="knowledge", out=tmp_path / "api", **FAST)
    flags = [f"--{k}={v}" for k, v in FAST.items()]
    r = subprocess.run([sys.executable, "-m", "vocalbench.cli", "run", "--system", system, "--subsets", "knowledge",
                        *flags, "--out", str(tmp_path / "cli"), "--quiet"], env=_env(), capture_output=True,
                       text=True, timeout=600, check=False)
    assert r.returncode == 0, r.stderr
    cli = vocalbench.load_summary(tmp_path / "cli")
    assert api.subsets == cli.subsets and api.overall == cli.overall
    configs = [json.loads((tmp_path / side / "config.json").read_text(encoding="utf-8")) for side in ("api", "cli")]
    for c in configs:
        c.pop("versions"), c.pop("system_details")
    assert configs[0] == configs[1]
    assert vocalbench.load_summary(tmp_path / "api" / "summary.json") == api


def test_options_are_checked_like_flags(tmp_path: Path) -> None:
    with pytest.raises(TypeError, match="unknown option"):
        vocalbench.evaluate(system="scripted:x", out=tmp_path / "a", temperature=0.3)
    with pytest.raises(ValueError, match="one language per call"):
        vocalbench.evaluate(system="scripted:x", lang="both", out=tmp_path / "b")
    with pytest.raises(vocalbench.errors.CliError, match="--limit"):
        vocalbench.evaluate(system="scripted:x", out=tmp_path / "c", limit=0)
    with pytest.raises(RunFolderError, match="no summary.json"):
        vocalbench.load_summary(tmp_path)
    assert not (tmp_path / "c").exists()  # nothing written before every option is valid
