"""systems layer: adapters that answer a spoken query with text + audio chunks.

SPEC strings (docs/systems.md): ``offline``, ``cascade:asr=…,llm=…,tts=…``,
``openai-audio:MODEL[@BASE_URL]``, ``realtime:MODEL[@BASE_URL]``, ``http:URL``, ``scripted:FILE``;
plug-ins: ``NAME[:ARG]`` of a ``vocalbench.systems`` entry point, or ``module:attr[:ARG]`` naming a
factory ``(arg, options) -> System`` (docs/extending.md).
Base URLs and keys come from the SPEC, flags or environment and are never written to disk:
``display_spec`` gives the form recorded in config.json.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING

from vocalbench import parts
from vocalbench.config import system_defaults
from vocalbench.systems.options import SystemOptions
from vocalbench.systems.spec import SystemSpec

if TYPE_CHECKING:
    from vocalbench.systems.base import System

KINDS: dict[str, tuple[str, str, str | None, tuple[str, ...]]] = {
    # name: (factory target, summary, extra, required modules)
    "offline": ("vocalbench.systems.offline:from_spec",
                "offline cascade: faster-whisper -> local llama.cpp -> Kokoro", "offline",
                ("faster_whisper", "kokoro_onnx", "llama_cpp")),
    "cascade": ("vocalbench.systems.cascade:from_spec",
                "cascade:asr=SPEC,llm=SPEC,tts=SPEC from registered components (LLM streamed, TTS per sentence)",
                None, ()),
    "openai-audio": ("vocalbench.systems.openai_audio:from_spec",
                     "openai-audio:MODEL[@BASE_URL] chat completions, audio in, streamed text+audio out", None,
                     ("openai",)),
    "realtime": ("vocalbench.systems.realtime:from_spec",
                 "realtime:MODEL[@BASE_URL] OpenAI Realtime websocket protocol", None, ("websockets",)),
    "http": ("vocalbench.systems.http:from_spec",
             "http:URL vocalbench JSON protocol (POST wav + history, NDJSON chunk events back)", None, ("aiohttp",)),
    "scripted": ("vocalbench.systems.scripted:from_spec",
                 "scripted:FILE replays JSONL replies with given delays and faults", None, ()),
}


def register_all(register: Callable[..., None]) -> None:
    """Register one entry per system kind (lazy: targets are import strings)."""
    for name, (target, summary, extra, requires) in KINDS.items():
        register("system", name, target, summary, extra=extra, requires=requires)


register_all(parts.register)


def resolve(spec: str, options: SystemOptions | None = None) -> System:
    """Build the system a SPEC names (its models load later, in ``start()``)."""
    parsed = SystemSpec.parse(spec)
    try:
        entry = parts.get("system", parsed.kind)
    except KeyError:  # a factory named as module:attr[:ARG] (SystemSpec.parse found it)
        named = parts.direct("system", parsed.text)
        assert named is not None
        entry = named[0]
    factory = entry.load()
    options = options or SystemOptions.from_env()
    if options.max_reply_tokens is None:  # the system kind's cap
        options = replace(options, max_reply_tokens=system_defaults(spec)["max_reply_tokens"])
    return factory(parsed.arg, options)


_URL = re.compile(r"(?:https?|wss?)://[^\s,@]+")


def display_spec(spec: str) -> str:
    """The SPEC as recorded on disk: endpoint URLs replaced by ``<url>``."""
    return _URL.sub("<url>", spec)
