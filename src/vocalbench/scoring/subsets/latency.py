"""Latency of the single-round replies: first-chunk latency (ms) and real-time factor.

Per reply: FCL = first audio chunk − request issued; RTF = (last chunk − request issued) / reply
audio duration (``Reply.timings``, measured by the harness). Summary values are medians over the
replies; mean, p90 and p99 go to extra. Failed replies and replies without timings are excluded
(counted as ``system_errors`` and as unscored ``no_timings``).
"""

from __future__ import annotations

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


def aggregate_latency(replies: list[Reply]) -> dict[str, SubsetResult]:
    """``{"fcl_ms": ..., "rtf": ...}``: medians over replies (mean/p90/p99 in extra)."""
    ok = [r for r in replies if not r.failed]
    failures = len(replies) - len(ok)
    fcl = [r.timings.fcl_ms for r in ok if r.timings is not None and r.timings.fcl_ms is not None]
    rtf = [r.rtf for r in ok if r.rtf is not None]
    origins = {r.timings.origin for r in ok if r.timings is not None}
    return {
        "fcl_ms": _summary("fcl_ms", [float(v) for v in fcl], len(replies), failures, len(ok) - len(fcl), origins),
        "rtf": _summary("rtf", [float(v) for v in rtf], len(replies), failures, len(ok) - len(rtf), origins),
    }
