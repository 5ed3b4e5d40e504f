"""Runs of identical wording: 12 words (English) or 20 non-space characters with a Han character."""

from __future__ import annotations

import hashlib
import re

WORDS = 12
CHARS = 20
_HAN = re.compile(r"[\u4e00-\u9fff]")


def _digest(run: str) -> str:
    return hashlib.sha256(run.encode("utf-8")).hexdigest()[:12]


def runs(text: str) -> list[str]:
    """Every word run and every Han-bearing character run of the text, in order."""
    words = re.findall(r"[a-z0-9']+", text.lower())
    chars = re.sub(r"\s", "", text)
    out = [" ".join(words[i:i + WORDS]) for i in range(len(words) - WORDS + 1)]
    out += [chars[i:i + CHARS] for i in range(len(chars) - CHARS + 1) if _HAN.search(chars[i:i + CHARS])]
    return out


def run_hashes(text: str) -> set[str]:
    return {_digest(r) for r in runs(text)}


def copied_runs(text: str, fingerprint: set[str]) -> list[str]:
    """The text's runs whose hash is in the fingerprint (the template's field names excepted)."""
    return [r for r in runs(text) if _digest(r) in fingerprint and "{" not in r]
