"""OpenAI-compatible chat client (the judge's and the cascade brain's transport).

Uses the openai SDK's ``AsyncOpenAI`` with its own retries off (callers decide what to retry).
The key comes from an explicit environment variable list (never a flag value, never written).
"""

from __future__ import annotations

import asyncio
import os
import time
import weakref
from typing import Any
from urllib.parse import urlparse

from vocalbench.components.base import ChatResult

DEFAULT_BASE_URL = "https://api.openai.com/v1"


def host_of(base_url: str) -> str:
    """The host part of a base URL (no scheme, port, path or credentials)."""
    return urlparse(base_url).hostname or base_url


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
        self._clients: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, Any] = weakref.WeakKeyDictionary()

    def _client(self) -> Any:
        """One AsyncOpenAI per event loop (its connection pool is bound to the loop)."""
        loop = asyncio.get_running_loop()
        client = self._clients.get(loop)
        if client is None:
            from openai import AsyncOpenAI

            key = next((os.environ[k] for k in self.key_env if os.environ.get(k)), None) or "sk-no-key"
            client = AsyncOpenAI(api_key=key, base_url=self.base_url, max_retries=0, timeout=self.timeout)
            self._clients[loop] = client
        return client

    async def chat(self, messages: list[dict[str, Any]], *, max_tokens: int = 512, json_mode: bool = False,
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
        resp = await self._client().chat.completions.create(**kwargs)
        usage = getattr(resp, "usage", None)
        text = (resp.choices[0].message.content or "") if resp.choices else ""
        return ChatResult(
            text=text,
            prompt_tokens=getattr(usage, "prompt_tokens", None),
            completion_tokens=getattr(usage, "completion_tokens", None),
            seconds=time.perf_counter() - t0,
            top_logprobs=_first_token_logprobs(resp) if top_logprobs else None,
        )


def _first_token_logprobs(resp: Any) -> dict[str, float] | None:
    """{token: logprob} of the first generated token's alternatives, or None when absent."""
    choice = resp.choices[0] if resp.choices else None
    content = getattr(getattr(choice, "logprobs", None), "content", None)
    if not content:
        return None
    first = content[0]
    out: dict[str, float] = {}
    for alt in getattr(first, "top_logprobs", None) or []:
        out[alt.token] = max(out.get(alt.token, float("-inf")), float(alt.logprob))
    out.setdefault(first.token, float(first.logprob))
    return out


def is_transient(exc: BaseException) -> bool:
    """Worth retrying: rate limits, server errors, timeouts, connection failures."""
    import openai

    if isinstance(exc, (openai.APITimeoutError, openai.APIConnectionError, asyncio.TimeoutError)):
        return True
    if isinstance(exc, openai.APIStatusError):
        return exc.status_code in (408, 409, 429) or exc.status_code >= 500
    return False


class LocalServerChat(OpenAIChat):
    """``OpenAIChat`` of the local llama.cpp server that finds the server again for every new event
    loop, so a memoised component keeps working after the server was stopped and started anew."""

    def _client(self) -> Any:
        if asyncio.get_running_loop() not in self._clients:
            from vocalbench.components.llm_server import ensure_server

            self.base_url = ensure_server().base_url
        return super()._client()


def local_chat(*, lazy: bool = False) -> OpenAIChat:
    """The chat client of the local llama.cpp server (started or reused by ``ensure_server`` now, or
    with ``lazy`` on the client's first request)."""
    from vocalbench.components.llm_server import MODELS, ensure_server

    if lazy:
        return LocalServerChat(next(iter(MODELS)), "http://127.0.0.1", key_env=())
    handle = ensure_server()
    return LocalServerChat(handle.model_alias, handle.base_url, key_env=())


def openai_chat(model: str, base_url: str | None = None, **opts: Any) -> OpenAIChat:
    return OpenAIChat(model, base_url, **opts)
