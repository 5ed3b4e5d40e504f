"""Two runs on one cache (two users' terminals, a run beside ``judge-check``): the mini set, the
models, the result cache and the local llama.cpp server are shared.

Two main jobs (a small slice: English, three subsets, one item each) start together on one fresh
cache (the packaged models linked in, so nothing else of the cache is shared with other work on
this machine): both finish with every item answered and scored, the mini set is built once (the
second waits for the first's build), no server is left, and a run whose replies equal those of a
third run made alone afterwards has its summary too (timings aside). The replies themselves can
differ: llama-cpp-python's server reuses the longest prompt prefix of the request before, and two
runs asking the same question one after the other make the second evaluate one prompt token
instead of the question's tokens, whose numerics differ enough to change a greedy reply at a near
tie (measured: 1 of 3 replies of one run). ``judge-check`` beside a ``score`` is drilled in
tests/components/test_server_drills.py. Marked ``slow`` and ``judge``: the fresh build and the
cascade take minutes on 2 cores.
"""

from __future__ import annotations

import json
import os
import sqlite3
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


def replies(run: Path) -> dict[str, str]:
    """Each sample's reply text."""
    db = sqlite3.connect(run / "store.sqlite")
    try:
        rows = db.execute("SELECT subset, sample_id, record FROM replies").fetchall()
    finally:
        db.close()
    return {f"{subset}/{sid}": json.loads(record)["text"] for subset, sid, record in rows}


def test_two_main_jobs_on_one_fresh_cache_build_once_and_score_as_alone(tmp_path: Path,
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
    summaries = {k: json.loads((tmp_path / k / "summary.json").read_text(encoding="utf-8"))
                 for k in ("a", "b", "alone")}
    texts = {k: replies(tmp_path / k) for k in summaries}
    alone = summaries["alone"]
    same = {}
    for k in ("a", "b"):
        assert summaries[k]["subsets"].keys() == alone["subsets"].keys()
        for name, sub in summaries[k]["subsets"].items():
            counts = ("n", "scored", "unscored", "system_errors", "complete")
            assert {f: sub[f] for f in counts} == {f: alone["subsets"][name][f] for f in counts}, (k, name)
            assert sub["unscored"] == 0 and sub["system_errors"] == 0
        assert texts[k].keys() == texts["alone"].keys()
        same[k] = [q for q, t in texts[k].items() if t == texts["alone"][q]]
        if len(same[k]) == len(texts[k]):  # the same replies: the same summary, timings aside
            assert without_timings(summaries[k]) == without_timings(alone), k
    print(f"\ntwo main jobs together: {together:.0f} s, {len(builds)} build, replies as alone: "
          f"a {len(same['a'])}/{len(texts['a'])}, b {len(same['b'])}/{len(texts['b'])}; servers left: "
          f"{len(servers(cache))}")
    assert same["a"] or same["b"]  # at least one run's replies match alone's (see the module docstring)
