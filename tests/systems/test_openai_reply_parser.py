"""The openai-audio adapter's SSE reply parser, fed raw chat-completion streams."""

from __future__ import annotations

import base64
import json

import numpy as np
import pytest

from vocalbench.systems.base import AudioChunk, Failure, SystemFailure, TextDelta
from vocalbench.systems.openai_audio import PCM16_RATE, ReplyParser


def sse(obj: object) -> bytes:
    return b"data: " + json.dumps(obj).encode() + b"\n\n"


def chunk(delta: dict, finish: str | None = None) -> bytes:
    return sse({"id": "c", "object": "chat.completion.chunk", "choices": [{"index": 0, "delta": delta,
                                                                          "finish_reason": finish}]})


def feed_in_pieces(parser: ReplyParser, body: bytes, size: int) -> list:
    events = []
    for i in range(0, len(body), size):
        events += parser.feed(body[i:i + size])
    return events + parser.end()


@pytest.mark.parametrize("size", [1, 7, 4096])
def test_text_transcript_audio_finish_and_done(size):
    pcm = (np.arange(480, dtype="<i2") * 60).tobytes()
    body = (b": keep-alive comment\n\n" + chunk({"role": "assistant"}) + chunk({"content": "Hi"})
            + chunk({"audio": {"id": "a", "transcript": " there"}})
            + chunk({"audio": {"id": "a", "data": base64.b64encode(pcm).decode()}}).replace(b"\n\n", b"\r\n\r\n")
            + chunk({}, "stop") + b"data: [DONE]\n\n" + chunk({"content": "after done: ignored"}))
    parser = ReplyParser()
    events = feed_in_pieces(parser, body, size)
    assert [e.text for e in events if isinstance(e, TextDelta)] == ["Hi", " there"]
    [audio] = [e for e in events if isinstance(e, AudioChunk)]
    assert audio.sample_rate == PCM16_RATE and audio.samples.size == 480
    assert audio.samples[1] == pytest.approx(60 / 32768)
    assert parser.finished and parser.done


def test_last_event_without_blank_line_and_no_finish():
    parser = ReplyParser()
    events = parser.feed(b'data: {"choices": [{"delta": {"content": "a"}}]}') + parser.end()
    assert events == [TextDelta("a")]
    assert not parser.finished  # the adapter turns this into a retryable broken_stream


def test_error_event_is_a_typed_failure():
    parser = ReplyParser()
    events = parser.feed(chunk({"content": "x"}) + sse({"error": {"message": "overloaded", "type": "server_error"}})
                         + chunk({"content": "ignored"}))
    assert events == [TextDelta("x"), Failure("server_error", "overloaded", True)]
    assert parser.done
    [failure] = ReplyParser().feed(sse({"error": {"message": "bad", "code": "bad_input", "retryable": False}}))
    assert failure == Failure("bad_input", "bad", False)


@pytest.mark.parametrize("line", [b"data: {not json\n\n", b"data: [1, 2]\n\n"])
def test_malformed_data_is_a_protocol_error(line):
    with pytest.raises(SystemFailure) as err:
        ReplyParser().feed(chunk({"content": "ok"}) + line)
    assert err.value.type == "protocol_error" and not err.value.retryable
    assert "SSE data" in err.value.message


def test_chunk_of_another_shape_is_a_protocol_error():
    with pytest.raises(SystemFailure) as err:
        ReplyParser().feed(sse({"choices": ["not an object"]}))
    assert err.value.type == "protocol_error"
    with pytest.raises(SystemFailure) as err:
        ReplyParser().feed(chunk({"audio": {"data": base64.b64encode(b"odd").decode()}}))  # not whole pcm16
    assert err.value.type == "protocol_error"
