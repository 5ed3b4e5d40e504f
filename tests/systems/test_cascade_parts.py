"""Cascade building blocks: incremental sentence cutting, speakable text, SPEC parsing."""

from __future__ import annotations

import pytest

from vocalbench.systems import SystemOptions, resolve
from vocalbench.systems.cascade import (
    CascadeSystem,
    parse_parts,
    pop_sentences,
    speakable,
)


def test_pop_sentences_streams_whole_sentences_only():
    buf, got = "", []
    for delta in ["The answer", " is 3.", "5 degrees. Rain", " is likely! ", "Bring an umbrella"]:
        done, buf = pop_sentences(buf + delta)
        got += done
    assert got == ["The answer is 3.5 degrees.", "Rain is likely!"]
    assert buf.strip() == "Bring an umbrella"
    assert pop_sentences("今天很好。明天下雨！后天")[0] == ["今天很好。", "明天下雨！"]
    assert pop_sentences("line one\nline two") == (["line one"], "line two")


def test_speakable_drops_markup():
    assert speakable("**Paris** is the `capital`. # Note") == "Paris is the capital . Note"


def test_cascade_spec_parsing():
    assert parse_parts("asr=offline,llm=openai:qwen@http://127.0.0.1:9/v1,tts=offline") == {
        "asr": "offline", "llm": "openai:qwen@http://127.0.0.1:9/v1", "tts": "offline"}
    with pytest.raises(ValueError, match="expected asr=SPEC"):
        parse_parts("asr=offline,brain=x")
    system = resolve("cascade:asr=offline,llm=local,tts=offline", SystemOptions(max_reply_tokens=64))
    assert isinstance(system, CascadeSystem) and system.max_tokens == 64 and system.resource == "local:cascade"
    assert resolve("offline").id == "offline"
    with pytest.raises(ValueError, match="unknown system"):
        resolve("telepathy:x")
