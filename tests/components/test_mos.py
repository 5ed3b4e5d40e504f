"""MOS models rank clean speech above the same speech degraded by noise or packet loss."""

from __future__ import annotations

import numpy as np
import pytest


@pytest.fixture(scope="module")
def degraded(clean_wav, tmp_path_factory):
    """(clean, white noise at 0 dB SNR, 50 % of 20 ms frames dropped), all 16 kHz."""
    from vocalbench.audio import load, write

    x, sr = load(clean_wav)
    rng = np.random.default_rng(7)
    noise = rng.standard_normal(x.size).astype(np.float32) * np.sqrt(np.mean(x**2))  # 0 dB
    noisy = x + noise
    noisy /= np.max(np.abs(noisy))
    frame = int(0.02 * sr)
    lossy = x.copy()
    n = x.size // frame
    for i in rng.choice(n, n // 2, replace=False):
        lossy[i * frame:(i + 1) * frame] = 0.0
    d = tmp_path_factory.mktemp("mos")
    return [clean_wav, write(d / "noisy.wav", noisy, sr), write(d / "lossy.wav", lossy, sr)]


@pytest.mark.slow
@pytest.mark.parametrize("spec", ["offline", "dnsmos"])
def test_clean_ranks_above_degraded(spec, degraded):
    from vocalbench.components import resolve

    model = resolve("mos", spec)
    clean, noisy, lossy = model.score(degraded)
    print(f"\n{model.id}: clean {clean:.3f}  white-noise 0 dB {noisy:.3f}  packet-loss 50 % {lossy:.3f}")
    assert all(isinstance(v, float) and 1.0 <= v <= 5.0 for v in (clean, noisy, lossy))
    assert clean > noisy + 0.3
    assert clean > lossy + 0.3


@pytest.mark.slow
def test_scores_are_per_file_and_order_independent(degraded):
    """Each file is scored at its own length: order and batch company change nothing."""
    from vocalbench.components import resolve

    model = resolve("mos", "offline")
    forward = model.score(degraded)
    backward = model.score(list(reversed(degraded)))
    alone = model.score([degraded[1]])
    assert forward == list(reversed(backward))
    assert alone[0] == forward[1]


def test_utmos_without_weights_says_why(tmp_path):
    from vocalbench.components import resolve
    from vocalbench.components.base import ComponentUnavailable

    with pytest.raises(ComponentUnavailable) as err:
        resolve("mos", f"paper:{tmp_path / 'missing.pt'}")
    assert err.value.reason == "mos_model_unavailable"
    assert "UTMOS22" in str(err.value)


def test_utmos_loads_user_supplied_torchscript(degraded, tmp_path):
    """The paper-profile loader with a user's TorchScript file (a stand-in model, (wave, sr) -> MOS)."""
    import torch

    from vocalbench.components import resolve

    class Loudness(torch.nn.Module):
        def forward(self, wave: torch.Tensor, sr: int) -> torch.Tensor:
            return 1.0 + 4.0 * wave.abs().mean(dim=1) * float(sr) / 16000.0

    path = tmp_path / "utmos22_strong.pt"
    torch.jit.script(Loudness()).save(str(path))
    model = resolve("mos", f"paper:{path}")
    out = model.score([degraded[0], tmp_path / "missing.wav"])
    assert model.id == "utmos22-strong" and model.version == "utmos22_strong.pt"
    assert isinstance(out[0], float) and 1.0 < out[0] < 5.0
    assert out[1].reason == "bad_audio"
