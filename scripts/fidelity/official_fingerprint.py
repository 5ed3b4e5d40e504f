"""Fingerprint the official VocalBench judge prompts, so tests can prove no rubric copies them.

Reads checkouts of the official repositories (github SJTU-OmniAgent/VocalBench and
SJTU-OmniAgent/VocalBench-zh), takes every run of 12 words (English, lower-cased) and of 20
non-space characters holding a Han character (Mandarin) in their prompt files and judge scripts,
and writes the first 12 hex digits of each run's SHA-256, sorted, one per line. The file carries
no official text; tests/scoring/test_rubric_wording.py looks the rubrics' own runs up in it.

    python scripts/fidelity/official_fingerprint.py EN_CHECKOUT ZH_CHECKOUT \
        > tests/scoring/data/official_prompt_runs.txt
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tests" / "scoring"))
from wording_runs import run_hashes  # noqa: E402

PROMPT_FILES = ("prompts/**/*.txt", "prompt/**/*.txt", "utils/*.py")


def main(roots: list[str]) -> None:
    hashes: set[str] = set()
    for root in roots:
        for pattern in PROMPT_FILES:
            for path in sorted(Path(root).glob(pattern)):
                hashes |= run_hashes(path.read_text("utf-8", "ignore"))
    sys.stdout.write("".join(f"{h}\n" for h in sorted(hashes)))


if __name__ == "__main__":
    main(sys.argv[1:])
