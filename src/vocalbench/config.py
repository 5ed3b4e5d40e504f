"""Settings below every layer: the policies that depend on the kind of system under test, the
SPECs that turn a component off and the cache folder. The run's configuration, built from the
flags with its SPECs parsed, is :class:`vocalbench.run_config.RunConfig`.
"""

from __future__ import annotations

import os
from pathlib import Path

# Policies that depend on the kind of system under test (the one place they are decided).
LOCAL_REPLY_CAP = 64  # tokens: a CPU cascade answers the whole built-in set within minutes
NETWORK_REPLY_CAP = 1024  # tokens: no practical limit on a spoken reply
# queries a local cascade can overlap, one per stage (ASR, LLM, TTS): ``--concurrency 3``. Not the
# default: on the 2-core machines here it has not been shown faster (the stages share the cores)
LOCAL_PIPELINE = 3


def is_local_system(system: str) -> bool:
    """The local cascades (offline, cascade:...): one llama.cpp slot and the CPU."""
    return system == "offline" or system.startswith("cascade:")


def system_defaults(system: str) -> dict[str, int]:
    """The options that depend on the kind of system, the one place they are decided: samples in
    flight (1 for the local cascades: overlapping queries across their stages, ``--concurrency``
    :data:`LOCAL_PIPELINE`, gives the same replies but was not faster on a 2-core machine; 8 for
    network systems) and the reply token cap (64 for the local cascades, which keeps the built-in
    run short on a CPU; 1024 for network systems)."""
    local = is_local_system(system)
    return {"concurrency": 1 if local else 8, "max_reply_tokens": LOCAL_REPLY_CAP if local else NETWORK_REPLY_CAP}


OFF = ("none", "off")  # component SPECs that turn the component off


def is_off(spec: str | None) -> bool:
    """Whether a component SPEC turns the component off (``none`` or ``off``)."""
    return spec is not None and spec.strip() in OFF


def cache_dir() -> Path:
    """Where models, synthesised audio and evaluator results are cached (VOCALBENCH_CACHE)."""
    base = os.environ.get("VOCALBENCH_CACHE") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "vocalbench"
    )
    p = Path(base)
    p.mkdir(parents=True, exist_ok=True)
    return p
