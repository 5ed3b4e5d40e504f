"""Limits on what a system or a judge sends back (a leaf module: imports nothing of ours).

A reply over a limit fails with the error type ``reply_too_large`` (not retried) and nothing of it
is stored but its error and the first :data:`PARTIAL_TEXT_CHARS` characters of its text; a judge
reply over its limit, or a judge call past its deadline, is an unscored item and is never cached (the limit holds for every chat completion read, the
cascade's LLM too).
Defaults (docs/systems.md, "Limits"); flags for systems that really answer at length:

- reply text: 1,000,000 characters (``--max-reply-chars``)
- reply audio: 600 s (``--max-reply-audio-seconds``) and 64 MiB as 16-bit PCM (a high sample rate)
- an error body: the first 64 KiB are read, 300 characters kept
- a failed reply's ``partial_text``: its first 2,000 characters
- a chat completion (judge, cascade LLM): 256 KiB; one attempt: 120 s for the request and the
  whole body (not per read); one judge call: 600 s for every attempt and the waits between them
"""

from __future__ import annotations

from dataclasses import dataclass

REPLY_TEXT_CHARS = 1_000_000
REPLY_AUDIO_SECONDS = 600.0
REPLY_AUDIO_BYTES = 64 * 2**20
ERROR_BODY_BYTES = 64 * 2**10
PARTIAL_TEXT_CHARS = 2000
JUDGE_CALL_SECONDS = 600.0
CHAT_REPLY_BYTES = 256 * 2**10
TOO_LARGE = "reply_too_large"


@dataclass(frozen=True)
class ReplyLimits:
    """How much text and audio one reply may carry."""

    text_chars: int = REPLY_TEXT_CHARS
    audio_seconds: float = REPLY_AUDIO_SECONDS
    audio_bytes: int = REPLY_AUDIO_BYTES

    def text_problem(self, chars: int) -> str | None:
        """Why ``chars`` characters of text are too many (None when they are not)."""
        if chars > self.text_chars:
            return f"the reply's text is over {self.text_chars:,} characters (--max-reply-chars)"
        return None

    def audio_problem(self, samples: int, sample_rate: int) -> str | None:
        """Why ``samples`` samples at ``sample_rate`` are too much audio (None when they are not)."""
        if samples > self.audio_seconds * sample_rate:
            return f"the reply's audio is over {self.audio_seconds:g} s (--max-reply-audio-seconds)"
        if samples * 2 > self.audio_bytes:
            return f"the reply's audio is over {self.audio_bytes // 2**20} MiB as 16-bit PCM"
        return None
