"""One process writes a run folder at a time: a second writer gets one line and exit 2; a lock
left by a dead process is taken over; readers take no lock."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from release import knowledge_script, make_release

from vocalbench.cli import main
from vocalbench.runner import lock
from vocalbench.runner.folder import RunFolder

SRC = str(Path(__file__).resolve().parents[2] / "src")


def _gen(rel: Path, script: Path, out: Path) -> list[str]:
    return ["generate", "--system", f"scripted:{script}", "--data", str(rel), "--lang", "en", "--out", str(out),
            "--quiet", "--concurrency", "1", "--no-warmup"]


def _wait_for(path: Path, seconds: float = 60) -> None:
    end = time.monotonic() + seconds
    while not path.exists():
        assert time.monotonic() < end, f"{path} never appeared"
        time.sleep(0.05)


def test_a_second_writer_of_a_run_gets_one_line_and_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rel = make_release(tmp_path / "rel", 4)
    slow = knowledge_script(tmp_path / "slow.jsonl", 4, delay=1.5)
    run = tmp_path / "RUN"
    first = subprocess.Popen([sys.executable, "-m", "vocalbench.cli", *_gen(rel, slow, run)],
                             env={**os.environ, "PYTHONPATH": SRC}, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        _wait_for(run / "config.json")
        holder = json.loads((run / lock.LOCK).read_text())
        assert holder == {"pid": first.pid, "host": socket.gethostname(), "command": "vocalbench generate"}
        other = knowledge_script(tmp_path / "other.jsonl", 4)
        for argv in (_gen(rel, other, run), ["score", str(run), "--judge", "none", "--quiet"]):
            code = main(argv)
            err = capsys.readouterr().err.strip().splitlines()
            assert code == 2 and len(err) == 1 and "in use by" in err[0] and f"pid {first.pid}" in err[0], err
    finally:
        first.wait(timeout=120)
    assert first.returncode == 0, first.stderr.read()
    assert not (run / lock.LOCK).exists()
    assert json.loads((run / "config.json").read_text())["system"] == f"scripted:{slow}"


def test_a_stale_lock_is_taken_over(tmp_path: Path) -> None:
    rel = make_release(tmp_path / "rel", 2)
    script = knowledge_script(tmp_path / "s.jsonl", 2)
    run = tmp_path / "RUN"
    run.mkdir()
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    (run / lock.LOCK).write_text(json.dumps({"pid": dead.pid, "host": socket.gethostname(), "command": "x"}))
    assert main(_gen(rel, script, run)) == 0
    assert not (run / lock.LOCK).exists() and not list(run.glob(".lock*"))


def test_a_lock_from_another_host_is_respected(tmp_path: Path) -> None:
    run = tmp_path / "RUN"
    run.mkdir()
    (run / lock.LOCK).write_text(json.dumps({"pid": 1, "host": "elsewhere.example", "command": "vocalbench run"}))
    with pytest.raises(lock.RunLocked, match="elsewhere.example"), RunFolder(run) as folder:
        folder.store  # noqa: B018  (opening the store is the first write)


def test_one_process_shares_its_hold_and_readers_take_none(tmp_path: Path) -> None:
    run = tmp_path / "RUN"
    with RunFolder(run) as outer:
        outer.store  # noqa: B018
        with RunFolder(run) as inner:
            inner.store  # noqa: B018
        assert (run / lock.LOCK).exists()  # the outer hold stays
        with RunFolder(run, write=False) as reader:
            reader.store  # noqa: B018
    assert not (run / lock.LOCK).exists()
