"""``audio.resample`` designs its filter once per ratio and still gives scipy's samples exactly."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.signal import resample_poly

from vocalbench.audio import _lowpass, resample


@pytest.mark.parametrize("rates", [(16000, 24000), (24000, 16000), (44100, 16000), (8000, 16000), (48000, 24000)])
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int16])
def test_resample_gives_resample_polys_own_samples(rates, dtype):
    from math import gcd

    sr_in, sr_out = rates
    x = (np.random.default_rng(0).standard_normal(sr_in // 2) * 3000).astype(dtype)
    g = gcd(sr_in, sr_out)
    expected = resample_poly(x, sr_out // g, sr_in // g).astype(np.float32)  # scipy designs its filter
    got = resample(x, sr_in, sr_out)
    assert got.dtype == np.float32 and np.array_equal(got, expected)


def test_the_filter_is_designed_once_per_ratio_and_cannot_be_changed():
    _lowpass.cache_clear()
    x = np.zeros(16000, dtype=np.float32)
    for _ in range(3):
        resample(x, 16000, 24000)
    assert _lowpass.cache_info().misses == 1 and _lowpass.cache_info().hits == 2
    with pytest.raises(ValueError):
        _lowpass(3, 2, np.dtype(np.float64))[0] = 1.0
