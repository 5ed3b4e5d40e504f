"""``offline``: the embedded default system, a real offline cascade (OFFLINE.md).

faster-whisper base (int8, CPU) -> the shared local llama.cpp server (Qwen2.5-Coder-1.5B-Instruct
Q4_K_M) streamed -> Kokoro-82M per sentence. Needs ``pip install 'vocalbench[offline]'`` and the
assembled models (``bash scripts/setup.sh``).
"""

from __future__ import annotations

from vocalbench.systems.cascade import CascadeSystem
from vocalbench.systems.options import SystemOptions


def from_spec(arg: str, options: SystemOptions) -> CascadeSystem:
    if arg:
        raise ValueError("the offline system takes no argument; use cascade:asr=…,llm=…,tts=… to choose parts")
    return CascadeSystem("offline", "local", "offline", options, name="offline")
