"""Broken inputs give a clear per-file error or a valid result, never a crashed batch."""

from __future__ import annotations

import math

from vocalbench.components.base import ComponentError, Transcript

MUST_FAIL = {"empty", "corrupt", "nan"}
MUST_WORK = {"u8", "stereo48k"}


def _check(results, names, valid_type):
    assert len(results) == len(names)
    for name, r in zip(names, results):
        if name in MUST_FAIL:
            assert isinstance(r, ComponentError), (name, r)
            assert r.reason and r.message, (name, r)
        elif name in MUST_WORK:
            assert isinstance(r, valid_type), (name, r)
        else:
            assert isinstance(r, (ComponentError, valid_type)), (name, r)


def test_asr_batch(asr, bad_files, clean_wav):
    names = [*bad_files, "clean"]
    results = asr.transcribe([*bad_files.values(), clean_wav], "en")
    _check(results, names, Transcript)
    assert "library" in results[-1].text.lower()
    assert "empty" in results[0].message and "NaN" in results[names.index("nan")].message


def test_mos_batch(bad_files, clean_wav):
    from vocalbench.components import resolve

    model = resolve("mos", "offline")
    names = [*bad_files, "clean"]
    results = model.score([*bad_files.values(), clean_wav])
    _check(results, names, float)
    assert isinstance(results[names.index("short")], ComponentError)
    assert all(math.isfinite(r) for r in results if isinstance(r, float))


def test_emotion_batch_through_worker(bad_files, clean_wav, tmp_path, monkeypatch):
    """The real worker protocol, with a stand-in worker (no emotion2vec weights exist offline)."""
    from tests.components.test_emotion import fake_python

    monkeypatch.setenv("VOCALBENCH_EMOTION_PYTHON", str(fake_python(tmp_path)))
    from vocalbench.components.emotion import emotion2vec

    model_dir = tmp_path / "emotion2vec_plus_large"
    model_dir.mkdir()
    clf = emotion2vec(str(model_dir))
    try:
        names = [*bad_files, "clean"]
        results = clf.classify([*bad_files.values(), clean_wav])
    finally:
        clf.close()
    _check(results, names, dict)
    assert abs(sum(results[-1].values()) - 1.0) < 1e-9
