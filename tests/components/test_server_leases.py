"""The local LLM server as a shared resource: leases, orphans, the last user stops it.

A stand-in server (a tiny HTTP process answering ``/v1/models`` like llama.cpp's, started in its own
session like the real one) makes the bookkeeping fast to check; the drills with the real llama.cpp
server, killed owners and a killed server are in test_server_drills.py.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from vocalbench.components import llm_server

ALIAS = "qwen2.5-1.5b"
STAND_IN = """
import asyncio, sys
from aiohttp import web

async def models(request):
    if sys.argv[1] == "hung":
        await asyncio.sleep(3600)
    return web.json_response({"data": [{"id": "qwen2.5-1.5b"}]})

async def main():
    app = web.Application()
    app.router.add_get("/v1/models", models)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    print(site._server.sockets[0].getsockname()[1], flush=True)
    await asyncio.Event().wait()

asyncio.run(main())
"""


def stand_in(mode: str = "answers") -> tuple[subprocess.Popen[str], int]:
    proc = subprocess.Popen([sys.executable, "-c", STAND_IN, mode], stdout=subprocess.PIPE, text=True,
                            start_new_session=True)
    assert proc.stdout is not None
    return proc, int(proc.stdout.readline())


def dead_pid() -> int:
    """The pid of a process that has exited (and was reaped)."""
    p = subprocess.Popen(["true"])
    p.wait()
    return p.pid


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("VOCALBENCH_CACHE", str(tmp_path))
    monkeypatch.setattr(llm_server, "_HANDLES", {})
    monkeypatch.setattr(llm_server, "_LEASED", {})
    monkeypatch.setattr(llm_server, "_start", lambda *a: pytest.fail("started a server"))
    return tmp_path / "llm_server"


def test_an_orphan_is_adopted_and_its_last_user_stops_it(cache: Path) -> None:
    """The owner was killed (a stale lease, a dead owner in the state file), the server still runs:
    the next user adopts it; a borrower that leaves keeps it up for the adopter; the adopter's
    release is the last one and stops it."""
    proc, port = stand_in()
    try:
        cache.mkdir(parents=True, exist_ok=True)
        killed = dead_pid()
        (cache / f"{ALIAS}.json").write_text(json.dumps({"pid": proc.pid, "port": port, "owner": killed}))
        (cache / f"{ALIAS}.leases").mkdir()
        (cache / f"{ALIAS}.leases" / str(killed)).write_text(json.dumps({"pid": killed, "start": 1}))

        handle = llm_server.ensure_server()
        assert handle.port == port and handle.pid == proc.pid
        assert json.loads((cache / f"{ALIAS}.json").read_text())["owner"] == os.getpid()  # adopted
        assert llm_server.live_leases(ALIAS) == [os.getpid()]  # the killed owner's lease is gone

        borrower = ("from vocalbench.components.llm_server import ensure_server, live_leases; "
                    "h = ensure_server(); print(len(live_leases(h.model_alias)), h.port)")
        out = subprocess.run([sys.executable, "-c", borrower], capture_output=True, text=True, check=True,
                             timeout=60, env={**os.environ}).stdout.split()
        assert out == ["2", str(port)]  # it leased the same server, then left at its exit
        assert proc.poll() is None  # and left it running: this process still uses it

        handle.stop()
        assert proc.wait(timeout=30) is not None  # the last user stopped it
        assert not (cache / f"{ALIAS}.json").exists() and llm_server.live_leases(ALIAS) == []
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_a_release_without_a_lease_stops_nothing(cache: Path) -> None:
    proc, port = stand_in()
    try:
        cache.mkdir(parents=True, exist_ok=True)
        (cache / f"{ALIAS}.json").write_text(json.dumps({"pid": proc.pid, "port": port}))
        llm_server.release()  # this process never leased it
        assert proc.poll() is None and (cache / f"{ALIAS}.json").exists()
    finally:
        proc.kill()
        proc.wait()


def test_an_orphan_that_does_not_answer_is_stopped_and_replaced(cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    proc, port = stand_in("hung")
    started: list[str] = []

    def start(alias: str, threads: int, n_ctx: int) -> llm_server.ServerHandle:
        started.append(alias)
        return llm_server.ServerHandle("http://127.0.0.1:1/v1", alias, os.getpid(), 1, owned=True)

    try:
        cache.mkdir(parents=True, exist_ok=True)
        (cache / f"{ALIAS}.json").write_text(json.dumps({"pid": proc.pid, "port": port, "owner": dead_pid()}))
        monkeypatch.setattr(llm_server, "BUSY_TIMEOUT", 1.0)
        monkeypatch.setattr(llm_server, "_start", start)
        llm_server.ensure_server()
        assert started == [ALIAS]
        assert proc.wait(timeout=30) is not None  # the hung orphan was stopped, not left beside the new one
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        llm_server._LEASED.clear()


def test_a_zombie_or_a_reused_pid_is_not_a_live_user() -> None:
    child = subprocess.Popen(["true"])
    deadline = 50
    while llm_server._stat(child.pid) is not None and llm_server._stat(child.pid)[0] != "Z" and deadline:
        subprocess.run(["sleep", "0.1"])
        deadline -= 1
    assert os.path.exists(f"/proc/{child.pid}") and not llm_server.running(child.pid)  # exited, not reaped
    child.wait()
    me = os.getpid()
    assert llm_server.running(me, llm_server._start_time(me))
    assert not llm_server.running(me, (llm_server._start_time(me) or 0) + 1)  # another process under this pid
