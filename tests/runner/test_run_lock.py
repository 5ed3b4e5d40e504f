"""One process writes a run folder at a time and nobody reads it meanwhile: a second writer gets
one line and exit 2, so does a report (a reader) while a run is written, and a writer while a
report reads the run or writes into its folder; readers share a run; a lock left by a dead process
is taken over."""

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


def test_one_process_shares_its_hold_and_reads_what_it_writes(tmp_path: Path) -> None:
    run = tmp_path / "RUN"
    with RunFolder(run) as outer:
        outer.store  # noqa: B018
        with RunFolder(run) as inner:
            inner.store  # noqa: B018
        assert (run / lock.LOCK).exists()  # the outer hold stays
        with RunFolder(run, write=False) as reader:
            reader.store  # noqa: B018
        assert [p.name for p in run.glob(".lock*")] == [lock.LOCK]  # its own reads need no reader's lock
    assert not list(run.glob(".lock*"))
    with RunFolder(run, write=False), RunFolder(run, write=False) as reader:
        reader.store  # noqa: B018
        assert [p.name for p in run.glob(".lock*")] == [f"{lock.READER}{socket.gethostname()}.{os.getpid()}"]
    assert not list(run.glob(".lock*"))


HOLD = ("import sys, time\nfrom vocalbench.runner.folder import RunFolder\n"
        "RunFolder(sys.argv[1], write=sys.argv[2] == 'write').__enter__()\nprint('held', flush=True)\ntime.sleep(120)")


def _held_by_another_process(run: Path, how: str) -> subprocess.Popen:
    """A process holding ``run`` to ``how`` (write or read) until it is killed."""
    other = subprocess.Popen([sys.executable, "-c", HOLD, str(run), how], env={**os.environ, "PYTHONPATH": SRC},
                             stdout=subprocess.PIPE, text=True)
    assert other.stdout is not None and other.stdout.readline().strip() == "held"
    return other


def _small_run(tmp_path: Path) -> Path:
    rel = make_release(tmp_path / "rel", 2)
    run = tmp_path / "RUN"
    assert main(_gen(rel, knowledge_script(tmp_path / "s.jsonl", 2), run)) == 0
    assert main(["score", str(run), "--judge", "none", "--quiet"]) == 0
    return run


def test_a_report_waits_for_no_writer_and_a_writer_for_no_reader(tmp_path: Path,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    run = _small_run(tmp_path)
    capsys.readouterr()
    writer = _held_by_another_process(run, "write")
    try:
        assert main(["report", str(run), "--out", str(tmp_path / "rep")]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and "in use by" in err[0] and f"pid {writer.pid}" in err[0], err
    finally:
        writer.kill()
        writer.wait()
    reader = _held_by_another_process(run, "read")
    try:
        assert main(["score", str(run), "--judge", "none", "--quiet"]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and "being read by" in err[0] and f"pid {reader.pid}" in err[0], err
        assert main(["export", str(run), "--out", str(tmp_path / "x.jsonl")]) == 0  # readers share a run
        assert main(["report", str(run), "--out", str(tmp_path / "rep")]) == 0
    finally:
        reader.kill()
        reader.wait()
    assert main(["score", str(run), "--judge", "none", "--quiet"]) == 0  # the dead reader's lock is stale
    assert not list(run.glob(".lock*"))


def test_a_report_writing_into_a_run_folder_holds_its_writer_lock(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    from vocalbench.report import site

    run = _small_run(tmp_path)
    seen: list[object] = []
    write_site = site._write_site

    def watched(*args, **kwargs):
        seen.append(json.loads((run / lock.LOCK).read_text())["pid"] if (run / lock.LOCK).exists() else None)
        return write_site(*args, **kwargs)

    monkeypatch.setattr(site, "_write_site", watched)
    assert main(["report", str(run), "--out", str(run / "report"), "--quiet"]) == 0
    assert seen == [os.getpid()]  # a writer of RUN is refused while the report writes RUN/report
    assert not list(run.glob(".lock*"))
