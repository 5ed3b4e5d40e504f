"""The Full-Duplex-Bench v1 / v1.5 measures on hand-made word timings and speech segments."""

from __future__ import annotations

import numpy as np
import pytest

from vocalbench.duplex import metrics as m
from vocalbench.duplex.scenarios import Part, Scenario
from vocalbench.duplex.score import aggregate, measure

W = m.Word


def words(*spans: tuple[float, float]) -> list[m.Word]:
    return [W(a, b, f"w{i}") for i, (a, b) in enumerate(spans)]


def test_take_over_rule() -> None:
    assert m.takes_over([]) == 0
    assert m.takes_over(words((1.0, 1.2), (1.3, 1.5))) == 0  # short "okay sure"
    assert m.takes_over(words((1.0, 1.1), (1.2, 1.3), (1.4, 1.5), (1.6, 1.7))) == 1  # more than 3 words
    assert m.takes_over(words((1.0, 1.4), (1.6, 2.0))) == 1  # spans exactly 1 s
    assert m.takes_over(words((1.0, 1.4), (1.6, 1.99))) == 0


def test_pause_counts_only_words_before_the_user_ends() -> None:
    jumped_in = words((2.0, 2.3), (2.4, 2.8), (2.9, 3.3))  # during the pause, 1.3 s span
    assert m.pause_handling(jumped_in, user_end=5.0) == {"take_over": 1.0}
    replied_after = words((5.5, 5.8), (5.9, 6.3), (6.4, 7.0))
    assert m.pause_handling(replied_after, user_end=5.0) == {"take_over": 0.0}


def test_smooth_latency_from_speech_clamped_at_zero_and_only_on_take_over() -> None:
    ws = words((3.5, 4.0), (4.1, 4.9))  # the ASR's word starts early...
    r = m.smooth_turn_taking(ws, [m.Span(3.7, 5.0)], user_end=3.0)  # ...speech starts at 3.7
    assert r["take_over"] == 1.0 and r["latency"] == pytest.approx(0.7) and r["word_latency"] == pytest.approx(0.5)
    early = m.smooth_turn_taking(words((2.5, 3.0), (3.1, 3.6)), [m.Span(2.5, 3.6)], user_end=3.0)
    assert early["latency"] == 0.0
    assert m.smooth_turn_taking(words((3.5, 3.7)), [m.Span(3.5, 3.7)], user_end=3.0) == {
        "take_over": 0.0, "latency": None, "word_latency": None}


def test_interruption_latency_and_time_to_stop() -> None:
    interruption = m.Span(10.0, 12.0)
    segments = [m.Span(6.0, 10.4), m.Span(12.9, 15.0)]  # talking until 0.4 s into the interruption
    ws = words((6.1, 6.5), (9.8, 10.3), (12.8, 13.3), (13.4, 14.1))
    r = m.user_interruption(ws, segments, interruption, [m.Span(10.1, 11.9)])
    assert r["take_over"] == 1.0
    assert r["latency"] == pytest.approx(0.9) and r["word_latency"] == pytest.approx(0.8)
    assert r["stop_time"] == pytest.approx(0.4)
    assert r["stop_latency"] == pytest.approx(0.3)  # v1.5: overlap of the user's speech with the system's
    assert r["response_latency"] == pytest.approx(1.0)  # v1.5: user's speech end -> next system speech
    silent = m.user_interruption([], [m.Span(12.5, 13.0)], interruption)
    assert silent["take_over"] == 0.0 and silent["stop_time"] is None and silent["stop_latency"] is None
    assert silent["response_latency"] == pytest.approx(0.5)  # the interruption's span stands in for its speech


def test_a_gap_in_the_reply_at_the_interruption_is_bridged() -> None:
    """A 100 ms pause of the reply's speech where the user cuts in: it was still talking (FDB v1.5
    bridges gaps up to 0.5 s); a longer silence is a stop."""
    interruption = m.Span(10.0, 12.0)
    r = m.user_interruption([], [m.Span(6.0, 9.95), m.Span(10.05, 10.3)], interruption, [m.Span(10.0, 12.0)])
    assert r["stop_time"] == pytest.approx(0.3) and r["stop_latency"] == pytest.approx(0.3)
    gone = m.user_interruption([], [m.Span(6.0, 9.4), m.Span(10.05, 10.3)], interruption, [m.Span(10.0, 12.0)])
    assert gone["stop_time"] is None  # silent for 0.65 s when the user started


def test_time_to_first_audio_is_speech_not_a_click() -> None:
    # a click at 2.5 s is not a speech segment (Silero drops it); speech starts at 4.1 s
    assert m.first_audio_after([m.Span(4.1, 6.0)], 3.0) == pytest.approx(1.1)
    assert m.first_audio_after([m.Span(2.0, 3.5)], 3.0) == 0.0  # already talking
    assert m.first_audio_after([m.Span(1.0, 2.0)], 3.0) is None


def test_mandarin_words_are_counted_as_words_not_tokens_or_characters() -> None:
    tokens = [W(1.0, 1.1, "好"), W(1.1, 1.2, "的"), W(1.2, 1.3, "好"), W(1.3, 1.4, "的")]  # Whisper's pieces
    assert m.word_count(tokens, "zh") == 3 and m.takes_over(tokens, "zh") == 0  # "好的好的": a backchannel
    said = [W(1.0, 1.5, "我觉得这个问题"), W(1.5, 1.9, "很有意思。")]  # 11 characters, 6 words
    assert m.word_count(said, "zh") == 7 and m.takes_over(said, "zh") == 1
    assert m.word_count([W(1.0, 1.5, "嗯，OK 好的")], "zh") == 3
    assert m.word_count(tokens, "en") == 4


def test_bridge() -> None:
    spans = [m.Span(0.0, 1.0), m.Span(1.5, 2.0), m.Span(2.55, 3.0)]
    assert m.bridge(spans, 0.5) == [m.Span(0.0, 2.0), m.Span(2.55, 3.0)]
    assert m.bridge(spans, 0.6) == [m.Span(0.0, 3.0)]


def test_backchannel_segments() -> None:
    short = m.Span(3.0, 3.5)  # "mm-hm": 0.5 s, 1 word
    assert m.segment_is_backchannel(short, words((3.1, 3.4)))
    assert not m.segment_is_backchannel(m.Span(3.0, 6.5), [])  # over 3 s: a take-over outright
    assert not m.segment_is_backchannel(m.Span(3.0, 3.9), words((3.0, 3.2), (3.2, 3.4), (3.4, 3.6)))  # 3 words
    assert not m.segment_is_backchannel(m.Span(3.0, 4.5), words((3.1, 3.4)))  # 1.5 s long
    r = m.backchannel(words((3.1, 3.4), (8.1, 8.3)), [short, m.Span(8.0, 8.4)], window_end=18.0, duration=20.0)
    assert r == {"take_over": 0.0, "frequency": pytest.approx(0.1)}
    r = m.backchannel(words((3.1, 3.4)), [short, m.Span(10.0, 14.0), m.Span(15.0, 15.3)], window_end=18.0,
                      duration=20.0)
    assert r["take_over"] == 1.0 and r["frequency"] == pytest.approx(0.05)  # the count stops at the long one
    # a short segment that is not a backchannel still counts (as in FDB), and makes a take-over
    r = m.backchannel(words((3.0, 3.3), (3.3, 3.6), (3.6, 3.8)), [m.Span(3.0, 3.9)], window_end=18.0, duration=20.0)
    assert r == {"take_over": 1.0, "frequency": pytest.approx(0.05)}


def test_the_backchannel_window_ends_with_the_monologue() -> None:
    """A normal reply after the user finishes is not a take-over of the monologue."""
    reply = m.Span(18.5, 22.0)
    r = m.backchannel(words((18.6, 19.0), (19.1, 19.5), (19.6, 20.0), (20.1, 21.0)), [reply], window_end=18.0,
                      duration=19.5)
    assert r == {"take_over": 0.0, "frequency": 0.0}


def _scenario(kind: str, sid: str) -> Scenario:
    span = (10.0, 12.0) if kind == "interruption" else None
    return Scenario(sid, kind, "en", "x.wav", 20.0, [Part("a", 0.5, 3.0, "v", 0.0, True)], 3.0, span)  # type: ignore[arg-type]


def test_measure_and_aggregate_with_intervals() -> None:
    rows = []
    rng = np.random.default_rng(0)
    for i in range(12):
        sc = _scenario("smooth", f"smooth-{i:03d}")
        start = 3.0 + float(rng.uniform(0.3, 1.2))
        ws = words((start, start + 0.4), (start + 0.5, start + 1.2)) if i % 4 else []
        segments = [m.Span(start, start + 1.2)] if ws else []
        for _k in (1, 2):  # two repeats of each scenario
            rows.append({"scenario": sc.id, "kind": "smooth", "metrics": measure(sc, ws, segments)})
    out = aggregate(rows)["smooth"]
    assert out["scenarios"] == 12 and out["replays"] == 24
    assert out["take_over"]["value"] == pytest.approx(0.75)
    lo, hi = out["take_over"]["ci95"]
    assert lo < 0.75 < hi
    assert out["latency"]["n"] == 9 and out["latency"]["not_applicable"] == 6
    assert 0.3 <= out["ttfa_p50"]["value"] <= 1.2 and out["ttfa_p95"]["ci95"] is not None
