"""The local LLM server: llama.cpp's OpenAI-compatible server on the packaged Qwen2.5 GGUF.

``ensure_server()`` returns a running server, reusing one that is already up (a state file in
``cache_dir()/llm_server`` records pid and port and is checked for liveness), else starting
``python -m llama_cpp.server`` on a free 127.0.0.1 port and waiting until ``/v1/models`` answers.
One handle per process (the judge and the cascade brain share it). ``stop()`` and the context
manager stop only a server this process started; a reused one is left alone. A server this process
started is also stopped when the process exits.
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
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Self

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
    """A running local server: where it listens and whether this process owns it."""

    base_url: str  # e.g. http://127.0.0.1:PORT/v1
    model_alias: str
    pid: int
    port: int
    owned: bool = False
    log: str | None = None
    _proc: subprocess.Popen[bytes] | None = field(default=None, repr=False)

    def stop(self) -> None:
        """Stop the server if this process started it (a reused server is left running)."""
        if not self.owned:
            return
        if self._proc is not None:
            self._proc.terminate()
            try:
                self._proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self._proc.kill()
                self._proc.wait()
        self.owned = False
        state = _state_file(self.model_alias)
        if _read_state(state).get("pid") == self.pid:
            state.unlink(missing_ok=True)
        with _LOCK:
            if _HANDLES.get(self.model_alias) is self:
                del _HANDLES[self.model_alias]

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


_HANDLES: dict[str, ServerHandle] = {}
_LOCK = threading.Lock()


def _state_dir() -> Path:
    from vocalbench.config import cache_dir

    p = cache_dir() / "llm_server"
    p.mkdir(parents=True, exist_ok=True)
    return p


def _state_file(alias: str) -> Path:
    return _state_dir() / f"{alias}.json"


def _read_state(path: Path) -> dict[str, Any]:
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return {}


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
    state = _read_state(_state_file(alias))
    pid, port = state.get("pid"), state.get("port")
    # the recorded process is alive: it may be busy with another client's long prompt, so wait for it
    # rather than starting a second server that would share the cores with it
    if isinstance(pid, int) and isinstance(port, int) and pid_alive(pid) and _answers(port, alias, BUSY_TIMEOUT):
        return ServerHandle(f"http://127.0.0.1:{port}/v1", alias, pid, port, owned=False, log=state.get("log"))
    return None


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
            write_json(_state_file(alias), {"pid": proc.pid, "port": port, "log": str(log),
                                            "model": str(gguf), "started": time.time()})
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
    import fcntl

    if model not in MODELS and model not in _GGUF:
        raise KeyError(f"unknown local model '{model}' (known: {', '.join(MODELS)}, or gguf:PATH)")
    with _LOCK:
        handle = _HANDLES.get(model)
        if handle is not None and pid_alive(handle.pid) and _answers(handle.port, model, BUSY_TIMEOUT):
            return handle
        with open(_state_dir() / f"{model}.lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)  # one process starts it; the others wait, then reuse
            try:
                handle = _reuse(model) or _start(model, threads or server_threads(), n_ctx)
            finally:
                fcntl.flock(lock, fcntl.LOCK_UN)
        _HANDLES[model] = handle
        if handle.owned:  # stop what this process started when it exits
            atexit.register(handle.stop)
        return handle
