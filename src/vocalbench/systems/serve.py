"""``vocalbench serve``: any system behind OpenAI-compatible endpoints on 127.0.0.1.

Routes:
- ``POST /v1/chat/completions``: audio in (``input_audio`` wav), text + audio out, SSE when
  ``stream`` is true (``delta.audio.data`` base64 pcm16 24 kHz, ``delta.audio.transcript``, or
  ``delta.content`` when audio is not requested), one JSON body otherwise.
- ``GET /v1/realtime``: the OpenAI Realtime websocket protocol (session.update,
  conversation.item.create, input_audio_buffer.append/commit, response.create -> response.*), GA
  (``response.output_audio.delta``, ...) unless the client sends ``OpenAI-Beta: realtime=v1``, which
  gets the beta event names and session shape (:mod:`vocalbench.systems.realtime_events`).
- ``POST /v1/vocalbench/stream``: the vocalbench JSON protocol (NDJSON events; docs/systems.md).
- ``GET /health``.

A sample is identified by the optional ``X-VocalBench-Sample: subset/id`` and
``X-VocalBench-Lang`` headers (the scripted system matches on them; other systems ignore them).
``--faults "429:0.1,500:0.1,timeout:0.05,drop:0.1"`` injects faults per request at those rates
from a seeded generator, to drill clients. A realtime session with server-side turn detection
(systems/turn_taking.py) draws one fault for the whole session, and has its own: ``timeout`` stalls
the session (it reads and sends nothing more), ``drop`` closes the socket in its first response,
``malformed`` sends a frame that is not a JSON event, ``unknown`` events of a type no protocol
defines, ``overlong`` reply audio longer than all the input received, ``endless`` a response that
streams audio and never ends (the last four in every response).
"""

from __future__ import annotations

import asyncio
import base64
import gc
import json
import random
import tempfile
import time
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from aiohttp import WSMsgType, web
from pydantic import JsonValue

from vocalbench.audio import (
    AudioError,
    float_to_pcm16,
    info,
    pcm16_to_float,
    to_wav_bytes,
)
from vocalbench.components.vad import Kind
from vocalbench.records import AudioRef, Sample, Turn
from vocalbench.systems.base import (
    AudioChunk,
    Done,
    Event,
    Failure,
    Sent,
    System,
    TextDelta,
    Waiting,
)
from vocalbench.systems.realtime_events import (
    BETA_HEADER,
    NAMES,
    Api,
    Names,
    ReplyIds,
    audio_out,
    item_text,
    json_object,
    merge_session,
    pcm16_b64,
    reply_ids,
    server_session,
    to_24k,
    ws_send,
)
from vocalbench.systems.scripted import REQUEST_ARRIVAL
from vocalbench.systems.turn_taking import TurnTakingSession, requested_turn_detection

OPENAI_AUDIO_RATE = 24000
FAULT_KINDS = ("429", "500", "timeout", "drop", "malformed", "unknown", "overlong", "endless")


@dataclass(frozen=True)
class FaultPlan:
    """Per-request fault rates, e.g. ``429:0.1,500:0.1,timeout:0.05,drop:0.1``."""

    rates: tuple[tuple[str, float], ...] = ()
    hang_seconds: float = 3600.0

    @classmethod
    def parse(cls, spec: str | None) -> FaultPlan:
        if not spec:
            return cls()
        rates = []
        for part in spec.split(","):
            kind, _, rate = part.strip().partition(":")
            if kind not in FAULT_KINDS:
                raise ValueError(f"fault '{kind}' unknown (known: {', '.join(FAULT_KINDS)})")
            try:
                r = float(rate)
            except ValueError:
                raise ValueError(f"fault '{part}': expected KIND:RATE with a rate in [0, 1]") from None
            if not 0 <= r <= 1:
                raise ValueError(f"fault '{part}': rate must be in [0, 1]")
            rates.append((kind, r))
        if sum(r for _, r in rates) > 1:
            raise ValueError("fault rates add up to more than 1")
        return cls(tuple(rates))

    def draw(self, rng: random.Random) -> str | None:
        u, acc = rng.random(), 0.0
        for kind, r in self.rates:
            acc += r
            if u < acc:
                return kind
        return None


class SystemServer:
    """Serves one system; one instance per process."""

    def __init__(self, system: System, faults: FaultPlan | None = None, seed: int = 0,
                 turn_detection: Kind | None = None) -> None:
        self.system = system
        self.turn_detection = turn_detection  # server-side VAD offered to realtime sessions (turn_taking.py)
        self.faults = faults or FaultPlan()
        self.rng = random.Random(seed)
        self.tmp = Path(tempfile.mkdtemp(prefix="vocalbench-serve-"))
        self.stats: dict[str, int] = {"requests": 0, **{f"fault_{k}": 0 for k in FAULT_KINDS}}
        self._runner: web.AppRunner | None = None

    # -- lifecycle -------------------------------------------------------------------------
    def app(self) -> web.Application:
        app = web.Application(client_max_size=256 * 1024 * 1024)
        app.router.add_post("/v1/chat/completions", self.chat_completions)
        app.router.add_get("/v1/realtime", self.realtime)
        app.router.add_post("/v1/vocalbench/stream", self.vocalbench_stream)
        app.router.add_get("/health", self.health)
        app.router.add_get("/v1/models", self.models)
        return app

    async def start(self, port: int = 0, host: str = "127.0.0.1") -> int:
        """Start the system and listen on 127.0.0.1; returns the bound port."""
        if host not in ("127.0.0.1", "localhost", "::1"):
            raise ValueError("vocalbench serve binds loopback only")
        await self.system.start()
        if self.turn_detection is not None:  # load the VAD model (and scipy) now, not in the first conversation
            from vocalbench.components.vad import TurnDetector, TurnSettings, resampler_24k_to_16k

            TurnDetector(TurnSettings(vad=self.turn_detection)).feed(list(resampler_24k_to_16k()(np.zeros(2400)))[0])
        self._runner = web.AppRunner(self.app(), access_log=None, shutdown_timeout=1.0)
        await self._runner.setup()
        site = web.TCPSite(self._runner, host, port, backlog=1024)
        await site.start()
        return int(site._server.sockets[0].getsockname()[1])  # type: ignore[union-attr]

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
        await self.system.close()
        for p in self.tmp.glob("*"):
            p.unlink(missing_ok=True)
        self.tmp.rmdir()

    # -- helpers ---------------------------------------------------------------------------
    def _fault(self) -> str | None:
        self.stats["requests"] += 1
        f = self.faults.draw(self.rng)
        if f is not None:
            self.stats[f"fault_{f}"] += 1
        return f

    async def _early_fault(self, fault: str | None) -> web.StreamResponse | None:
        if fault == "429":
            return _error_response(429, "rate_limit_exceeded", "injected fault: rate limit", {"Retry-After": "0"})
        if fault == "500":
            return _error_response(500, "server_error", "injected fault: internal error")
        if fault == "timeout":
            await asyncio.sleep(self.faults.hang_seconds)
            return _error_response(504, "timeout", "injected fault: hung request")
        return None

    def _sample(self, request: web.Request, wav: bytes | None, history: list[Turn]) -> Sample:
        subset, _, sid = request.headers.get("X-VocalBench-Sample", "").rpartition("/")
        lang = request.headers.get("X-VocalBench-Lang", "en")
        audio = None
        if wav is not None:
            path = self.tmp / f"{uuid.uuid4().hex}.wav"
            path.write_bytes(wav)
            try:
                meta = info(path)  # header only: a bad upload fails here, with the reason
            except AudioError:
                path.unlink(missing_ok=True)
                raise
            audio = AudioRef(path=str(path), sample_rate=meta.sample_rate, duration=meta.duration)
        return Sample(id=sid or "request", subset=subset or "served", lang="zh" if lang == "zh" else "en",
                      index=0, audio=audio, history=history)

    async def _events(self, sample: Sample) -> AsyncIterator[Event]:
        """The system's events (Sent dropped; exceptions become typed ``Failure`` events, and text
        sent only in ``Done`` becomes a delta), removing the request's temp audio afterwards."""
        from vocalbench.systems.failures import classify

        streamed_text = False
        try:
            async for ev in self.system.stream(sample):
                if isinstance(ev, Sent | Waiting):
                    continue
                if isinstance(ev, TextDelta):
                    streamed_text = True
                elif isinstance(ev, Done) and ev.text and not streamed_text:
                    yield TextDelta(ev.text)
                    ev = Done()
                yield ev
        except Exception as exc:  # noqa: BLE001 - reported to the client as a typed error, not a dropped connection
            kind, retryable, _ = classify(exc)
            yield Failure(kind, getattr(exc, "message", "") or str(exc) or type(exc).__name__, retryable)
        finally:
            if sample.audio is not None:
                Path(sample.audio.path).unlink(missing_ok=True)

    # -- routes ----------------------------------------------------------------------------
    async def health(self, request: web.Request) -> web.Response:
        return web.json_response({"status": "ok", "system": self.system.id, "stats": self.stats})

    async def models(self, request: web.Request) -> web.Response:
        return web.json_response({"object": "list", "data": [{"id": self.system.id, "object": "model"}]})

    async def chat_completions(self, request: web.Request) -> web.StreamResponse:
        await _arrived()
        fault = self._fault()
        early = await self._early_fault(fault)
        if early is not None:
            return early
        try:
            body = await request.json()
            wav, history = _parse_messages(body.get("messages") or [])
            sample = self._sample(request, wav, history)
        except (ValueError, KeyError, TypeError) as exc:
            return _error_response(400, "invalid_request_error", str(exc))
        audio_out = "audio" in (body.get("modalities") or ["text"])
        events = self._events(sample)
        try:
            return await self._chat(request, events, bool(body.get("stream")), audio_out, fault)
        finally:
            await _aclose(events)

    async def _chat(self, request: web.Request, events: AsyncIterator[Event], stream: bool, audio_out: bool,
                    fault: str | None) -> web.StreamResponse:
        cid, aid = f"chatcmpl-{uuid.uuid4().hex[:12]}", f"audio_{uuid.uuid4().hex[:12]}"
        if not stream:
            return await self._chat_whole(events, cid, aid, audio_out)
        first = await _first_event(events)
        if isinstance(first, Failure):
            return _failure_response(first)
        resp = web.StreamResponse(headers={"Content-Type": "text/event-stream", "Cache-Control": "no-cache"})
        await resp.prepare(request)

        def chunk(delta: dict[str, JsonValue], finish: str | None = None) -> bytes:
            obj = {"id": cid, "object": "chat.completion.chunk", "created": int(time.time()),
                   "model": self.system.id, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}
            return b"data: " + json.dumps(obj, ensure_ascii=False).encode() + b"\n\n"

        await resp.write(chunk({"role": "assistant"}))
        n = 0
        ev: Event | None = first
        while ev is not None:
            if isinstance(ev, TextDelta):
                await resp.write(chunk({"audio": {"id": aid, "transcript": ev.text}} if audio_out
                                       else {"content": ev.text}))
            elif isinstance(ev, AudioChunk) and audio_out:
                await resp.write(chunk({"audio": {"id": aid, "data": pcm16_b64(ev)}}))
            elif isinstance(ev, Done):
                break
            elif isinstance(ev, Failure):
                err = {"error": {"message": ev.message, "type": ev.type, "code": ev.type, "retryable": ev.retryable}}
                await resp.write(b"data: " + json.dumps(err).encode() + b"\n\n")
                await resp.write_eof()
                return resp
            n += 1
            if fault == "drop" and n >= 2:
                return _drop(request, resp)
            ev = await anext(events, None)
        await resp.write(chunk({}, "stop"))
        await resp.write(b"data: [DONE]\n\n")
        await resp.write_eof()
        return resp

    async def _chat_whole(self, events: AsyncIterator[Event], cid: str, aid: str, audio_out: bool) -> web.Response:
        texts: list[str] = []
        audio: list[np.ndarray] = []
        async for ev in events:
            if isinstance(ev, TextDelta):
                texts.append(ev.text)
            elif isinstance(ev, AudioChunk):
                audio.append(to_24k(ev))
            elif isinstance(ev, Done):
                break
            elif isinstance(ev, Failure):
                return _failure_response(ev)
        text = "".join(texts)
        message: dict[str, Any] = {"role": "assistant", "content": None if audio_out else text}
        if audio_out:
            pcm = float_to_pcm16(np.concatenate(audio)) if audio else b""
            message["audio"] = {"id": aid, "data": base64.b64encode(pcm).decode(), "transcript": text,
                                "expires_at": int(time.time()) + 3600}
        return web.json_response({"id": cid, "object": "chat.completion", "created": int(time.time()),
                                  "model": self.system.id,
                                  "choices": [{"index": 0, "message": message, "finish_reason": "stop"}]})

    async def vocalbench_stream(self, request: web.Request) -> web.StreamResponse:
        await _arrived()
        fault = self._fault()
        early = await self._early_fault(fault)
        if early is not None:
            return early
        try:
            body = await request.json()
            wav = base64.b64decode(body["audio"]["data"])
            history = [Turn(role=t["role"], text=t["text"]) for t in body.get("history") or []]
            sample = self._sample(request, wav, history)
        except (ValueError, KeyError, TypeError) as exc:
            return _error_response(400, "invalid_request_error", f"bad request body ({exc})")
        sample = sample.model_copy(update={"id": body.get("id") or sample.id,
                                           "subset": body.get("subset") or sample.subset,
                                           "lang": "zh" if body.get("lang") == "zh" else sample.lang})
        events = self._events(sample)
        try:
            return await self._ndjson(request, events, fault)
        finally:
            await _aclose(events)

    async def _ndjson(self, request: web.Request, events: AsyncIterator[Event], fault: str | None) -> web.StreamResponse:
        first = await _first_event(events)
        if isinstance(first, Failure):
            return _failure_response(first)
        resp = web.StreamResponse(headers={"Content-Type": "application/x-ndjson"})
        await resp.prepare(request)
        n = 0
        ev: Event | None = first
        while ev is not None:
            if isinstance(ev, TextDelta):
                line: dict[str, Any] = {"type": "text", "text": ev.text}
            elif isinstance(ev, AudioChunk):
                line = {"type": "audio", "sample_rate": int(ev.sample_rate),
                        "data": base64.b64encode(float_to_pcm16(ev.samples)).decode()}
            elif isinstance(ev, Done):
                line = {"type": "done"}
            else:
                assert isinstance(ev, Failure)
                line = {"type": "error", "error": {"type": ev.type, "message": ev.message, "retryable": ev.retryable}}
            await resp.write(json.dumps(line, ensure_ascii=False).encode() + b"\n")
            if line["type"] in ("done", "error"):
                break
            n += 1
            if fault == "drop" and n >= 2:
                return _drop(request, resp)
            ev = await anext(events, None)
        await resp.write_eof()
        return resp

    async def realtime(self, request: web.Request) -> web.StreamResponse:
        fault = self._fault()
        if fault in ("429", "500"):
            return await self._early_fault(fault)  # type: ignore[return-value]
        api: Api = "beta" if BETA_HEADER[1] in request.headers.get(BETA_HEADER[0], "") else "ga"
        names = NAMES[api]
        ws = web.WebSocketResponse(max_msg_size=64 * 1024 * 1024, heartbeat=None)
        await ws.prepare(request)
        session = server_session(api, f"sess_{uuid.uuid4().hex[:12]}")
        await ws_send(ws, "session.created", session=session)
        history: list[Turn] = []
        buffer: list[bytes] = []
        committed: bytes | None = None
        last_item: str | None = None
        async for msg in ws:
            if msg.type != WSMsgType.TEXT:
                continue
            try:
                ev = json.loads(msg.data)
                kind = ev["type"]
            except (ValueError, KeyError, TypeError):
                await _ws_error(ws, "invalid_request_error", "expected a JSON event with a type")
                continue
            if kind == "session.update":
                session = merge_session(session, ev.get("session") or {})
                if requested_turn_detection(api, session) is not None:
                    if self.turn_detection is None:
                        await _ws_error(ws, "invalid_request_error", "turn_detection: this server was started "
                                        "without --turn-detection")
                        continue
                    await ws_send(ws, "session.updated", session=session)
                    await TurnTakingSession(self, request, ws, api, session, history, self.turn_detection, fault,
                                            self.faults.hang_seconds).run()
                    return ws
                await ws_send(ws, "session.updated", session=session)
            elif kind == "conversation.item.create":
                item = {**(ev.get("item") or {}), "id": f"item_{uuid.uuid4().hex[:12]}"}
                text = item_text(item)
                if item.get("role") in ("user", "assistant") and text:
                    history.append(Turn(role=item["role"], text=text))
                await ws_send(ws, names.item_added, previous_item_id=last_item, item=item)
                last_item = item["id"]
            elif kind == "input_audio_buffer.append":
                buffer.append(base64.b64decode(ev.get("audio") or ""))
            elif kind == "input_audio_buffer.clear":
                buffer.clear()
            elif kind == "input_audio_buffer.commit":
                committed, buffer = b"".join(buffer), []
                item_id = f"item_{uuid.uuid4().hex[:12]}"
                await ws_send(ws, "input_audio_buffer.committed", previous_item_id=last_item, item_id=item_id)
                last_item = item_id
            elif kind == "response.create":
                await _arrived()
                if committed is None:
                    await _ws_error(ws, "invalid_request_error", "response.create before input_audio_buffer.commit")
                    continue
                if fault == "timeout":
                    await asyncio.sleep(self.faults.hang_seconds)
                    break
                wav = to_wav_bytes(pcm16_to_float(committed), OPENAI_AUDIO_RATE)
                try:
                    sample = self._sample(request, wav, list(history))
                except ValueError as exc:
                    await _ws_error(ws, "invalid_request_error", str(exc))
                    continue
                ok = await self._realtime_response(request, ws, names, audio_out(api, session), sample,
                                                   drop=fault == "drop")
                if not ok:
                    return ws
                committed = None
        await ws.close()
        return ws

    async def _realtime_response(self, request: web.Request, ws: web.WebSocketResponse, names: Names,
                                 audio: bool, sample: Sample, drop: bool) -> bool:
        ids = reply_ids(f"resp_{uuid.uuid4().hex[:12]}", f"item_{uuid.uuid4().hex[:12]}")
        await ws_send(ws, "response.created", response={"id": ids["response_id"], "object": "realtime.response",
                                                         "status": "in_progress"})
        events = self._events(sample)
        try:
            return await self._realtime_events(request, ws, events, names, audio, ids, drop)
        finally:
            await _aclose(events)

    async def _realtime_events(self, request: web.Request, ws: web.WebSocketResponse, events: AsyncIterator[Event],
                               names: Names, audio: bool, ids: ReplyIds, drop: bool) -> bool:
        n = 0
        texts: list[str] = []
        rid = ids["response_id"]
        async for ev in events:
            if isinstance(ev, TextDelta):
                texts.append(ev.text)
                await ws_send(ws, names.transcript_delta if audio else names.text_delta, delta=ev.text, **ids)
            elif isinstance(ev, AudioChunk) and audio:
                await ws_send(ws, names.audio_delta, delta=pcm16_b64(ev), **ids)
            elif isinstance(ev, Done):
                break
            elif isinstance(ev, Failure):
                await _ws_error(ws, ev.type, ev.message)
                await ws_send(ws, "response.done", response={
                    "id": rid, "object": "realtime.response", "status": "failed",
                    "status_details": {"type": "failed", "error": {"type": ev.type, "message": ev.message}}})
                return True
            n += 1
            if drop and n >= 2:
                request.transport.close()  # type: ignore[union-attr]  # abrupt: no close frame
                return False
        if audio:
            await ws_send(ws, names.audio_done, **ids)
            await ws_send(ws, names.transcript_done, transcript="".join(texts), **ids)
        else:
            await ws_send(ws, names.text_done, text="".join(texts), **ids)
        await ws_send(ws, "response.done", response={"id": rid, "object": "realtime.response", "status": "completed"})
        return True


def _parse_messages(messages: JsonValue) -> tuple[bytes | None, list[Turn]]:
    """(wav bytes of the last user message's input_audio, earlier text turns)."""
    if not messages:
        raise ValueError("messages is empty")
    if not isinstance(messages, list) or not all(isinstance(m, dict) for m in messages):
        raise ValueError("messages must be a list of objects")
    objects = [m for m in messages if isinstance(m, dict)]
    history: list[Turn] = []
    for m in objects[:-1]:
        if m.get("role") in ("user", "assistant"):
            history.append(Turn.model_validate({"role": m["role"], "text": _text_of(m.get("content"))}))
    wav = None
    content = objects[-1].get("content")
    if isinstance(content, list):
        for part in content:
            if isinstance(part, dict) and part.get("type") == "input_audio":
                ia = json_object(part.get("input_audio"))
                if ia.get("format", "wav") != "wav":
                    raise ValueError("only input_audio format 'wav' is supported")
                data = ia["data"]
                if not isinstance(data, str):
                    raise ValueError("input_audio.data must be a base64 string")
                wav = base64.b64decode(data)
    if wav is None:
        raise ValueError("the last message carries no input_audio")
    return wav, history


def _text_of(content: JsonValue) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(str(p.get("text") or "") for p in content if isinstance(p, dict) and p.get("type") == "text")
    return ""


async def _arrived() -> None:
    """Record the request's arrival (the origin of a served script's schedule), then let the other
    requests that arrived together record theirs before this one is parsed."""
    REQUEST_ARRIVAL.set(asyncio.get_running_loop().time())
    await asyncio.sleep(0)


async def _first_event(events: AsyncIterator[Event]) -> Event | None:
    return await anext(events, None)


def _error_response(status: int, kind: str, message: str, headers: dict[str, str] | None = None) -> web.Response:
    return web.json_response({"error": {"message": message, "type": kind, "code": kind}}, status=status,
                             headers=headers)


def _failure_response(f: Failure) -> web.Response:
    """A system failure before any output: mapped to an HTTP status (``http_NNN`` keeps its code)."""
    status = 500
    if f.type.startswith("http_") and f.type[5:].isdigit():
        status = int(f.type[5:])
    elif f.retryable is False:
        status = 422
    return _error_response(status, f.type, f.message)


def _drop(request: web.Request, resp: web.StreamResponse) -> web.StreamResponse:
    """Injected fault: cut the connection mid-stream without finishing the response."""
    if request.transport is not None:
        request.transport.close()
    return resp


async def _ws_error(ws: web.WebSocketResponse, kind: str, message: str) -> None:
    await ws_send(ws, "error", error={"type": kind, "code": kind, "message": message})


async def serve_forever(system: System, port: int, faults: FaultPlan, seed: int = 0, quiet: bool = False,
                        turn_detection: Kind | None = None) -> None:
    """Run the server until Ctrl-C or SIGTERM; prints the bound address first."""
    import signal

    server = SystemServer(system, faults, seed, turn_detection)
    bound = await server.start(port)
    gc.freeze()  # start-up objects (models, modules) leave the collector: no long pauses mid-stream
    print(f"serving {system.id} on http://127.0.0.1:{bound} (/v1/chat/completions, /v1/realtime, "
          f"/v1/vocalbench/stream)", flush=True)
    stop = asyncio.Event()
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stop.set)
    try:
        await stop.wait()
    finally:
        await server.stop()
        if not quiet:
            print(f"stopped; {server.stats}", flush=True)


class ServeProcess:
    """``vocalbench serve`` in a child process (for drills, benchmarks and tests).

    ``with ServeProcess("scripted:replies.jsonl", faults="500:0.2") as url: ...`` gives the base URL
    (``http://127.0.0.1:PORT``) once the server listens, and stops it on exit.
    """

    def __init__(self, system: str, faults: str | None = None, fault_seed: int = 0, hang_seconds: float = 3600.0,
                 extra_args: list[str] | None = None, start_timeout: float = 300.0) -> None:
        self.args = ["serve", "--system", system, "--port", "0", "--fault-seed", str(fault_seed),
                     "--hang-seconds", str(hang_seconds), "--quiet", *(extra_args or [])]
        if faults:
            self.args += ["--faults", faults]
        self.start_timeout = start_timeout
        self.proc: Any = None
        self.url = ""

    def __enter__(self) -> str:
        import subprocess
        import sys
        import threading

        self.proc = subprocess.Popen([sys.executable, "-m", "vocalbench.cli", *self.args], stdout=subprocess.PIPE,
                                     text=True)
        line: list[str] = []
        reader = threading.Thread(target=lambda: line.append(self.proc.stdout.readline()), daemon=True)
        reader.start()
        reader.join(self.start_timeout)
        if not line or "127.0.0.1:" not in line[0]:
            self.__exit__()
            raise RuntimeError(f"vocalbench serve did not start (exit {self.proc.returncode}): {line}")
        self.url = "http://127.0.0.1:" + line[0].split("127.0.0.1:")[1].split()[0]
        return self.url

    def __exit__(self, *exc: object) -> None:
        import subprocess

        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        if self.proc is not None and self.proc.stdout is not None:
            self.proc.stdout.close()


async def _aclose(events: AsyncIterator[Event]) -> None:
    """Close a system's event stream (an async generator) so its ``finally`` runs now."""
    aclose = getattr(events, "aclose", None)
    if aclose is not None:
        await aclose()
