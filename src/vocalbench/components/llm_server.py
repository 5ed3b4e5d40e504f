"""The local LLM server: llama.cpp's OpenAI-compatible server on the packaged Qwen2.5 GGUF.

``ensure_server()`` returns a running server, reusing one that is already up (a state file in
``cache_dir()/llm_server`` records its pid and port and is checked for liveness), else starting
``python -m llama_cpp.server`` on a free 127.0.0.1 port and waiting until ``/v1/models`` answers.
One handle per process (the judge and the cascade brain share it).

A server is a resource shared by every process that uses it (two runs on one cache, a run beside
``judge-check``, the replicas of a scale-out). Each such process holds a *lease*: a file
``<alias>.leases/<pid>`` beside the state file naming the process (pid and start time, so a reused
pid is not taken for it), taken under the alias's file lock before the server is reused or
started. ``release()`` (also ``ServerHandle.stop()``, and at the process's exit) gives the lease
up, and the release that leaves no live lease stops the server, whoever started it. A lease whose
process is gone (killed) is stale and removed where it is seen; a server that no live process
leases (an orphan: its users were killed) is adopted by the next ``ensure_server`` when it
answers, and stopped and replaced when it does not. A user whose server vanished anyway (it
crashed, or was killed) finds or starts one again and retries its request once
(:func:`server_lost`; components/llm.py, systems/cascade.py).
"""

from __future__ import annotations

import atexit
import json
import logging
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import Self

from pydantic import JsonValue

from vocalbench.files import pid_alive, write_json

logger = logging.getLogger(__name__)

MODELS = {"qwen2.5-1.5b": "qwen2.5-1.5b", "qwen2.5-0.5b": "qwen2.5-0.5b"}  # alias -> assets name
SEED = 1234
START_TIMEOUT = 300.0
BUSY_TIMEOUT = 120.0  # a live server busy with a long prompt answers /v1/models only after it


class ServerError(RuntimeError):
    """The local LLM server could not be started; the message points at its log file."""


@dataclass
class ServerHandle:
    """A running local server: where it listens and whether this process started it."""

    base_url: str  # e.g. http://127.0.0.1:PORT/v1
    model_alias: str
    pid: int
    port: int
    owned: bool = False
    log: str | None = None
    _proc: subprocess.Popen[bytes] | None = field(default=None, repr=False)

    def stop(self) -> None:
        """This process is done with the server: its lease is released (:func:`release`), and the
        server stops when no other live process leases it."""
        release(self.model_alias)

    def __enter__(self) -> Self:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.stop()


_HANDLES: dict[str, ServerHandle] = {}
_LEASED: dict[str, int] = {}  # alias -> the pid that took its lease (a forked child holds none)
_AT_EXIT: set[str] = set()  # aliases whose lease this process releases at its exit
_LOCK = threading.Lock()


def _state_dir() -> Path:
    from vocalbench.config import cache_dir

    p = cache_dir() / "llm_server"
    p.mkdir(parents=True, exist_ok=True)
    return p


def _state_file(alias: str) -> Path:
    return _state_dir() / f"{alias}.json"


def _lease_dir(alias: str) -> Path:
    return _state_dir() / f"{alias}.leases"


def _read_state(path: Path) -> dict[str, JsonValue]:
    try:
        body = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    return body if isinstance(body, dict) else {}


@contextmanager
def _locked(alias: str) -> Iterator[None]:
    """The alias's file lock: one process at a time starts, adopts, leases or stops its server."""
    import fcntl

    with open(_state_dir() / f"{alias}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def _stat(pid: int) -> list[str] | None:
    """The fields of ``/proc/<pid>/stat`` from the state on (None where there is no such file)."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return text[text.rindex(")") + 2:].split()


def _start_time(pid: int) -> int | None:
    """When process ``pid`` started (clock ticks since boot; None where /proc does not say)."""
    fields = _stat(pid)
    return int(fields[19]) if fields is not None and len(fields) > 19 else None


def running(pid: int, start: int | None = None) -> bool:
    """Whether process ``pid`` runs: a zombie does not, and with ``start`` it must be the process
    that started then (not another one that got its pid since)."""
    if not pid_alive(pid):
        return False
    fields = _stat(pid)
    if fields is None:  # no /proc here: the signal check is all there is
        return True
    return fields[0] not in ("Z", "X") and (start is None or len(fields) <= 19 or int(fields[19]) == start)


def _take_lease(alias: str) -> None:
    pid = os.getpid()
    d = _lease_dir(alias)
    d.mkdir(exist_ok=True)
    write_json(d / str(pid), {"pid": pid, "start": _start_time(pid), "command": " ".join(sys.argv[:3])})
    _LEASED[alias] = pid


def live_leases(alias: str) -> list[int]:
    """The pids of the processes that lease ``alias``'s server now (stale leases are removed)."""
    d = _lease_dir(alias)
    pids = []
    for path in sorted(d.glob("[0-9]*")) if d.is_dir() else []:
        body = _read_state(path)
        pid, start = body.get("pid"), body.get("start")
        if isinstance(pid, int) and running(pid, start if isinstance(start, int) else None):
            pids.append(pid)
        else:  # leases are written whole (and under the lock): this one's process is gone
            path.unlink(missing_ok=True)
    return pids


def _terminate(pid: int, proc: subprocess.Popen[bytes] | None = None) -> None:
    """Stop the server ``pid`` (its process group: it was started in a session of its own)."""
    for sig, wait in ((signal.SIGTERM, 20.0), (signal.SIGKILL, 10.0)):
        try:
            os.killpg(pid, sig)
        except ProcessLookupError:
            return
        deadline = time.monotonic() + wait
        while time.monotonic() < deadline:
            if (proc.poll() is not None) if proc is not None else not running(pid):
                return
            time.sleep(0.1)


def release(model: str = "qwen2.5-1.5b") -> None:
    """Give up this process's lease of ``model``'s server; when no other live process leases it,
    stop it (whoever started it) and remove its state file. Nothing happens in a process that holds
    no lease."""
    with _LOCK:
        handle = _HANDLES.pop(model, None)
        if _LEASED.get(model) != os.getpid():
            return
        del _LEASED[model]
        with _locked(model):
            (_lease_dir(model) / str(os.getpid())).unlink(missing_ok=True)
            if live_leases(model):
                return
            state = _state_file(model)
            pid = _read_state(state).get("pid")
            if isinstance(pid, int) and running(pid):
                logger.info("stopping the llama.cpp server of %s (pid %d): its last user is done", model, pid)
                proc = handle._proc if handle is not None and handle.pid == pid else None
                _terminate(pid, proc)
            state.unlink(missing_ok=True)
        if handle is not None:
            handle.owned = False


def server_lost(exc: BaseException) -> bool:
    """Whether a request failed because the server is gone (its connection was refused or broken),
    not because it was slow: then the caller finds one again (:func:`ensure_server`) and retries once."""
    import openai

    return isinstance(exc, openai.APIConnectionError) and not isinstance(exc, openai.APITimeoutError)


def _answers(port: int, alias: str, timeout: float = 2.0) -> bool:
    """True when 127.0.0.1:port serves /v1/models listing ``alias``."""
    import httpx

    try:
        r = httpx.get(f"http://127.0.0.1:{port}/v1/models", timeout=timeout)
    except httpx.HTTPError:
        return False
    if r.status_code != 200:
        return False
    try:
        models = r.json().get("data", [])
    except (ValueError, AttributeError):  # something else answers on that port
        return False
    return any(isinstance(m, dict) and m.get("id") == alias for m in models)


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _reuse(alias: str) -> ServerHandle | None:
    """The recorded server when it runs and answers (adopted when no other live process leases
    it); a recorded server that runs but does not answer is stopped; None when none is usable."""
    state_file = _state_file(alias)
    state = _read_state(state_file)
    pid, port = state.get("pid"), state.get("port")
    if not isinstance(pid, int) or not isinstance(port, int) or not running(pid):
        state_file.unlink(missing_ok=True)
        return None
    # the recorded process is alive: it may be busy with another client's long prompt, so wait for it
    # rather than starting a second server that would share the cores with it
    if not _answers(port, alias, BUSY_TIMEOUT):
        logger.warning("the llama.cpp server of %s (pid %d) runs but does not answer: stopped, a new one starts",
                       alias, pid)
        _terminate(pid)
        state_file.unlink(missing_ok=True)
        return None
    others = [p for p in live_leases(alias) if p != os.getpid()]
    if not others:  # an orphan: every process that used it is gone; this one takes it over
        logger.info("adopting the llama.cpp server of %s (pid %d): no live process uses it", alias, pid)
        write_json(state_file, {**state, "owner": os.getpid(), "adopted": time.time()})
    log = state.get("log")
    return ServerHandle(f"http://127.0.0.1:{port}/v1", alias, pid, port, owned=False,
                        log=log if isinstance(log, str) else None)


def _start(alias: str, threads: int, n_ctx: int) -> ServerHandle:
    from importlib.util import find_spec

    from vocalbench.components import assets
    from vocalbench.errors import MissingDependency

    for module in ("llama_cpp", "uvicorn", "fastapi", "sse_starlette", "starlette_context", "pydantic_settings"):
        if find_spec(module) is None:
            raise MissingDependency("the local LLM server", module, "llm")
    gguf = assets.ensure(MODELS[alias]) if alias in MODELS else Path(_GGUF[alias])
    port = _free_port()
    log = _state_dir() / f"{alias}.log"
    cmd = [sys.executable, "-m", "llama_cpp.server", "--model", str(gguf), "--host", "127.0.0.1",
           "--port", str(port), "--n_ctx", str(n_ctx), "--n_threads", str(decode_threads()), "--n_threads_batch", str(threads),
           "--model_alias", alias,
           # another client's request waits for the model instead of cutting a streaming reply short
           "--interrupt_requests", "False",
           "--seed", str(SEED)]
    logger.info("starting the llama.cpp server for %s on port %d (log: %s)", alias, port, log)
    with open(log, "wb") as fh:
        proc = subprocess.Popen(cmd, stdout=fh, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                start_new_session=True)
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise ServerError(f"llama.cpp server exited with status {proc.returncode}; see {log}")
        if _answers(port, alias):
            write_json(_state_file(alias), {"pid": proc.pid, "port": port, "log": str(log), "model": str(gguf),
                                            "owner": os.getpid(), "started": time.time()})
            return ServerHandle(f"http://127.0.0.1:{port}/v1", alias, proc.pid, port, owned=True, log=str(log),
                                _proc=proc)
        time.sleep(0.5)
    os.killpg(proc.pid, signal.SIGTERM)
    raise ServerError(f"llama.cpp server did not answer within {START_TIMEOUT:.0f} s; see {log}")


def server_threads() -> int:
    """CPU threads with which a server this process starts reads prompts: ``VOCALBENCH_LLM_THREADS``,
    default 2 (decoding: :func:`decode_threads`). On a
    machine whose other cores are busy, 1 is several times faster (llama.cpp's threads wait for
    each other at every step)."""
    value = os.environ.get("VOCALBENCH_LLM_THREADS", "2")
    if not value.isdigit() or int(value) < 1:
        raise ValueError(f"VOCALBENCH_LLM_THREADS must be a positive integer, got {value!r}")
    return int(value)


def decode_threads() -> int:
    """CPU threads of a started server's token-by-token decoding: ``VOCALBENCH_LLM_DECODE_THREADS``,
    default 1. Decoding is bound by memory bandwidth, so one thread keeps most of its speed, and it
    leaves the other cores to the cascade's TTS speaking the reply's earlier sentences (two threads
    that share their cores with other work wait for each other at every token: 5x slower measured
    on a loaded machine; the tokens are the same). Prompts (the judge's) are read with
    :func:`server_threads`."""
    value = os.environ.get("VOCALBENCH_LLM_DECODE_THREADS", "1")
    if not value.isdigit() or int(value) < 1:
        raise ValueError(f"VOCALBENCH_LLM_DECODE_THREADS must be a positive integer, got {value!r}")
    return int(value)


_GGUF: dict[str, str] = {}  # alias -> path of a user's GGUF file (``gguf:PATH``)


def gguf_alias(path: str) -> str:
    """The server alias of a user's GGUF file: its name and a hash of where it is and what it is
    (path, size, modification time), so another file under the same name is another model."""
    import hashlib
    import re

    p = Path(path).expanduser().resolve()
    if not p.is_file():
        raise FileNotFoundError(f"{path}: no such GGUF file")
    st = p.stat()
    digest = hashlib.sha256(f"{p}|{st.st_size}|{st.st_mtime_ns}".encode()).hexdigest()[:8]
    alias = f"gguf-{re.sub(r'[^A-Za-z0-9._-]+', '-', p.stem)[:60]}-{digest}"
    _GGUF[alias] = str(p)
    return alias


def ensure_server(model: str = "qwen2.5-1.5b", *, threads: int | None = None, n_ctx: int = 4096) -> ServerHandle:
    """A running local server for ``model`` (a packaged model's alias, or an alias made by
    :func:`gguf_alias`; reused when one is up; started otherwise with ``threads`` CPU threads,
    default ``server_threads()``)."""
    if model not in MODELS and model not in _GGUF:
        raise KeyError(f"unknown local model '{model}' (known: {', '.join(MODELS)}, or gguf:PATH)")
    with _LOCK:
        handle = _HANDLES.get(model)
        if (handle is not None and _LEASED.get(model) == os.getpid() and running(handle.pid)
                and _answers(handle.port, model, BUSY_TIMEOUT)):
            return handle
        with _locked(model):  # one process starts it; the others wait, then reuse it
            _take_lease(model)
            try:
                handle = _reuse(model) or _start(model, threads or server_threads(), n_ctx)
            except BaseException:
                (_lease_dir(model) / str(os.getpid())).unlink(missing_ok=True)
                del _LEASED[model]
                raise
        _HANDLES[model] = handle
        if model not in _AT_EXIT:  # this process's lease ends with it
            atexit.register(release, model)
            _AT_EXIT.add(model)
        return handle
