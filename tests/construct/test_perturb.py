"""Perturbations: SNR, RT60, packet loss, clipping, high-pass, layout and byte-identical reruns."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from pydantic import JsonValue

from vocalbench import audio
from vocalbench.construct import perturb as P

SR = 16000


def speechlike(seconds: float = 2.0, seed: int = 0, amp: float = 0.3) -> np.ndarray:
    """Harmonic voiced segments with a syllable-rate envelope and a little noise (no exact zeros)."""
    rng = np.random.default_rng(seed)
    t = np.arange(int(seconds * SR)) / SR
    f0 = 140 + 30 * np.sin(2 * np.pi * 0.7 * t)
    phase = 2 * np.pi * np.cumsum(f0) / SR
    x = sum(np.sin(k * phase) / k for k in range(1, 8))
    env = 0.55 + 0.45 * np.sin(2 * np.pi * 4 * t) ** 2
    x = x * env + 0.01 * rng.standard_normal(t.size)
    return (amp * x / np.max(np.abs(x))).astype(np.float32)


@pytest.mark.parametrize("snr", [-5, 0, 5, 10, 15, 20])
def test_white_and_background_noise_hit_the_target_snr(snr: float) -> None:
    x = speechlike(amp=0.05)  # quiet enough that no peak limiting happens: y = x + noise exactly
    colored = np.convolve(np.random.default_rng(7).standard_normal(3 * SR), np.ones(8) / 8, "same")
    for cat, kw in (("white_noise", {}), ("background_noise", {"noise": colored.astype(np.float32)})):
        cond = next(c for c in P.CONDITIONS if c.category == cat and c.value == snr)
        y, _ = P.apply(cond, x, SR, P.rng_for("t", snr), **kw)
        assert np.max(np.abs(y)) < P.PEAK_LIMIT
        assert abs(P.snr_db(x, y - x) - snr) < 0.5, (cat, snr, P.snr_db(x, y - x))


def test_peak_limiting_keeps_the_snr() -> None:
    x = speechlike(amp=0.9)
    y = P.white_noise(x, SR, -5.0, P.rng_for("loud"))
    assert np.max(np.abs(y)) <= P.PEAK_LIMIT + 1e-6
    a = float(np.max(np.abs(x + P.scale_noise(x, P.rng_for("loud").standard_normal(x.size).astype(np.float32), -5.0))))
    gain = P.PEAK_LIMIT / a
    assert abs(P.snr_db(x, y / gain - x) - (-5.0)) < 0.5


def test_snr_survives_writing_to_16_bit_wav(tmp_path: Path) -> None:
    x = speechlike()
    y = P.white_noise(x, SR, 10.0, P.rng_for("wav"))
    p = audio.write(tmp_path / "n.wav", y, SR)
    back, _ = audio.load(p)
    assert abs(P.snr_db(x, back - x) - 10.0) < 0.5


@pytest.mark.parametrize("rt60", [0.5, 1.5, 3.0])
def test_simulated_rir_has_the_target_rt60(rt60: float) -> None:
    import pyroomacoustics as pra

    h = P.simulate_rir(rt60, SR, P.rng_for("rir-test", rt60))
    t30 = P.measure_rt60(h, SR, decay_db=30)
    t20 = P.measure_rt60(h, SR, decay_db=20)
    independent = pra.experimental.measure_rt60(h, fs=SR, decay_db=30)
    for measured in (t30, t20, independent):
        assert abs(measured / rt60 - 1) < 0.20, (rt60, t30, t20, independent)


def test_measure_rt60_on_an_exact_exponential_decay() -> None:
    rng = np.random.default_rng(1)
    rt = 1.2
    t = np.arange(int(2.5 * SR)) / SR
    h = rng.standard_normal(t.size) * 10 ** (-3 * t / rt)  # 60 dB of energy decay per rt seconds
    assert abs(P.measure_rt60(h, SR) - rt) < 0.05


@pytest.mark.parametrize("p", [0.1, 0.3, 0.5, 0.7, 0.9])
def test_packet_loss_drops_exactly_round_p_frames(p: float) -> None:
    x = speechlike(2.013) + 0.02  # no exact zeros anywhere; a partial last frame
    y, dropped = P.packet_loss(x, SR, p, P.rng_for("pl", p))
    frame, frames = P.packet_frames(x.size, SR)
    assert frame == 320 and frames == int(np.ceil(x.size / 320))
    zero = [i for i in range(frames) if np.all(y[i * frame : (i + 1) * frame] == 0)]
    assert len(zero) == round(p * frames) == dropped.size
    kept = np.setdiff1d(np.arange(frames), dropped)
    for i in kept[:20]:
        assert np.array_equal(y[i * frame : (i + 1) * frame], x[i * frame : (i + 1) * frame])


@pytest.mark.parametrize("t", [0.0001, 0.001, 0.01, 0.1, 0.5])
def test_clipping_respects_the_threshold_and_keeps_the_peak(t: float) -> None:
    x = speechlike()
    peak = float(np.max(np.abs(x)))
    y = P.clip(x, t)
    assert abs(float(np.max(np.abs(y))) - peak) < 1e-6
    before_rescale = y * t  # y = clip(x, +-t*peak) * (1/t)
    assert np.all(np.abs(before_rescale) <= t * peak + 1e-7)
    over = np.abs(x) >= t * peak
    assert np.allclose(np.abs(y[over]), peak, atol=1e-5)
    under = ~over
    assert np.allclose(y[under], x[under] / t, atol=1e-4 * peak / t)


def test_farfield_highpass_is_4th_order_zero_phase() -> None:
    from scipy.signal import correlate

    t = np.arange(SR * 2) / SR
    low, high = 0.3 * np.sin(2 * np.pi * 50 * t), 0.3 * np.sin(2 * np.pi * 1600 * t)
    y_low = P.highpass(low.astype(np.float32), SR, 400)
    y_high = P.highpass(high.astype(np.float32), SR, 400)
    mid = slice(SR // 2, 3 * SR // 2)
    # 4th-order Butterworth applied twice: 2 x 24 dB/octave x 3 octaves = 144 dB below the cutoff
    assert P.power(y_low[mid]) / P.power(low[mid]) < 1e-6
    assert abs(10 * np.log10(P.power(y_high[mid]) / P.power(high[mid]))) < 0.1
    lag = int(np.argmax(correlate(y_high[mid], high[mid], mode="full"))) - (mid.stop - mid.start - 1)
    assert lag == 0  # zero phase


def test_condition_table_matches_the_official_names() -> None:
    en = [(c.category, c.level("en")) for c in P.ordered_conditions("en")]
    zh = [c.level("zh") for c in P.ordered_conditions("zh")]
    assert len(en) == 36 and en[0] == ("background_noise", "snr_-5") and en[-1] == ("white_noise", "snr_5")
    assert ("reverberation", "rt60_05") in en and ("distortion", "clipping_0.0001") in en
    assert ("packet_loss", "dropping_70") in en and "dropping_0.70" in zh
    assert ("farfield", "filter_400hz") in en
    mini = [(c.category, c.level("en")) for c in P.ordered_conditions("en", P.mini_conditions())]
    assert mini == [x for x in en if x in mini]  # a selection keeps the official order
    official = Path(__file__).resolve().parents[2].parent / "shared" / "vocalbench"
    for lang in ("en", "zh"):
        f = official / lang / "json" / "robust.json"
        if not f.exists():
            continue
        recs = json.loads(f.read_text(encoding="utf-8"))
        blocks = list(dict.fromkeys((r["Category"], r["Level"], r["Set"]) for r in recs))
        ours = [(c.category, c.level(lang), c.set_name(lang)) for c in P.ordered_conditions(lang)]
        assert blocks == ours


def _tiny_release(root: Path, lang: str = "en") -> None:
    clean = []
    for i in range(2):
        rel = f"robust/{i:03d}.wav"
        audio.write(root / "audio" / rel, speechlike(1.5, seed=i), SR)
        clean.append({"Set": "Chat", "Qid": f"robust-{i:03d}", "Audio": rel, "Question": f"question {i}?",
                      "Answer": f"answer {i}", "Category": "Suggestion"})
    other = []
    for i in range(3):
        rel = f"single_round/{i:03d}.wav"
        audio.write(root / "audio" / rel, speechlike(1.2, seed=10 + i), SR)
        other.append({"Set": "Chat", "Qid": f"single_round-{i:03d}", "Audio": rel, "Question": f"other {i}?"})
    (root / "json").mkdir(parents=True, exist_ok=True)
    (root / "json" / "robust_clean.json").write_text(json.dumps(clean))
    (root / "json" / "single_round.json").write_text(json.dumps(other))


def _digest(root: Path) -> dict[str, str]:
    return {str(p.relative_to(root)): audio.content_hash(p) for p in sorted((root / "audio" / "robust").glob("*/*/*.wav"))}


def test_perturb_robust_layout_and_same_seed_same_bytes(tmp_path: Path) -> None:
    a, b, c = tmp_path / "a", tmp_path / "b", tmp_path / "c"
    for r in (a, b, c):
        _tiny_release(r)
    sec = P.perturb_robust(a, lang="en", seed=3, progress=False, rirs_per_level=1)
    P.perturb_robust(b, lang="en", seed=3, progress=False, rirs_per_level=1)
    P.perturb_robust(c, lang="en", seed=4, progress=False, rirs_per_level=1)
    assert sec["items"] == 72 and sec["background_noise"]["source"] == "synthetic_babble"
    da, db, dc = _digest(a), _digest(b), _digest(c)
    assert len(da) == 72 and da == db
    assert da != dc
    recs = json.loads((a / "json" / "robust.json").read_text())
    assert recs[0]["Qid"] == "robust-background_noise-snr_-5-000"
    assert recs[0]["Audio"] == "robust/background_noise/snr_-5/000.wav"
    assert {r["Level"] for r in recs if r["Category"] == "packet_loss"} == {f"dropping_{p}" for p in (10, 30, 50, 70, 90)}
    man = json.loads((a / "build_manifest.json").read_text())
    assert "SYNTHETIC" in man["perturb"]["background_noise"]["note"]
    from vocalbench.data import load_samples

    samples = load_samples(str(a), "en", ["robust"])
    assert sum(s.subset == "robust" for s in samples) == 72


def test_perturb_zh_names_and_user_noise_folder(tmp_path: Path) -> None:
    root = tmp_path / "zh"
    _tiny_release(root)
    noise = tmp_path / "noise"
    audio.write(noise / "cafe.wav", 0.1 * np.random.default_rng(5).standard_normal(SR).astype(np.float32), SR)
    sec = P.perturb_robust(root, lang="zh", noise_dir=noise, seed=3, progress=False, rirs_per_level=1)
    assert sec["background_noise"] == {"source": "user", "folder": str(noise), "files": ["cafe.wav"]}
    recs = json.loads((root / "json" / "robust.json").read_text())
    assert "robust-packet_loss-dropping_0.10-001" in {r["Qid"] for r in recs}
    assert {r["Set"] for r in recs} == {"Robust"}


def test_rir_simulation_is_seeded_and_cached(tmp_path: Path) -> None:
    a = P.simulate_rir(0.5, SR, P.rng_for("same"))
    b = P.simulate_rir(0.5, SR, P.rng_for("same"))
    c = P.simulate_rir(0.5, SR, P.rng_for("other"))
    assert np.array_equal(a, b) and not np.array_equal(a[: c.size], c[: a.size])
    bank = P.RirBank(SR, seed=1, per_level=1, cache=tmp_path)
    h, _ = bank.get(0.5, P.rng_for("pick"))
    again, _ = P.RirBank(SR, seed=1, per_level=1, cache=tmp_path).get(0.5, P.rng_for("pick"))
    assert len(list(tmp_path.glob("*.npy"))) == 1 and np.array_equal(h, again)


def test_headline_conditions_are_generated() -> None:
    """Robust PR's six conditions (defined once, in the data layer) are in the perturbation table."""
    assert {c.key for c in P.CONDITIONS} >= set(P.HEADLINE) and len(P.HEADLINE) == 6


def test_perturb_robust_selected_conditions_only(tmp_path: Path) -> None:
    """A selection writes just its conditions, with the official ids, paths and the same bytes as
    the full grid; switching a folder from all to a selection removes the dropped audio."""
    root = tmp_path / "en"
    _tiny_release(root)
    P.perturb_robust(root, lang="en", seed=3, progress=False, rirs_per_level=1)
    full = _digest(root)
    assert len(full) == 72
    picked = P.mini_conditions()
    sec = P.perturb_robust(root, lang="en", seed=3, progress=False, rirs_per_level=1, conditions=picked)
    assert sec["conditions"] == 12 and sec["items"] == 24
    assert sec["condition_list"] == [c.key for c in P.ordered_conditions("en", picked)]
    recs = json.loads((root / "json" / "robust.json").read_text())
    assert {(r["Category"], r["Level"]) for r in recs} == {(c.category, c.level_en) for c in picked}
    for r in recs:
        num = r["Qid"].rsplit("-", 1)[1]
        assert r["Qid"] == f"robust-{r['Category']}-{r['Level']}-{num}"
        assert r["Audio"] == f"robust/{r['Category']}/{r['Level']}/{num}.wav"
    kept = _digest(root)
    assert set(kept) == {f"audio/{r['Audio']}" for r in recs}
    assert kept == {k: v for k, v in full.items() if k in kept}
    assert sorted(p.name for p in (root / "audio" / "robust" / "farfield").iterdir()) == ["filter_100hz", "filter_400hz"]
    with pytest.raises(ValueError, match="not a robust condition"):
        P.perturb_robust(root, lang="en", conditions=[P.Condition("farfield", 50.0, "filter_50hz", "filter_50hz")])


def test_selected_conditions_keep_the_zh_level_spelling(tmp_path: Path) -> None:
    root = tmp_path / "zh"
    _tiny_release(root)
    picked = [c for c in P.CONDITIONS if c.category == "packet_loss" and c.value in (0.1, 0.7)]
    P.perturb_robust(root, lang="zh", seed=3, progress=False, conditions=picked)
    recs = json.loads((root / "json" / "robust.json").read_text())
    assert [r["Qid"] for r in recs] == ["robust-packet_loss-dropping_0.10-000", "robust-packet_loss-dropping_0.10-001",
                                        "robust-packet_loss-dropping_0.70-000", "robust-packet_loss-dropping_0.70-001"]
    assert recs[0]["Audio"] == "robust/packet_loss/dropping_0.10/000.wav"


def test_the_sets_language_comes_from_the_build_manifest(tmp_path: Path) -> None:
    """A built set's language is its manifest's ``build.lang``, whatever script its queries use
    (Mandarin sets hold English code-switched queries too); without a manifest, the queries' script."""
    english_queries: list[dict[str, JsonValue]] = [{"Question": "What is the capital of France?"}]
    (tmp_path / "build_manifest.json").write_text(json.dumps({"build": {"lang": "zh"}}), encoding="utf-8")
    assert P._guess_lang(tmp_path, english_queries) == "zh"
    (tmp_path / "build_manifest.json").unlink()
    assert P._guess_lang(tmp_path, english_queries) == "en"
    assert P._guess_lang(tmp_path, [{"Question": "法国的首都是哪里？"}]) == "zh"
