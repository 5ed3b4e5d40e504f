"""Latency of the single-round replies: first-chunk latency, first audible audio (ms), real-time factor.

Per reply: FCL = first audio chunk − request issued; FAA = the moment the first non-silent sample
would be heard (playback from the first chunk, continuous, waiting when it runs dry; silence is
below −50 dBFS RMS over 10 ms frames) − request issued; RTF = (last chunk − request issued) /
reply audio duration (``Reply.timings``, measured by the harness). Summary values are medians over
the replies; mean, p90 and p99 go to extra. Failed replies are excluded (``system_errors``);
replies without timings are unscored ``no_timings``, all-silent replies unscored ``silent_reply``
for FAA.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterable

import numpy as np
from pydantic import JsonValue

from vocalbench.records import Reply
from vocalbench.scoring.base import SubsetResult
from vocalbench.stats import median_ci, median_of


def _summary(metric: str, values: list[float], n: int, failures: int, reasons: dict[str, int],
             origins: set[str]) -> SubsetResult:
    x = np.asarray(values, dtype=float)
    reasons = {k: v for k, v in reasons.items() if v}
    missing = sum(reasons.values())
    extra: dict[str, JsonValue] = {"origin": list(sorted(origins))}
    ci = median_ci(x)
    if x.size:
        extra.update(mean=round(float(x.mean()), 4), p90=round(float(np.percentile(x, 90)), 4),
                     p99=round(float(np.percentile(x, 99)), 4))
    return SubsetResult(
        metric=metric, value=round(float(median_of(x)), 4) if x.size else None, n=n, scored=int(x.size),
        unscored=missing, system_errors=failures, complete=x.size > 0 and missing == 0,
        ci95=(round(ci[0], 4), round(ci[1], 4)) if ci else None, extra=extra,
        unscored_reasons=reasons,
    )


class LatencyTally:
    """FCL, FAA and RTF values of the replies, fed one reply at a time (8 bytes per value)."""

    def __init__(self) -> None:
        self.fcl, self.faa, self.rtf = array("d"), array("d"), array("d")
        self.n = self.failures = self.ok = self.silent = 0
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
            if reply.timings.faa_ms is not None:
                self.faa.append(float(reply.timings.faa_ms))
            elif reply.timings.first_audio is not None and reply.extra.get("audible") is False:
                self.silent += 1
        if reply.rtf is not None:
            self.rtf.append(float(reply.rtf))

    def results(self) -> dict[str, SubsetResult]:
        """``{"fcl_ms": ..., "faa_ms": ..., "rtf": ...}``: medians over the replies (mean/p90/p99 in extra)."""
        silent = {"fcl_ms": 0, "faa_ms": self.silent, "rtf": 0}
        return {
            name: _summary(name, values.tolist(), self.n, self.failures,
                           {"no_timings": self.ok - len(values) - silent[name], "silent_reply": silent[name]},
                           self.origins)
            for name, values in (("fcl_ms", self.fcl), ("faa_ms", self.faa), ("rtf", self.rtf))
        }


def aggregate_latency(replies: Iterable[Reply]) -> dict[str, SubsetResult]:
    """``{"fcl_ms": ..., "faa_ms": ..., "rtf": ...}`` over a list of replies."""
    tally = LatencyTally()
    for r in replies:
        tally.add(r)
    return tally.results()
