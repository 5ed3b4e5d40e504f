"""Latency of the single-round replies: first-chunk latency (ms) and real-time factor.

Per reply: FCL = first audio chunk − request issued; RTF = (last chunk − request issued) / reply
audio duration (``Reply.timings``, measured by the harness). Summary values are medians over the
replies; mean, p90 and p99 go to extra. Failed replies and replies without timings are excluded
(counted as ``system_errors`` and as unscored ``no_timings``).
"""

from __future__ import annotations

from array import array
from collections.abc import Iterable

import numpy as np

from vocalbench.records import Reply
from vocalbench.scoring.base import SubsetResult
from vocalbench.scoring.stats import median_ci


def _summary(metric: str, values: list[float], n: int, failures: int, missing: int, origins: set[str]) -> SubsetResult:
    x = np.asarray(values, dtype=float)
    extra: dict[str, object] = {"origin": sorted(origins)}
    ci = median_ci(x)
    if x.size:
        extra.update(mean=round(float(x.mean()), 4), p90=round(float(np.percentile(x, 90)), 4),
                     p99=round(float(np.percentile(x, 99)), 4))
    return SubsetResult(
        metric=metric, value=round(float(np.median(x)), 4) if x.size else None, n=n, scored=int(x.size),
        unscored=missing, system_errors=failures, complete=x.size > 0 and missing == 0,
        ci95=(round(ci[0], 4), round(ci[1], 4)) if ci else None, extra=extra,
        unscored_reasons={"no_timings": missing} if missing else {},
    )


class LatencyTally:
    """FCL and RTF values of the replies, fed one reply at a time (8 bytes per value)."""

    def __init__(self) -> None:
        self.fcl, self.rtf = array("d"), array("d")
        self.n = self.failures = self.ok = 0
        self.origins: set[str] = set()

    def add(self, reply: Reply) -> None:
        self.n += 1
        if reply.failed:
            self.failures += 1
            return
        self.ok += 1
        if reply.timings is not None:
            self.origins.add(reply.timings.origin)
            if reply.timings.fcl_ms is not None:
                self.fcl.append(float(reply.timings.fcl_ms))
        if reply.rtf is not None:
            self.rtf.append(float(reply.rtf))

    def results(self) -> dict[str, SubsetResult]:
        """``{"fcl_ms": ..., "rtf": ...}``: medians over the replies (mean/p90/p99 in extra)."""
        return {
            name: _summary(name, values.tolist(), self.n, self.failures, self.ok - len(values), self.origins)
            for name, values in (("fcl_ms", self.fcl), ("rtf", self.rtf))
        }


def aggregate_latency(replies: Iterable[Reply]) -> dict[str, SubsetResult]:
    """``{"fcl_ms": ..., "rtf": ...}`` over a list of replies."""
    tally = LatencyTally()
    for r in replies:
        tally.add(r)
    return tally.results()
