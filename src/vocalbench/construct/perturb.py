"""Robustness perturbations: the 36 conditions of the robust subset (docs/scoring.md, "Robustness").

Every transform is a pure function of (samples, sample rate, a seeded generator), so the same
seed gives the same bytes. ``perturb_robust`` turns a folder's ``robust_clean`` queries into
``json/robust.json`` plus ``audio/robust/<category>/<level>/NNN.wav`` in the official layout, for
all 36 conditions or a named selection (``CONDITION_SETS``: ``mini`` is the built-in set's 12).

Definitions (documented choices; the official ones are unpublished):
- white / background noise: mixed at the target SNR measured over the whole utterance;
- reverberation: convolution with a pyroomacoustics room impulse response (hybrid image-source +
  ray tracing) whose absorption is calibrated until its Schroeder T30 is within 8 % of the target;
- farfield: 4th-order Butterworth high-pass at the level's frequency, zero-phase (sosfiltfilt);
- packet loss: 20 ms frames, exactly round(p x frames) frames chosen by seed, zero-filled;
- clipping: samples clipped at +-t x peak, then rescaled to the original peak.
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

import numpy as np
from pydantic import JsonValue

from vocalbench import audio, catalog
from vocalbench.construct.manifest import PerturbSection
from vocalbench.files import write_json
from vocalbench.scoring.subsets.robust import HEADLINE  # the six conditions of Robust PR, as ``Condition.key``

PEAK_LIMIT = 0.98  # mixtures louder than this are scaled down (SNR is unchanged by a common gain)
PACKET_MS = 20.0
_PRA_LOCK = threading.Lock()


@dataclass(frozen=True)
class Condition:
    """One robust condition: family (official Category), level name per language, parameter."""

    category: str
    value: float
    level_en: str
    level_zh: str

    def level(self, lang: str) -> str:
        return self.level_zh if lang == "zh" else self.level_en

    @property
    def key(self) -> str:
        """``family/level`` with the en level spelling (the scorer's canonical condition name)."""
        return f"{self.category}/{self.level_en}"

    def set_name(self, lang: str) -> str:
        """The official ``Set`` field (en names the family, zh says ``Robust``)."""
        if lang == "zh":
            return "Robust"
        return "clipping_distortion" if self.category == "distortion" else self.category


def _conditions() -> list[Condition]:
    out: list[Condition] = []
    for cat in ("background_noise", "white_noise"):
        out += [Condition(cat, float(s), f"snr_{s}", f"snr_{s}") for s in (-5, 0, 5, 10, 15, 20)]
    out += [Condition("reverberation", r / 10, f"rt60_{r:02d}", f"rt60_{r:02d}") for r in (5, 10, 15, 20, 25, 30)]
    out += [Condition("farfield", float(f), f"filter_{f}hz", f"filter_{f}hz") for f in range(100, 801, 100)]
    out += [Condition("packet_loss", p / 100, f"dropping_{p}", f"dropping_{p / 100:.2f}") for p in (10, 30, 50, 70, 90)]
    out += [Condition("distortion", t, f"clipping_{t:.4f}", f"clipping_{t:.4f}") for t in (0.0001, 0.001, 0.01, 0.1, 0.5)]
    return out


CONDITIONS: tuple[Condition, ...] = tuple(_conditions())
assert len(CONDITIONS) == 36


# The mildest level of each family is the one with the least damage: the highest SNR (least
# noise), the shortest RT60, the fewest frames lost, the highest clipping threshold (clipped at
# 0.5 x peak only the loudest samples change) and the LOWEST farfield cut-off: farfield is a
# high-pass (``highpass``), so 100 Hz takes away at most the lowest male fundamentals while 800 Hz
# takes away every fundamental and much of the first formant.
_MILDEST: dict[str, Callable[..., Condition]] = {
    "background_noise": max, "white_noise": max, "reverberation": min,
    "farfield": min, "packet_loss": min, "distortion": max,
}


def mildest_conditions() -> tuple[Condition, ...]:
    """The mildest level of each of the six families (see ``_MILDEST``)."""
    return tuple(pick((c for c in CONDITIONS if c.category == cat), key=lambda c: c.value)
                 for cat, pick in _MILDEST.items())


def mini_conditions() -> tuple[Condition, ...]:
    """The built-in mini set's 12 conditions: the six headline ones plus the mildest of each family."""
    headline = tuple(c for c in CONDITIONS if c.key in HEADLINE)
    assert len(headline) == len(HEADLINE), "HEADLINE names a condition missing from CONDITIONS"
    return headline + mildest_conditions()


CONDITION_SETS: dict[str, Callable[[], tuple[Condition, ...]]] = {
    "all": lambda: CONDITIONS, "mini": mini_conditions,
}


def ordered_conditions(lang: str, conditions: Sequence[Condition] | None = None) -> list[Condition]:
    """``conditions`` (default all 36) in the order of the official robust.json (category, then
    level name as text), without repeats."""
    return sorted(set(CONDITIONS if conditions is None else conditions), key=lambda c: (c.category, c.level(lang)))


def stable_seed(*parts: object) -> int:
    """A 63-bit seed from any parts, stable across processes and Python versions (no ``hash``)."""
    h = hashlib.sha256("\x1f".join(str(p) for p in parts).encode()).digest()
    return int.from_bytes(h[:8], "little") >> 1


def rng_for(*parts: object) -> np.random.Generator:
    return np.random.default_rng(stable_seed(*parts))


# ----------------------------------------------------------------------------- measurements


def power(x: np.ndarray) -> float:
    return float(np.mean(np.square(x, dtype=np.float64)))


def snr_db(clean: np.ndarray, noise: np.ndarray) -> float:
    """SNR over the whole utterance, in dB."""
    return 10.0 * np.log10(power(clean) / max(power(noise), 1e-30))


def schroeder_db(h: np.ndarray) -> np.ndarray:
    """Schroeder backward-integrated energy decay curve in dB (0 dB at t=0)."""
    e = np.cumsum(np.square(h[::-1], dtype=np.float64))[::-1]
    return 10.0 * np.log10(e / max(e[0], 1e-30) + 1e-30)


def measure_rt60(h: np.ndarray, sr: int, decay_db: float = 30.0) -> float:
    """RT60 of an impulse response: linear fit of the Schroeder curve from -5 dB to -(5+decay_db)
    dB, extrapolated to 60 dB (T30 by default, T20 with ``decay_db=20``)."""
    edc = schroeder_db(h)
    lo, hi = -5.0, -5.0 - decay_db
    i0 = int(np.argmax(edc <= lo))
    i1 = int(np.argmax(edc <= hi))
    if i1 <= i0 + 2:
        raise ValueError(f"impulse response decays by less than {decay_db + 5:.0f} dB; cannot measure T{decay_db:.0f}")
    t = np.arange(i0, i1) / sr
    slope = np.polyfit(t, edc[i0:i1], 1)[0]
    return float(-60.0 / slope)


# ----------------------------------------------------------------------------- transforms


def _limit_peak(y: np.ndarray) -> np.ndarray:
    peak = float(np.max(np.abs(y))) if y.size else 0.0
    return y * (PEAK_LIMIT / peak) if peak > PEAK_LIMIT else y


def scale_noise(clean: np.ndarray, noise: np.ndarray, snr: float) -> np.ndarray:
    """Noise scaled so that 10 log10(P_clean / P_noise) equals ``snr`` exactly."""
    p_noise = power(noise)
    if p_noise <= 0:
        raise ValueError("noise signal is silent")
    gain = np.sqrt(power(clean) / (p_noise * 10.0 ** (snr / 10.0)))
    return (noise * gain).astype(np.float32)


def add_noise(clean: np.ndarray, noise: np.ndarray, snr: float) -> np.ndarray:
    """clean + noise at ``snr`` dB; a common gain keeps the peak below clipping (SNR unchanged)."""
    return _limit_peak(clean + scale_noise(clean, noise, snr)).astype(np.float32)


def white_noise(x: np.ndarray, sr: int, snr: float, rng: np.random.Generator) -> np.ndarray:
    return add_noise(x, rng.standard_normal(x.size).astype(np.float32), snr)


def fit_noise(noise: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
    """A length-``n`` stretch of ``noise`` from a seeded offset, looped when it is too short."""
    if noise.size == 0:
        raise ValueError("empty noise signal")
    start = int(rng.integers(0, noise.size))
    reps = int(np.ceil((start + n) / noise.size))
    return np.tile(noise, reps)[start : start + n]


def background_noise(x: np.ndarray, sr: int, snr: float, rng: np.random.Generator, noise: np.ndarray) -> np.ndarray:
    return add_noise(x, fit_noise(noise, x.size, rng), snr)


def make_babble(sources: Sequence[np.ndarray], n: int, rng: np.random.Generator, talkers: int = 6) -> np.ndarray:
    """Synthetic babble: ``talkers`` utterances (chosen by seed, with repetition when fewer exist),
    each normalised to equal power and looped from a seeded offset, summed."""
    usable = [s for s in sources if s.size and power(s) > 0]
    if not usable:
        raise ValueError("no non-silent source utterances to build babble from")
    out = np.zeros(n, dtype=np.float64)
    for k in rng.choice(len(usable), size=talkers, replace=len(usable) < talkers):
        s = usable[int(k)]
        out += fit_noise(s / np.sqrt(power(s)), n, rng)
    return out.astype(np.float32)


def simulate_rir(rt60: float, sr: int, rng: np.random.Generator, tolerance: float = 0.08,
                 max_iter: int = 6) -> np.ndarray:
    """A room impulse response with the target RT60 (pyroomacoustics shoebox, ISM order 3 plus
    ray-traced tail; ray directions seeded). Room size and positions are drawn from ``rng``; the wall absorption starts
    from Sabine's formula and is corrected until the measured T30 is within ``tolerance``."""
    try:
        import pyroomacoustics as pra
    except ImportError as exc:  # pragma: no cover - depends on the install
        from vocalbench.errors import MissingDependency

        raise MissingDependency("reverberation", "pyroomacoustics", "build") from exc
    dim = np.array([rng.uniform(6.0, 10.0), rng.uniform(5.0, 8.0), rng.uniform(2.8, 4.0)])
    src = dim * np.array([rng.uniform(0.2, 0.4), rng.uniform(0.3, 0.7), rng.uniform(0.35, 0.5)])
    mic = dim * np.array([rng.uniform(0.6, 0.8), rng.uniform(0.3, 0.7), rng.uniform(0.3, 0.45)])
    e_abs, _ = pra.inverse_sabine(rt60, dim)
    alpha = float(min(0.99, e_abs * 1.5))  # ray tracing decays ~1.5x slower than Sabine predicts
    best: tuple[float, np.ndarray] | None = None
    sim_seed = int(rng.integers(0, 2**31 - 1))
    for _ in range(max_iter):
        with _PRA_LOCK:  # pyroomacoustics draws ray directions from global generators: seed them
            pra.random.seed(sim_seed)
            pra.libroom.set_rng_seed(sim_seed)
            h = _simulate(pra, dim, src, mic, alpha, sr, rt60)
        measured = measure_rt60(h, sr)
        err = abs(measured / rt60 - 1.0)
        if best is None or err < best[0]:
            best = (err, h)
        if err <= tolerance:
            break
        alpha = float(np.clip(alpha * measured / rt60, 1e-3, 0.99))
    assert best is not None
    h = best[1]
    return (h / np.max(np.abs(h))).astype(np.float32)


def _simulate(pra: ModuleType, dim: np.ndarray, src: np.ndarray, mic: np.ndarray, alpha: float, sr: int,
              rt60: float) -> np.ndarray:
    room = pra.ShoeBox(dim, fs=sr, materials=pra.Material(alpha), max_order=3, ray_tracing=True,
                       air_absorption=False, use_rand_ism=False)
    room.set_ray_tracing(n_rays=1000, receiver_radius=0.5, energy_thres=1e-7, time_thres=rt60 * 1.6 + 0.3)
    room.add_source(src.tolist())
    room.add_microphone(mic.tolist())
    room.compute_rir()
    return np.asarray(room.rir[0][0], dtype=np.float64)


def reverberate(x: np.ndarray, rir: np.ndarray) -> np.ndarray:
    """Convolve with ``rir``, keep the original length, match the original RMS, limit the peak."""
    from scipy.signal import fftconvolve

    y = fftconvolve(x, rir)[: x.size]
    p = power(y)
    if p > 0:
        y = y * np.sqrt(power(x) / p)
    return _limit_peak(y).astype(np.float32)


def highpass(x: np.ndarray, sr: int, cutoff_hz: float) -> np.ndarray:
    """4th-order Butterworth high-pass at ``cutoff_hz``, applied forward and backward (zero phase)."""
    from scipy.signal import butter, sosfiltfilt

    sos = butter(4, cutoff_hz, btype="highpass", fs=sr, output="sos")
    return _limit_peak(sosfiltfilt(sos, x)).astype(np.float32)


def packet_frames(n: int, sr: int) -> tuple[int, int]:
    """(frame length in samples, number of frames, the last possibly partial)."""
    frame = round(sr * PACKET_MS / 1000.0)
    return frame, int(np.ceil(n / frame))


def packet_loss(x: np.ndarray, sr: int, p: float, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Zero exactly round(p x frames) 20 ms frames chosen by ``rng``; returns (audio, dropped frame indices)."""
    frame, frames = packet_frames(x.size, sr)
    k = round(p * frames)
    dropped = np.sort(rng.choice(frames, size=k, replace=False))
    y = x.copy()
    for i in dropped:
        y[i * frame : (i + 1) * frame] = 0.0
    return y.astype(np.float32), dropped


def clip(x: np.ndarray, t: float) -> np.ndarray:
    """Clip at +-t x peak, then rescale so the peak equals the original peak."""
    peak = float(np.max(np.abs(x)))
    if peak == 0:
        return x.copy()
    thr = t * peak
    return (np.clip(x, -thr, thr) * (peak / thr)).astype(np.float32)


# ----------------------------------------------------------------------------- apply


class RirBank:
    """Room impulse responses per RT60 level: ``per_level`` rooms each, drawn by seed and made
    once (simulation is the slow part), then chosen per item by seed. Simulated responses are
    deterministic for a seed, so they are cached on disk (``cache_dir()/rir``) across runs."""

    RECIPE = "rir-1"  # bump when simulate_rir changes

    def __init__(self, sr: int, seed: int, per_level: int = 3, cache: Path | None | bool = True) -> None:
        self.sr, self.seed, self.per_level = sr, seed, max(1, per_level)
        self._bank: dict[tuple[float, int], np.ndarray] = {}
        if cache is True:
            from vocalbench.config import cache_dir

            cache = cache_dir() / "rir"
        self.cache: Path | None = cache or None

    def _path(self, rt60: float, k: int) -> Path | None:
        if self.cache is None:
            return None
        from importlib.metadata import PackageNotFoundError, version

        try:
            pra_version = version("pyroomacoustics")
        except PackageNotFoundError:
            pra_version = "unknown"
        return self.cache / f"{self.RECIPE}-pra{pra_version}-{self.sr}-{self.seed}-{rt60:.2f}-{k}.npy"

    def get(self, rt60: float, rng: np.random.Generator) -> tuple[np.ndarray, int]:
        k = int(rng.integers(0, self.per_level))
        key = (rt60, k)
        if key not in self._bank:
            path = self._path(rt60, k)
            if path is not None and path.exists():
                self._bank[key] = np.load(path)
            else:
                h = simulate_rir(rt60, self.sr, rng_for("rir", self.seed, rt60, k))
                if path is not None:
                    path.parent.mkdir(parents=True, exist_ok=True)
                    tmp = path.with_name(path.name + f".{threading.get_ident()}.part.npy")
                    np.save(tmp, h)
                    tmp.replace(path)
                self._bank[key] = h
        return self._bank[key], k


def apply(cond: Condition, x: np.ndarray, sr: int, rng: np.random.Generator, *,
          noise: np.ndarray | None = None, rirs: RirBank | None = None) -> tuple[np.ndarray, dict[str, float]]:
    """Apply one condition; returns the audio and what was done (for the manifest)."""
    if cond.category == "white_noise":
        return white_noise(x, sr, cond.value, rng), {"snr_db": cond.value}
    if cond.category == "background_noise":
        if noise is None:
            raise ValueError("background_noise needs a noise signal")
        return background_noise(x, sr, cond.value, rng, noise), {"snr_db": cond.value}
    if cond.category == "reverberation":
        bank = rirs or RirBank(sr, 0)
        h, k = bank.get(cond.value, rng)
        return reverberate(x, h), {"rt60_s": cond.value, "room": k, "rt60_measured_s": round(measure_rt60(h, sr), 3)}
    if cond.category == "farfield":
        return highpass(x, sr, cond.value), {"highpass_hz": cond.value}
    if cond.category == "packet_loss":
        y, dropped = packet_loss(x, sr, cond.value, rng)
        return y, {"frames_dropped": int(dropped.size), "frames": packet_frames(x.size, sr)[1]}
    if cond.category == "distortion":
        return clip(x, cond.value), {"clip_fraction_of_peak": cond.value}
    raise ValueError(f"unknown condition category {cond.category!r}")


# ----------------------------------------------------------------------------- folder level


def _load_noise_folder(folder: Path, sr: int) -> list[tuple[str, np.ndarray]]:
    files = sorted(p for p in folder.rglob("*") if p.suffix.lower() in (".wav", ".flac", ".ogg"))
    if not files:
        raise FileNotFoundError(f"noise folder {folder} holds no .wav/.flac/.ogg files")
    return [(str(p.relative_to(folder)), audio.load(p, sample_rate=sr)[0]) for p in files]


def perturbed_subset() -> catalog.SubsetSpec:
    """The subset ``build perturb`` makes from its control's queries (robust, from robust_clean)."""
    return next(s for s in catalog.specs() if s.perturbed)


def perturb_robust(data: str | Path, *, lang: str | None = None, noise_dir: str | Path | None = None,
                   seed: int = 0, rirs_per_level: int = 3, progress: bool = True, rir_cache: bool = True,
                   on_progress: Callable[[int, int], None] | None = None,
                   conditions: Sequence[Condition] | None = None) -> PerturbSection:
    """Write ``json/robust.json`` and its audio from ``json/robust_clean.json`` of ``data``.

    ``conditions`` selects members of ``CONDITIONS`` (default all 36; ids, paths and bytes of a
    condition do not depend on the selection). Background noise comes from ``noise_dir`` (files
    chosen per item by seed) or, by default, from synthetic babble made of the set's other clean
    queries (every other subset's audio). Audio an earlier perturb step wrote for conditions no
    longer selected is removed. Returns the manifest section describing the step (also merged into
    ``build_manifest.json``).
    """
    unknown = [c for c in conditions or () if c not in CONDITIONS]
    if unknown:
        raise ValueError(f"not a robust condition: {unknown[0]}")
    if conditions is not None and not conditions:
        raise ValueError("no robust conditions selected")
    root = Path(data)
    target = perturbed_subset()
    clean_json = root / "json" / f"{target.control}.json"
    if not clean_json.exists():
        raise FileNotFoundError(f"{clean_json} not found: build the {target.control} subset first")
    clean = json.loads(clean_json.read_text(encoding="utf-8"))
    if not clean:
        raise ValueError(f"{clean_json} is empty")
    lang = lang or _guess_lang(root, clean)
    where = target.layout(lang)
    t0 = time.perf_counter()

    clean_audio = [audio.load(root / "audio" / r["Audio"]) for r in clean]
    sr = clean_audio[0][1]
    clean_audio = [(x if s == sr else audio.resample(x, s, sr), sr) for x, s in clean_audio]

    noise_info: dict[str, JsonValue]
    noise_files: list[tuple[str, np.ndarray]] = []
    babble_pool: list[tuple[str, np.ndarray]] = []
    if noise_dir:
        noise_files = _load_noise_folder(Path(noise_dir), sr)
        noise_info = {"source": "user", "folder": str(noise_dir), "files": [n for n, _ in noise_files]}
    else:
        babble_pool = _babble_sources(root, sr, exclude={r["Audio"] for r in clean}, skip={target.name, clean_json.stem})
        babble_pool += [(r["Audio"], x) for r, (x, _) in zip(clean, clean_audio)]
        noise_info = {"source": "synthetic_babble", "talkers": 6,
                      "note": "SYNTHETIC default: babble mixed from other clean queries of this set "
                              "(never the item's own audio); not recorded real-world noise",
                      "pool": len(babble_pool)}

    rirs = RirBank(sr, seed, per_level=min(rirs_per_level, len(clean)), cache=rir_cache)
    records: list[dict[str, JsonValue]] = []
    written: set[str] = set()  # their audio
    items: list[dict[str, JsonValue]] = []
    conds = ordered_conditions(lang, conditions)
    total = len(conds) * len(clean)
    out_seconds = 0.0
    from vocalbench.progress import progress_bar

    with progress_bar(total, "perturb robust", enabled=progress) as bar:
        for cond in conds:
            level = cond.level(lang)
            for idx, (rec, (x, _)) in enumerate(zip(clean, clean_audio)):
                num = _qid_number(rec["Qid"], idx)
                rng = rng_for("perturb", seed, lang, rec["Qid"], cond.category, level)
                noise = None
                detail_noise: dict[str, str] = {}
                if cond.category == "background_noise":
                    if noise_files:
                        name, noise = noise_files[int(rng.integers(0, len(noise_files)))]
                        detail_noise = {"noise_file": name}
                    else:
                        others = [a for n, a in babble_pool if n != rec["Audio"]]
                        if not others:
                            raise ValueError("synthetic babble needs at least one other clean query in the set; "
                                             "pass --noise DIR")
                        noise = make_babble(others, x.size, rng)
                        detail_noise = {"noise": "synthetic_babble"}
                y, detail = apply(cond, x, sr, rng, noise=noise, rirs=rirs)
                rel = f"{where.audio}/{cond.category}/{level}/{num}.wav"
                audio.write(root / "audio" / rel, y, sr)
                written.add(rel)
                out_seconds += y.size / sr
                records.append({"Set": cond.set_name(lang), "Qid": f"{where.qid}-{cond.category}-{level}-{num}",
                                "Audio": rel, "Question": rec["Question"], "Answer": rec.get("Answer"),
                                "Category": cond.category, "Level": level})
                items.append({"qid": records[-1]["Qid"], "clean_qid": rec["Qid"], **detail, **detail_noise})
                bar.advance()
                if on_progress:
                    on_progress(len(records), total)
    out = root / "json" / f"{target.name}.json"
    _remove_stale_audio(root, out, written, where.audio)
    write_json(out, records)
    seconds = time.perf_counter() - t0
    section: PerturbSection = {
        "seed": seed, "lang": lang, "conditions": len(conds), "condition_list": [c.key for c in conds],
        "clean_items": len(clean), "items": len(records),
        "sample_rate": sr, "background_noise": noise_info,
        "rir": {"simulator": "pyroomacoustics shoebox, ISM order 3 + seeded ray tracing, calibrated to T30 within 8 %",
                "rooms_per_level": rirs.per_level},
        "definitions": {"snr": "whole-utterance power ratio", "farfield": "4th-order Butterworth high-pass, sosfiltfilt",
                        "packet_loss": "20 ms frames, exactly round(p*frames) zero-filled, chosen by seed",
                        "clipping": "clip at +-t*peak, rescale to original peak"},
        "output_audio_seconds": round(out_seconds, 3), "wall_seconds": round(seconds, 3),
        "per_item": items,
    }
    from vocalbench.construct.manifest import update_manifest

    update_manifest(root, {"perturb": section})
    return section


def perturb_release(data: str | Path, *, lang: str | None = None, noise_dir: str | Path | None = None,
                    seed: int = 0, progress: bool = True, selection: str = "all") -> dict[str, JsonValue]:
    """Generate the robust conditions of ``selection`` (a key of ``CONDITION_SETS``) in ``data``;
    returns a one-line summary: items, conditions, noise source and speed (x real time)."""
    section = perturb_robust(data, lang=lang, noise_dir=noise_dir, seed=seed, progress=progress,
                             conditions=CONDITION_SETS[selection]())
    ratio = section["output_audio_seconds"] / max(section["wall_seconds"], 1e-9)
    return {"data": str(data), "robust_items": section["items"], "conditions": section["conditions"],
            "noise": section["background_noise"]["source"], "x_real_time": round(ratio, 1)}


def _remove_stale_audio(root: Path, robust_json: Path, keep: set[str], folder: str) -> None:
    """Delete the audio (under ``audio/<folder>/``) of the previous ``robust.json`` that ``keep`` drops,
    when an earlier perturb step (recorded in the manifest) wrote it; an official release's files are
    never touched."""
    from vocalbench.construct.manifest import read_manifest

    if not robust_json.exists() or "perturb" not in read_manifest(root):
        return
    try:
        old = json.loads(robust_json.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError):
        return
    for rel in {r.get("Audio") for r in old if isinstance(r, dict)} - keep:
        if isinstance(rel, str) and rel.startswith(f"{folder}/"):
            path = root / "audio" / rel
            path.unlink(missing_ok=True)
            if path.parent.is_dir() and not any(path.parent.iterdir()):
                path.parent.rmdir()


def _qid_number(qid: str, idx: int) -> str:
    tail = qid.rsplit("-", 1)[-1]
    return tail if tail.isdigit() else f"{idx:03d}"


def _guess_lang(root: Path, clean: list[dict[str, JsonValue]]) -> str:
    """The set's language: the build manifest's (``build.lang``), else the queries' script."""
    man = root / "build_manifest.json"
    if man.exists():
        header = json.loads(man.read_text(encoding="utf-8")).get("build")
        lang = header.get("lang") if isinstance(header, dict) else None
        if lang in ("en", "zh"):
            return str(lang)
    text = " ".join(str(r.get("Question", "")) for r in clean)
    han = sum(1 for ch in text if "\u4e00" <= ch <= "\u9fff")
    return "zh" if han > len(text) * 0.2 else "en"


def _babble_sources(root: Path, sr: int, exclude: set[str], skip: set[str],
                    limit: int = 64) -> list[tuple[str, np.ndarray]]:
    """Clean query audio of the folder's other subsets (not those in ``skip``; sorted, at most ``limit``)."""
    paths: list[str] = []
    for js in sorted((root / "json").glob("*.json")):
        if js.stem in skip:
            continue
        try:
            recs = json.loads(js.read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError):
            continue
        paths += [r["Audio"] for r in recs if isinstance(r, dict) and r.get("Audio") and r["Audio"] not in exclude]
    out = []
    for rel in sorted(set(paths))[:limit]:
        p = root / "audio" / rel
        if p.exists():
            out.append((rel, audio.load(p, sample_rate=sr)[0]))
    return out
