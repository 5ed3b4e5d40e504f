"""Emotion: the 9 -> 5 class mapping, the offline 'no model' answer, the worker protocol."""

from __future__ import annotations

import stat
import sys
import textwrap
from pathlib import Path

import pytest

from vocalbench.components.base import EMOTIONS_5, ComponentUnavailable

FAKE_WORKER = textwrap.dedent('''
    import json, sys
    import soundfile as sf
    if "--fail" in sys.argv or __import__("os").environ.get("FAKE_EMO_FAIL"):
        print(json.dumps({"fatal": "ModuleNotFoundError: No module named 'funasr'"}), flush=True)
        sys.exit(1)
    print(json.dumps({"ready": True}), flush=True)
    labels = ["angry", "disgusted", "fearful", "happy", "neutral", "other", "sad", "surprised", "unk"]
    for line in sys.stdin:
        req = json.loads(line)
        info = sf.info(req["path"])
        assert info.samplerate == 16000 and info.channels == 1
        scores = [0.1, 0.3, 0.05, 0.2, 0.1, 0.05, 0.1, 0.05, 0.05]
        print(json.dumps({"id": req["id"], "labels": labels, "scores": scores}), flush=True)
''')


def fake_python(folder: Path) -> Path:
    """An executable standing in for the emotion venv's python: it runs the fake worker."""
    worker = folder / "fake_worker.py"
    worker.write_text(FAKE_WORKER)
    exe = folder / "fake-python"
    exe.write_text(f"#!/bin/sh\nexec {sys.executable} {worker} \"$@\"\n")
    exe.chmod(exe.stat().st_mode | stat.S_IEXEC)
    return exe


def test_nine_to_six_known_vectors():
    """The six classes the official scripts read (the five emotions and <unk>), renormalised: the
    softmax over those six logits; the acoustic score renormalises the first five again."""
    from vocalbench.components.emotion import nine_to_six
    from vocalbench.scoring.subsets.emotion import acoustic_score

    d = nine_to_six([0.1, 0.3, 0.05, 0.2, 0.1, 0.05, 0.1, 0.05, 0.05])
    assert list(d) == [*EMOTIONS_5, "unknown"]
    assert d == pytest.approx({"angry": 0.1 / 0.6, "happy": 0.2 / 0.6, "neutral": 0.1 / 0.6,
                               "sad": 0.1 / 0.6, "surprised": 0.05 / 0.6, "unknown": 0.05 / 0.6})
    five = {"angry": 0.1 / 0.55, "happy": 0.2 / 0.55, "neutral": 0.1 / 0.55, "sad": 0.1 / 0.55, "surprised": 0.05 / 0.55}
    ratings = [1, 2, 3, 4, 5]
    assert acoustic_score(d, ratings) == pytest.approx(sum(five[e] * r for e, r in zip(EMOTIONS_5, ratings)))
    one_hot = nine_to_six([0, 0, 0, 0, 0, 0, 1.0, 0, 0])
    assert one_hot == {"angry": 0.0, "happy": 0.0, "neutral": 0.0, "sad": 1.0, "surprised": 0.0, "unknown": 0.0}
    assert sum(nine_to_six([1 / 9] * 9).values()) == pytest.approx(1.0)
    assert nine_to_six([1 / 9] * 9)["happy"] == pytest.approx(1 / 6)


@pytest.mark.parametrize("bad", [[0.5] * 5, [0, 1, 1, 0, 0, 1, 0, 0, 1], [-0.1, 0, 0, 0.5, 0.6, 0, 0, 0, 0]])
def test_nine_to_six_rejects_bad_vectors(bad):
    from vocalbench.components.emotion import nine_to_six

    with pytest.raises(ValueError):
        nine_to_six(bad)


def test_offline_spec_is_unavailable(clean_wav):
    from vocalbench.components import resolve

    clf = resolve("emotion", "offline")
    with pytest.raises(ComponentUnavailable) as err:
        clf.classify([clean_wav])
    assert err.value.reason == "emotion_model_unavailable"


def test_missing_model_folder_is_unavailable(tmp_path):
    from vocalbench.components import resolve

    with pytest.raises(ComponentUnavailable) as err:
        resolve("emotion", f"paper:{tmp_path / 'nope'}")
    assert err.value.reason == "emotion_model_unavailable"


def test_worker_protocol_and_cache(clean_wav, tmp_path, monkeypatch):
    from vocalbench.components.cache import ResultCache, cached_emotion
    from vocalbench.components.emotion import emotion2vec

    monkeypatch.setenv("VOCALBENCH_EMOTION_PYTHON", str(fake_python(tmp_path)))
    (tmp_path / "model").mkdir()
    clf = emotion2vec(str(tmp_path / "model"))
    cache = ResultCache(tmp_path / "r.sqlite")
    try:
        first = cached_emotion(clf, [clean_wav, clean_wav], cache=cache)
        pid = clf._proc.pid
        assert first[0] == first[1] and first[0]["happy"] == pytest.approx(0.2 / 0.6)
        clf.close()
        again = cached_emotion(clf, [clean_wav], cache=cache)  # served from cache: no worker started
        assert again[0] == first[0] and clf._proc is None
        assert pid > 0
    finally:
        clf.close()


def test_worker_that_cannot_load_reports_why(clean_wav, tmp_path, monkeypatch):
    from vocalbench.components.emotion import emotion2vec

    monkeypatch.setenv("VOCALBENCH_EMOTION_PYTHON", str(fake_python(tmp_path)))
    monkeypatch.setenv("FAKE_EMO_FAIL", "1")
    (tmp_path / "model").mkdir()
    with pytest.raises(ComponentUnavailable) as err:
        emotion2vec(str(tmp_path / "model")).classify([clean_wav])
    assert err.value.reason == "emotion_model_unavailable" and "funasr" in str(err.value)


def test_real_worker_without_funasr_reports_why(clean_wav, tmp_path, monkeypatch):
    """The real worker script under this interpreter (no FunASR here) fails to load, clearly."""
    from importlib.util import find_spec

    from vocalbench.components.emotion import emotion2vec

    if find_spec("funasr") is not None:
        pytest.skip("funasr is installed here; this checks the message when it is not")
    monkeypatch.delenv("VOCALBENCH_EMOTION_PYTHON", raising=False)
    (tmp_path / "model").mkdir()
    with pytest.raises(ComponentUnavailable) as err:
        emotion2vec(str(tmp_path / "model")).classify([clean_wav])
    assert "funasr" in str(err.value) and "VOCALBENCH_EMOTION_PYTHON" in str(err.value)
