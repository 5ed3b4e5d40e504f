"""Repeated runs (``run --repeats N``): mean, between-run SD and a CI with both sources of variance.

A language's repeats are run folders ``GROUP/repeat-1`` … ``GROUP/repeat-N`` (each generated with
its own seed, scored and resumable like any run). ``GROUP/repeats.json`` gives every subset row,
dimension and the overall (or partial overall) as ``{mean, sd, n, within_se, ci95, values}``:

- ``sd``: the between-run standard deviation of the N values (ddof 1);
- ``within_se``: the root mean square over the repeats of each run's own standard error (item
  sampling), from the 95 % CI its summary.json carries (the row's ``ci95``, ``meta.dimension_ci95``,
  ``overall.ci95``: scoring's clustered bootstrap; nothing is resampled here);
- ``ci95``: ``mean ± 1.96·sqrt(within_se² + sd²/N)``: the items are the same in every repeat, so
  their sampling error does not average out, while run-to-run noise does. (Each run's own SE already
  holds some of the run-to-run noise, so the interval errs wide.) Where a run has no item-level SE
  the interval is from the repeats alone, ``mean ± t(N-1)·sd/√N``, and ``sources`` says so.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from pydantic import BaseModel, ConfigDict, ValidationError

from vocalbench.errors import validation_message
from vocalbench.files import write_json
from vocalbench.report.runs import load_runs
from vocalbench.runner.folder import REPEAT, RunFolder, repeat_dirs
from vocalbench.stats import ci_se, difference_ci, pool_repeats

REPEATS_FILE = "repeats.json"


class Pooled(BaseModel):
    """One row pooled over the repeats (:func:`vocalbench.stats.pool_repeats`)."""

    model_config = ConfigDict(extra="forbid")

    mean: float
    sd: float
    n: int
    values: list[float]
    within_se: float | None = None
    sources: str | None = None  # items+runs | runs | None (one repeat)
    ci95: list[float] | None = None
    partial: bool | None = None  # the overall only: a partial overall


class RepeatsFile(BaseModel):
    """``GROUP/repeats.json``."""

    model_config = ConfigDict(extra="forbid")

    lang: str | None = None
    system: str | None = None
    repeats: int
    runs: list[str]
    seeds: list[int | None]
    subsets: dict[str, Pooled]
    dimensions: dict[str, Pooled]
    overall: Pooled | None = None
    method: str = ""


class RepeatsRow(BaseModel):
    """A − B of one row of two repeat groups."""

    name: str
    a: float
    b: float
    sd_a: float
    sd_b: float
    diff: float
    ci95: list[float] | None = None


def summarise(group: Path, held: Mapping[Path, RunFolder] | None = None) -> RepeatsFile:
    """The pooled figures of ``group``'s repeats (every row present in all of them); ``held``: run
    folders already open, read through their store."""
    dirs = repeat_dirs(group)
    if not dirs:
        raise ValueError(f"{group}: no {REPEAT}K run folders")
    runs = load_runs([(held or {}).get(d, d) for d in dirs], with_store=False)
    per: list[dict[str, tuple[float, float | None]]] = []
    partial = False
    for r in runs:
        row: dict[str, tuple[float, float | None]] = {}
        for name, sub in r.summary.subsets.items():
            if sub.value is not None:
                row[f"subset:{name}"] = (float(sub.value), ci_se(sub.ci95))
        for name, dv in r.summary.dimensions.items():
            if dv is not None:
                row[f"dimension:{name}"] = (float(dv), ci_se(r.summary.dimension_ci(name)))
        ov, is_partial = r.summary.overall.shown()
        if ov is not None:
            partial = partial or is_partial
            row["overall"] = (ov, ci_se(r.summary.overall_ci()) if not is_partial else None)
        per.append(row)
    common = [k for k in per[0] if all(k in p for p in per[1:])]
    pooled = {k: pool_repeats([p[k][0] for p in per], [p[k][1] for p in per]) for k in common}
    first = runs[0].summary
    return RepeatsFile.model_validate({
        "lang": first.lang or None, "system": first.system or None, "repeats": len(runs),
        "runs": [d.name for d in dirs], "seeds": [r.config.seed for r in runs],
        "subsets": {k.split(":", 1)[1]: v for k, v in pooled.items() if k.startswith("subset:")},
        "dimensions": {k.split(":", 1)[1]: v for k, v in pooled.items() if k.startswith("dimension:")},
        "overall": {**pooled["overall"], "partial": partial} if "overall" in pooled else None,
        "method": "mean of the repeats; sd between runs (ddof 1); ci95 = mean ± 1.96·sqrt(within_se² + sd²/n), "
                  "within_se the repeats' RMS item-level SE (clustered bootstrap); 'runs' = t interval of the "
                  "repeats alone",
    })


def write_repeats(group: Path, held: Mapping[Path, RunFolder] | None = None) -> Path:
    """Write ``GROUP/repeats.json`` (UTF-8, ``ensure_ascii=False``) and return its path."""
    body = summarise(group, held)
    return write_json(group / REPEATS_FILE, body.model_dump(exclude_unset=True))


def load_repeats(group: Path) -> RepeatsFile | None:
    """``GROUP/repeats.json``, or None when there is none (ValueError naming the file when it is malformed)."""
    path = group / REPEATS_FILE
    if not path.is_file():
        return None
    try:
        return RepeatsFile.model_validate_json(path.read_text(encoding="utf-8"))
    except ValidationError as exc:
        raise ValueError(f"{path}: {validation_message(exc)}") from None


def groups_of(path: Path) -> dict[str, RepeatsFile]:
    """``{lang: repeats.json}`` of the repeat groups at ``path`` (itself, or its en/ and zh/)."""
    out: dict[str, RepeatsFile] = {}
    for folder in (path, path / "en", path / "zh"):
        body = load_repeats(folder) if folder.is_dir() else None
        if body is not None:
            out.setdefault(str(body.lang), body)
    return out


def print_repeats_comparison(lang: str, a: RepeatsFile, b: RepeatsFile, rows: list[RepeatsRow]) -> None:
    print(f"[{lang}] A = {a.system} ({a.repeats} runs), B = {b.system} ({b.repeats} runs); "
          "means ± between-run SD, difference A - B with a CI from both groups' intervals")
    for r in rows:
        ci = f"[{r.ci95[0]:+.3f}, {r.ci95[1]:+.3f}]" if r.ci95 else "(no CI)"
        print(f"  {r.name:<32} {r.a:>9.3f} ± {r.sd_a:<7.3f} {r.b:>9.3f} ± {r.sd_b:<7.3f} {r.diff:+9.3f} {ci}")


def compare_repeats(a: RepeatsFile, b: RepeatsFile) -> list[RepeatsRow]:
    """A − B per dimension and overall of two repeat groups: the difference of means with a CI from
    both groups' intervals (``sqrt(se_a² + se_b²)``; unpaired, so it errs wide)."""
    rows = []
    keys = [("overall", a.overall, b.overall)]
    keys += [(f"dimension:{d}", v, b.dimensions.get(d)) for d, v in a.dimensions.items()]
    for name, ra, rb in keys:
        if ra is None or rb is None:
            continue
        d = ra.mean - rb.mean
        row = RepeatsRow(name=name, a=ra.mean, b=rb.mean, sd_a=ra.sd, sd_b=rb.sd, diff=round(d, 4))
        sa, sb = ci_se(ra.ci95), ci_se(rb.ci95)
        if sa is not None and sb is not None:
            row.ci95 = difference_ci(d, sa, sb)
        rows.append(row)
    return rows
