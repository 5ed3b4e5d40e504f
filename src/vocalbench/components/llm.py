"""OpenAI-compatible chat client (the judge's and the cascade brain's transport), and the one place
the openai SDK's clients are made (:func:`openai_client`, for the judge, the cascade's LLM and the
openai-audio system).

Every ``AsyncOpenAI`` has the SDK's own retries off (callers decide what to retry) and reads an
error response's body only up to ``ERROR_BODY_BYTES`` (the SDK would read it whole). The chat
client's per-loop clients are closed when their event loop ends, not by the garbage collector.
The key comes from an explicit environment variable list (never a flag value, never written).
"""

from __future__ import annotations

import asyncio
import functools
import json
import os
import time
import weakref
from collections.abc import AsyncIterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol, TypedDict, Unpack
from urllib.parse import urlparse

from pydantic import JsonValue

from vocalbench.components.base import ChatResult
from vocalbench.limits import CHAT_REPLY_BYTES, ERROR_BODY_BYTES
from vocalbench.retry import classify

if TYPE_CHECKING:  # the SDK and its HTTP library load with the first client
    import httpx2
    from openai import AsyncOpenAI

ERROR_TEXT_CHARS = 300  # of an endpoint's error, kept in a verdict's trace or a reply's error
_OPEN: set[asyncio.Task[None]] = set()  # the tasks that close a client when its loop ends

DEFAULT_BASE_URL = "https://api.openai.com/v1"


def host_of(base_url: str) -> str:
    """The host part of a base URL (no scheme, port, path or credentials)."""
    return urlparse(base_url).hostname or base_url


def endpoint_of(base_url: str) -> str:
    """A base URL as ``scheme://host:port/path`` (default port filled in; no credentials, query or
    trailing slash): two endpoints on one host are told apart."""
    u = urlparse(base_url)
    port = u.port or {"http": 80, "https": 443}.get(u.scheme, 0)
    return f"{u.scheme}://{u.hostname or ''}:{port}{u.path.rstrip('/')}"


def openai_client(base_url: str, api_key: str, timeout: float | httpx2.Timeout, *,
                  aiohttp: bool = False) -> AsyncOpenAI:
    """An ``AsyncOpenAI`` with the SDK's retries off and error bodies read up to ``ERROR_BODY_BYTES``
    (``aiohttp``: the SDK's aiohttp transport, cheaper per request at high concurrency)."""
    from openai import AsyncOpenAI, DefaultAioHttpClient, DefaultAsyncHttpxClient

    make = DefaultAioHttpClient if aiohttp else DefaultAsyncHttpxClient
    http = make(timeout=timeout, event_hooks={"response": [_cap_error_body]})
    return AsyncOpenAI(base_url=base_url, api_key=api_key, max_retries=0, timeout=timeout, http_client=http)


async def _cap_error_body(response: httpx2.Response) -> None:
    """Response hook: an error response's body ends after ``ERROR_BODY_BYTES`` (its connection is
    dropped rather than drained), so the SDK's whole read of it is bounded."""
    if response.status_code >= 400:
        response.stream = _capped_stream()(response.stream, ERROR_BODY_BYTES)


@functools.cache
def _capped_stream() -> type:
    import httpx2  # the openai SDK's HTTP library

    class CappedStream(httpx2.AsyncByteStream):
        """The first ``limit`` bytes of a response stream."""

        def __init__(self, inner: httpx2.AsyncByteStream, limit: int) -> None:
            self.inner, self.limit = inner, limit

        async def __aiter__(self) -> AsyncIterator[bytes]:
            left = self.limit
            async for block in self.inner:
                yield block[:left]
                left -= len(block)
                if left <= 0:
                    return

        async def aclose(self) -> None:
            await self.inner.aclose()

    return CappedStream


class AsyncClosable(Protocol):
    """A client with an async ``close`` (the openai SDK's ``AsyncOpenAI``)."""

    async def close(self) -> None: ...


def error_text(exc: BaseException) -> str:
    """``Type: message`` of an endpoint error, at most ``ERROR_TEXT_CHARS`` characters."""
    text = f"{type(exc).__name__}: {exc}"
    return text if len(text) <= ERROR_TEXT_CHARS else text[:ERROR_TEXT_CHARS - 3] + "..."


def close_with_loop(client: AsyncClosable) -> None:
    """Close ``client`` when the running event loop ends: a task waits for the loop's end
    (``asyncio.run`` cancels what is left) and closes it within that loop."""
    async def hold() -> None:
        try:
            await asyncio.get_running_loop().create_future()
        finally:
            await client.close()

    task = asyncio.get_running_loop().create_task(hold(), name="vocalbench: close an openai client with its loop")
    _OPEN.add(task)
    task.add_done_callback(_OPEN.discard)


class OpenAIChat:
    """``ChatLLM`` over an OpenAI-compatible ``/v1/chat/completions`` endpoint."""

    def __init__(self, model: str, base_url: str | None = None, *,
                 key_env: tuple[str, ...] = ("VOCALBENCH_JUDGE_API_KEY", "OPENAI_API_KEY"),
                 timeout: float = 120.0) -> None:
        self.model = model
        self.base_url = (base_url or os.environ.get("OPENAI_BASE_URL") or DEFAULT_BASE_URL).rstrip("/")
        self.key_env = key_env
        self.timeout = timeout
        self.id = f"{model}@{host_of(self.base_url)}"
        self._clients: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, AsyncOpenAI] = weakref.WeakKeyDictionary()

    @property
    def endpoint(self) -> str:
        """Who answers, for the judge cache's keys: the full endpoint (:func:`endpoint_of`)."""
        return endpoint_of(self.base_url)

    def _client(self) -> AsyncOpenAI:
        """One AsyncOpenAI per event loop (its connection pool is bound to the loop), closed with it."""
        loop = asyncio.get_running_loop()
        client = self._clients.get(loop)
        if client is None:
            key = next((os.environ[k] for k in self.key_env if os.environ.get(k)), None) or "sk-no-key"
            client = openai_client(self.base_url, key, self.timeout)
            self._clients[loop] = client
            close_with_loop(client)
        return client

    async def aclose(self) -> None:
        """Close the running loop's client now (else it is closed when its loop ends)."""
        client = self._clients.pop(asyncio.get_running_loop(), None)
        if client is not None:
            await client.close()

    async def chat(self, messages: Sequence[Mapping[str, JsonValue]], *, max_tokens: int = 512, json_mode: bool = False,
                   temperature: float = 0.0, seed: int | None = 0, top_logprobs: int | None = None) -> ChatResult:
        """One completion; SDK exceptions (openai.APIError and subclasses) propagate.

        ``top_logprobs=N`` also asks for the N most likely first tokens with their log-probabilities
        (``ChatResult.top_logprobs``; None when the endpoint sends none).
        """
        kwargs: dict[str, Any] = {"model": self.model, "messages": messages, "max_tokens": max_tokens,
                                  "temperature": temperature}
        if seed is not None:
            kwargs["seed"] = seed
        if json_mode:
            kwargs["response_format"] = {"type": "json_object"}
        if top_logprobs:
            kwargs["logprobs"] = True
            kwargs["top_logprobs"] = top_logprobs
        t0 = time.perf_counter()
        async with asyncio.timeout(self.timeout):  # the whole request and body: one that never ends is cut here
            resp = await self._completion(kwargs)
        usage = resp.get("usage") or {}
        choices = resp.get("choices") or [{}]
        message = (choices[0] or {}).get("message") or {}
        return ChatResult(
            text=str(message.get("content") or ""),
            prompt_tokens=usage.get("prompt_tokens"),
            completion_tokens=usage.get("completion_tokens"),
            seconds=time.perf_counter() - t0,
            top_logprobs=_first_token_logprobs(choices[0] or {}) if top_logprobs else None,
        )

    async def _completion(self, kwargs: dict[str, Any]) -> dict[str, Any]:
        """The completion as JSON, its body read up to :data:`~vocalbench.limits.CHAT_REPLY_BYTES`
        (:class:`BadReply` beyond that, or for a body that is not a chat completion, e.g. HTML)."""
        async with self._client().chat.completions.with_streaming_response.create(**kwargs) as raw:
            body = bytearray()
            async for block in raw.iter_bytes():
                body += block
                if len(body) > CHAT_REPLY_BYTES:
                    raise BadReply(f"the reply of {self.model} is over {CHAT_REPLY_BYTES // 2**10} KiB; read no further")
            kind = raw.headers.get("content-type", "no content type")
        try:
            resp = json.loads(body)
        except ValueError:
            resp = None
        if not isinstance(resp, dict) or not isinstance(resp.get("choices"), list):
            raise BadReply(f"the reply of {self.model} is not a chat completion ({kind}: {bytes(body[:60])!r})")
        return resp


class BadReply(ValueError):
    """A chat endpoint's reply that is too large or not a chat completion (not retried)."""


def _first_token_logprobs(choice: dict[str, Any]) -> dict[str, float] | None:
    """{token: logprob} of the first generated token's alternatives, or None when absent."""
    content = (choice.get("logprobs") or {}).get("content")
    if not content:
        return None
    first = content[0]
    out: dict[str, float] = {}
    for alt in first.get("top_logprobs") or []:
        out[alt["token"]] = max(out.get(alt["token"], float("-inf")), float(alt["logprob"]))
    out.setdefault(first["token"], float(first["logprob"]))
    return out


def is_transient(exc: BaseException) -> bool:
    """Worth retrying (:func:`vocalbench.retry.classify`): rate limits, server errors, timeouts,
    connection failures."""
    return classify(exc).retryable


class LocalServerChat(OpenAIChat):
    """``OpenAIChat`` of the local llama.cpp server that finds the server again for every new event
    loop, so a memoised component keeps working after the server was stopped and started anew, and
    when a request finds the server gone (it crashed or was killed), finds or starts one and asks
    once more."""

    @property
    def endpoint(self) -> str:
        """The embedded server starts on a free port each time: it is known by its model, so its
        verdicts stay reusable across runs."""
        return f"local://{self.model}"

    def _client(self) -> AsyncOpenAI:
        if asyncio.get_running_loop() not in self._clients:
            from vocalbench.components.llm_server import ensure_server

            self.base_url = ensure_server(self.model).base_url
        return super()._client()

    async def _completion(self, kwargs: dict[str, Any]) -> dict[str, Any]:
        from vocalbench.components.llm_server import ensure_server, server_lost

        try:
            return await super()._completion(kwargs)
        except Exception as exc:
            if not server_lost(exc):
                raise
        await self.aclose()  # the next client is made for the server found now
        self.base_url = (await asyncio.to_thread(ensure_server, self.model)).base_url
        return await super()._completion(kwargs)


def local_chat(model: str = "qwen2.5-1.5b", *, lazy: bool = False) -> OpenAIChat:
    """The chat client of a local llama.cpp server for a packaged model's alias or ``gguf:PATH``
    (started or reused by ``ensure_server`` now, or with ``lazy`` on the client's first request)."""
    from vocalbench.components.llm_server import ensure_server, gguf_alias

    alias = gguf_alias(model[5:]) if model.startswith("gguf:") else model
    if lazy:
        return LocalServerChat(alias, "http://127.0.0.1", key_env=())
    handle = ensure_server(alias)
    return LocalServerChat(handle.model_alias, handle.base_url, key_env=())


class ChatOptions(TypedDict, total=False):
    """:class:`OpenAIChat`'s options beside the model and the endpoint."""

    key_env: tuple[str, ...]
    timeout: float


def openai_chat(model: str, base_url: str | None = None, **opts: Unpack[ChatOptions]) -> OpenAIChat:
    return OpenAIChat(model, base_url, **opts)
