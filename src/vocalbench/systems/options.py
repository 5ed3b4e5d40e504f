"""Runtime options of the systems under test (kept apart from the adapters, which all read them)."""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Literal


@dataclass(frozen=True)
class SystemOptions:
    """Runtime options of the systems under test; never saved (keys and URLs stay off disk).
    ``max_reply_tokens`` None: the system kind's cap (:func:`vocalbench.config.system_defaults`),
    filled in by :func:`vocalbench.systems.resolve`."""

    base_url: str | None = None
    api_key: str | None = None
    voice: str | None = None
    max_reply_tokens: int | None = None
    seed: int = 0
    realtime_api: Literal["ga", "beta"] = "ga"  # the Realtime protocol version a realtime: system speaks

    @classmethod
    def from_env(cls, base_url: str | None = None, voice: str | None = None, max_reply_tokens: int | None = None,
                 seed: int = 0, realtime_api: Literal["ga", "beta"] = "ga") -> SystemOptions:
        return cls(
            base_url=base_url or os.environ.get("VOCALBENCH_SYSTEM_BASE_URL") or None,
            api_key=os.environ.get("VOCALBENCH_SYSTEM_API_KEY") or os.environ.get("OPENAI_API_KEY") or None,
            voice=voice,
            max_reply_tokens=max_reply_tokens,
            seed=seed,
            realtime_api=realtime_api,
        )

    @property
    def cap(self) -> int:
        """The reply token cap (set for every system built by :func:`vocalbench.systems.resolve`)."""
        if self.max_reply_tokens is None:
            raise ValueError("no reply token cap: build the system with vocalbench.systems.resolve")
        return self.max_reply_tokens
