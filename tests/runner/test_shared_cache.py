"""Two runs on one cache (two users' terminals, a run beside ``judge-check``): the mini set, the
models, the result cache and the local llama.cpp server are shared.

Two main jobs (a small slice: English, three subsets, one item each) start together on one fresh
cache (the packaged models linked in, so nothing else of the cache is shared with other work on
this machine): both finish, the mini set is built once (the second waits for the first's build),
and both summaries equal a third run's made alone afterwards (timings aside). Then ``judge-check``
starts the server and a ``score`` that asks the same model for every verdict borrows it; the
check ends first; the score still gets every verdict, and no server is left once both are done.
Marked ``slow`` and ``judge``: the fresh build and the cascade take minutes on 2 cores.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "components"))
from llm_servers import servers  # noqa: E402

pytestmark = [pytest.mark.slow, pytest.mark.judge]

CLI = "import sys; from vocalbench.cli import main; sys.exit(main(sys.argv[1:]))"
JOB = ["run", "--lang", "en", "--subsets", "knowledge,reasoning,single_round", "--limit", "1", "--quiet"]
TIMINGS = {"rtf", "fcl_ms", "faa_ms"}


def cli(env: dict[str, str], *argv: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen([sys.executable, "-c", CLI, *argv], env=env)


def without_timings(summary: dict[str, Any]) -> dict[str, Any]:
    """A summary's subsets, dimensions and overall, without what depends on the clock."""
    subsets = {k: {f: v for f, v in s.items() if f != "extra"} for k, s in summary["subsets"].items()
               if k not in TIMINGS}
    dims = {k: v for k, v in summary["dimensions"].items() if k not in TIMINGS}
    return {"subsets": subsets, "dimensions": dims, "overall": summary["overall"]}


@pytest.fixture
def fresh(tmp_path: Path) -> tuple[dict[str, str], Path]:
    pytest.importorskip("llama_cpp", reason="the offline cascade needs llama-cpp-python (pip install 'vocalbench[llm]')")
    from vocalbench import registry
    from vocalbench.components import assets

    missing = registry.get("system", "offline").missing()
    if missing:
        pytest.skip(f"offline system not installed (missing {missing})")
    for name in ("qwen2.5-1.5b", "whisper-base", "kokoro"):
        assets.ensure(name)  # assembled once in the user's cache; the fresh cache links them
    cache = tmp_path / "cache"
    cache.mkdir()
    (cache / "models").symlink_to(assets.models_dir())
    return {**os.environ, "VOCALBENCH_CACHE": str(cache)}, cache


def test_two_main_jobs_and_a_check_beside_a_score_on_one_fresh_cache(tmp_path: Path,
                                                                      fresh: tuple[dict[str, str], Path]) -> None:
    env, cache = fresh
    t0 = time.perf_counter()
    a, b = cli(env, *JOB, "--out", str(tmp_path / "a")), cli(env, *JOB, "--out", str(tmp_path / "b"))
    assert a.wait(timeout=1800) == 0 and b.wait(timeout=1800) == 0
    together = time.perf_counter() - t0
    [built] = list((cache / "mini").glob("*/en"))
    builds = (built / ".build" / "builds.jsonl").read_text(encoding="utf-8").splitlines()
    assert len(builds) == 1 and json.loads(builds[0])["pid"] in (a.pid, b.pid)  # built once, by one of them
    assert servers(cache) == []  # the last of the two stopped the server they shared

    assert cli(env, *JOB, "--out", str(tmp_path / "alone")).wait(timeout=1800) == 0
    summaries = {k: json.loads((tmp_path / k / "en" / "summary.json").read_text(encoding="utf-8"))
                 for k in ("a", "b", "alone")}
    for k in ("a", "b"):
        assert summaries[k]["subsets"].keys() == summaries["alone"]["subsets"].keys()
        assert without_timings(summaries[k]) == without_timings(summaries["alone"]), k
        assert all(s["system_errors"] == 0 and s["unscored"] == 0 for s in summaries[k]["subsets"].values())

    # judge-check starts the server; a score asking the same model for every verdict borrows it
    check = cli(env, "judge-check", "--judge", "gguf:qwen2.5-1.5b", "--rubrics", "reasoning_binary_en", "--limit", "1",
                "--ask", "--split", "dev", "--quiet", "--out", str(tmp_path / "check.json"))
    state = cache / "llm_server" / "qwen2.5-1.5b.json"
    deadline = time.monotonic() + 600
    while not state.exists() and check.poll() is None and time.monotonic() < deadline:
        time.sleep(0.2)
    assert state.exists(), "judge-check did not start the server"
    score = cli(env, "score", str(tmp_path / "a"), "--judge", "gguf:qwen2.5-1.5b", "--quiet")
    assert check.wait(timeout=900) == 0 and score.wait(timeout=900) == 0
    report = json.loads((tmp_path / "check.json").read_text(encoding="utf-8"))
    assert all(not f["errors"] for f in report["families"].values())
    from vocalbench.runner.store import RunStore

    with RunStore(tmp_path / "a" / "en") as store:
        [usage] = [u for judge, u in store.judge_usage().items() if "+unfitted@" in judge]
        judged = [s for s in store.scores() if s.name == "main" and s.judge is not None]
    assert usage["calls"] >= 1 and usage["errors"] == 0
    rescored = json.loads((tmp_path / "a" / "en" / "summary.json").read_text(encoding="utf-8"))
    assert all(s["unscored"] == 0 for s in rescored["subsets"].values())
    print(f"\ntwo main jobs together: {together:.0f} s, 1 build; judge-check beside score: "
          f"{usage['calls']} model verdicts, {len(judged)} judged, 0 errors; servers left: {len(servers(cache))}")
    assert servers(cache) == [] and not state.exists()
