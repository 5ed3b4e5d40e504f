"""Drills with the real llama.cpp server (Qwen2.5 1.5B) shared by two processes on one cache.

A borrower (``vocalbench score`` asking the model for every verdict of four imported Mandarin
replies) runs beside an owner process that started the server; in the middle of the borrower's
scoring the owner is SIGKILLed, or exits normally, or the server itself is SIGKILLed; or the owner
is ``judge-check``, which ends first (the score paused meanwhile). Each time the borrower finishes with the same verdicts as
alone, and no server of the drill's cache runs once both have exited. Each drill has its own cache (the packaged models linked in) so it neither
borrows nor stops a server that other work on this machine uses. Marked ``slow`` and ``judge``.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from llm_servers import servers

pytestmark = [pytest.mark.slow, pytest.mark.judge]

SHARED = Path(__file__).resolve().parents[2].parent / "shared" / "vocalbench"
ALIAS = "qwen2.5-1.5b"
ROWS = [
    {"subset": "chinese_knowledge", "id": "chinese_knowledge-0000", "text": "是嵩山的少林寺。"},
    {"subset": "chinese_knowledge", "id": "chinese_knowledge-0001", "text": "我不知道。"},
    {"subset": "general_knowledge", "id": "general_knowledge-0000", "text": "最低的一层是平流层。"},
    {"subset": "general_knowledge", "id": "general_knowledge-0001", "text": "最低的一层是对流层。"},
]
CLI = "import sys; from vocalbench.cli import main; sys.exit(main(sys.argv[1:]))"
OWNER = ("import sys; from vocalbench.components.llm_server import ensure_server; h = ensure_server(); "
         "print(h.pid, h.owned, flush=True); sys.stdin.readline()")


@pytest.fixture(scope="module")
def models() -> Path:
    pytest.importorskip("llama_cpp", reason="the local judge needs llama-cpp-python (pip install 'vocalbench[llm]')")
    if not (SHARED / "zh" / "json").is_dir():
        pytest.skip(f"official VocalBench metadata not found at {SHARED}")
    from vocalbench.components import assets
    from vocalbench.components.llm_server import MODELS

    assets.ensure(MODELS[ALIAS])  # assembled once in the user's cache; each drill links it
    return assets.models_dir()


def drill_cache(root: Path, models: Path) -> tuple[dict[str, str], Path]:
    """A fresh cache with the packaged models linked in, the environment that uses it, and a run
    folder of the imported replies."""
    cache = root / "cache"
    cache.mkdir(parents=True)
    (cache / "models").symlink_to(models)
    env = {**os.environ, "VOCALBENCH_CACHE": str(cache)}
    outputs = root / "jsonl"
    outputs.mkdir()
    (outputs / "r.jsonl").write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in ROWS), encoding="utf-8")
    run = root / "run"
    subprocess.run([sys.executable, "-c", CLI, "import", "--format", "jsonl", "--outputs", str(outputs), "--data",
                    str(SHARED), "--lang", "zh", "--out", str(run), "--quiet"], env=env, check=True, timeout=300)
    return env, run


def score(run: Path, env: dict[str, str]) -> subprocess.Popen[bytes]:
    """The borrower: one judge call at a time, so that a fault in its middle meets calls not yet made."""
    return subprocess.Popen([sys.executable, "-c", CLI, "score", str(run), "--judge", f"gguf:{ALIAS}",
                             "--judge-concurrency", "1", "--subsets", "chinese_knowledge,general_knowledge",
                             "--quiet"], env=env)


def verdicts(run: Path) -> dict[str, Any]:
    from vocalbench.runner.store import RunStore

    with RunStore(run) as store:
        scores = {s.sample_id: (s.value, s.unscored) for s in store.scores()
                  if s.name == "main" and s.sample_id in {r["id"] for r in ROWS}}
        [usage] = [u for judge, u in store.judge_usage().items() if "+unfitted@" in judge]
    return {"scores": scores, "calls": usage.calls, "errors": usage.errors}


def completions(cache: Path) -> int:
    """Chat completions the drill's server has answered (its log's access lines)."""
    log = cache / "llm_server" / f"{ALIAS}.log"
    return log.read_text(errors="replace").count("/v1/chat/completions") if log.exists() else 0


def wait_for(what: str, check: Any, timeout: float = 600.0) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.2)


@pytest.fixture(scope="module")
def alone(models: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The borrower's verdicts when it runs alone (it starts the server and stops it at its exit)."""
    env, run = drill_cache(tmp_path_factory.mktemp("alone"), models)
    t0 = time.perf_counter()
    assert score(run, env).wait(timeout=900) == 0
    print(f"\nalone: scored in {time.perf_counter() - t0:.0f} s")
    assert servers(Path(env["VOCALBENCH_CACHE"])) == []
    return verdicts(run)


@pytest.mark.parametrize("fault", ["owner_killed", "owner_exits", "server_killed"])
def test_a_borrower_finishes_as_alone_and_no_server_is_left(fault: str, alone: dict[str, Any], models: Path,
                                                            tmp_path: Path) -> None:
    assert alone["errors"] == 0 and len(alone["scores"]) == len(ROWS)
    assert all(unscored is None for _, unscored in alone["scores"].values())
    env, run = drill_cache(tmp_path, models)
    cache = Path(env["VOCALBENCH_CACHE"])
    owner = subprocess.Popen([sys.executable, "-c", OWNER], env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                             text=True)
    assert owner.stdin is not None and owner.stdout is not None
    procs = [owner]
    try:
        server_pid, owned = owner.stdout.readline().split()
        assert owned == "True"  # the owner started the server
        borrower = score(run, env)
        procs.append(borrower)
        wait_for("the borrower's first verdict", lambda: completions(cache) >= 1)
        if fault == "owner_killed":
            owner.send_signal(signal.SIGKILL)
            owner.wait(timeout=30)
        elif fault == "owner_exits":
            owner.stdin.write("\n")
            owner.stdin.flush()
            assert owner.wait(timeout=60) == 0
        else:
            os.killpg(int(server_pid), signal.SIGKILL)
        assert borrower.wait(timeout=900) == 0
        if fault == "server_killed":  # the borrower started a new server; the owner, its last user, stops it
            assert servers(cache) and int(server_pid) not in servers(cache)
            owner.stdin.write("\n")
            owner.stdin.flush()
            assert owner.wait(timeout=60) == 0
        got = verdicts(run)
        left = servers(cache)
        kills = 0 if fault == "owner_exits" else 1
        print(f"\n{fault}: 2 runs, {kills} kill, {len(ROWS)} items expected, {len(got['scores'])} scored "
              f"({sum(u is None for _, u in got['scores'].values())} with a verdict), {got['calls']} judge calls, "
              f"{got['errors']} errors, servers left: {len(left)}")
        assert got["scores"] == alone["scores"] and got["errors"] == 0
        assert left == []
        assert not (cache / "llm_server" / f"{ALIAS}.json").exists()
    finally:
        clean_up(procs, cache)


def clean_up(procs: list[subprocess.Popen[Any]], cache: Path) -> None:
    """A failed drill leaves no process and no server behind."""
    for p in procs:
        if p.poll() is None:
            p.kill()
            p.wait()
    for pid in servers(cache):
        os.killpg(pid, signal.SIGKILL)


def test_a_score_beside_judge_check_finishes_as_alone(alone: dict[str, Any], models: Path, tmp_path: Path) -> None:
    """``judge-check`` (one item: one model call) starts the server; a score borrows it and, once it
    has had a verdict from the model, is paused (SIGSTOP) until the check has ended normally, then
    resumed: the check ended in the middle of the score, which still gets every verdict, as alone."""
    env, run = drill_cache(tmp_path, models)
    cache = Path(env["VOCALBENCH_CACHE"])
    check = subprocess.Popen([sys.executable, "-c", CLI, "judge-check", "--judge", f"gguf:{ALIAS}", "--rubrics",
                              "reasoning_binary_en", "--split", "dev", "--limit", "1", "--ask", "--quiet",
                              "--out", str(tmp_path / "check.json")], env=env)
    procs = [check]
    try:
        wait_for("judge-check's server", lambda: (cache / "llm_server" / f"{ALIAS}.json").exists())
        procs.append(borrower := score(run, env))
        wait_for("the score's first verdict", lambda: completions(cache) >= 2)  # the check makes one call
        borrower.send_signal(signal.SIGSTOP)
        assert borrower.poll() is None, "the score ended before the check: nothing was drilled"
        assert check.wait(timeout=900) == 0
        borrower.send_signal(signal.SIGCONT)
        assert borrower.wait(timeout=900) == 0
        report = json.loads((tmp_path / "check.json").read_text(encoding="utf-8"))
        got = verdicts(run)
        left = servers(cache)
        print(f"\njudge-check beside score: 2 runs, 0 kills, {len(ROWS)} items expected, {len(got['scores'])} scored "
              f"({sum(u is None for _, u in got['scores'].values())} with a verdict), {got['errors']} errors; "
              f"judge-check {report['n']} item(s), {report['calls']} call(s); servers left: {len(left)}")
        assert all(not f["errors"] for f in report["families"].values())
        assert got["scores"] == alone["scores"] and got["errors"] == 0
        assert left == []
    finally:
        clean_up(procs, cache)
