"""Emotion worker: emotion2vec_plus_large through FunASR, in its own process (and Python).

Self-contained on purpose (no vocalbench imports): it runs under VOCALBENCH_EMOTION_PYTHON,
a separate environment whose torch has a real torchaudio, as FunASR needs.

Protocol (JSON lines): first line out ``{"ready": true, "labels": [...]}`` or
``{"fatal": "..."}``; then for each line in ``{"id": N, "path": "16 kHz mono wav"}`` one line
out ``{"id": N, "labels": [...], "scores": [9 floats]}`` or ``{"id": N, "error": "..."}``.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", required=True, help="local emotion2vec_plus_large folder")
    parser.add_argument("--device", default="cpu")
    args = parser.parse_args()
    out = sys.stdout
    try:
        with contextlib.redirect_stdout(sys.stderr):  # FunASR prints progress; stdout is the protocol
            from funasr import AutoModel

            model = AutoModel(model=args.model, device=args.device, disable_update=True, disable_pbar=True)
    except Exception as exc:  # noqa: BLE001 - any load failure is reported to the parent
        out.write(json.dumps({"fatal": f"{type(exc).__name__}: {exc}"}) + "\n")
        out.flush()
        return 1
    out.write(json.dumps({"ready": True}) + "\n")
    out.flush()
    for line in sys.stdin:
        if not line.strip():
            continue
        req = json.loads(line)
        try:
            with contextlib.redirect_stdout(sys.stderr):
                res = model.generate(req["path"], granularity="utterance", extract_embedding=False)
            item = res[0]
            reply = {"id": req["id"], "labels": list(item["labels"]), "scores": [float(s) for s in item["scores"]]}
        except Exception as exc:  # noqa: BLE001 - one file's failure is reported for that file
            reply = {"id": req["id"], "error": f"{type(exc).__name__}: {exc}"}
        out.write(json.dumps(reply, ensure_ascii=False) + "\n")
        out.flush()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
