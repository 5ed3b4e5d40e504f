"""``RUN/summary.json``: the stable schema of DESIGN.md.

``subsets`` holds one row per scored subset plus the acoustic rows (``utmos``, ``wer``/``per``)
and the latency rows (``fcl_ms``, ``faa_ms``, ``rtf``), each ``{metric, value, n, scored, unscored,
system_errors, complete, ci95, extra}``; ``dimensions`` and ``overall`` follow (see
:mod:`vocalbench.scoring.dimensions` and :mod:`vocalbench.scoring.overall`); ``provenance``
names the evaluators and whether they match the paper's profile. :class:`Summary` is that schema as
a pydantic model: ``write_summary`` validates through it and writes its JSON (key order and absent
optional keys as before; keys a later version adds to ``provenance``/``meta`` pass through).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from vocalbench.config import RunConfig
from vocalbench.files import write_json
from vocalbench.runner.store import RunStore
from vocalbench.scoring.base import SubsetResult
from vocalbench.scoring.dimensions import ROWS
from vocalbench.scoring.dimensions import compute as compute_dimensions
from vocalbench.scoring.overall import overall_result

PAPER_JUDGE_MODEL = "qwen-max-2025-01-25"
SCHEMA_VERSION = 1
Number = int | float  # a JSON number as written (an int stays an int)


class _Part(BaseModel):
    model_config = ConfigDict(extra="allow")


class SubsetRow(_Part):
    metric: str
    value: Number | None
    n: int
    scored: int
    unscored: int
    system_errors: int
    complete: bool
    ci95: list[Number] | None
    extra: dict[str, Any]


class Overall(_Part):
    version: str
    value: Number | None
    missing: list[str]
    partial: dict[str, Number] | None
    note: str | None = None  # only where the version is not defined for the language


class Provenance(_Part):
    asr: str | None = None
    mos: str | None = None
    emotion: str | None = None
    judge: str | None = None
    specs: dict[str, str] = {}
    asr_transcripts: str | None = None  # only when transcripts came with the outputs
    leaderboard_comparable: bool = False
    # the judge ledger per judge model (calls, cache_hits, errors, prompt/completion tokens, seconds),
    # over every scoring pass of this run folder; only when the store logged judge calls
    judge_usage: dict[str, Any] | None = None
    judge_validity: dict[str, Any] | None = None  # only when a judge was used (scoring/judge_check.py)
    data: dict[str, Any] | None = None  # only for a Hub dataset: {"hf", "requested", "revision"}


class Meta(_Part):
    vocalbench: str
    schema_: int = Field(0, alias="schema")
    incomplete_dimensions: list[str] = []
    not_scored: list[str] = []
    scoring_seconds: float | None = None


class Summary(_Part):
    """``summary.json`` (DESIGN.md)."""

    lang: str
    protocol: str
    system: str
    subsets: dict[str, SubsetRow]
    dimensions: dict[str, Number | None]
    overall: Overall
    provenance: Provenance
    meta: Meta

    def to_dict(self) -> dict[str, Any]:
        """The JSON object: declared keys in schema order, optional keys only where they were given."""
        out: dict[str, Any] = self.model_dump(exclude_unset=True, by_alias=True)
        return out


def subset_row(r: SubsetResult) -> dict[str, Any]:
    """One ``subsets`` row; unscored reasons (if any) go into ``extra``."""
    extra = dict(r.extra)
    if r.unscored_reasons:
        extra["unscored_reasons"] = dict(r.unscored_reasons)
    return {
        "metric": r.metric, "value": r.value, "n": r.n, "scored": r.scored, "unscored": r.unscored,
        "system_errors": r.system_errors, "complete": bool(r.complete),
        "ci95": list(r.ci95) if r.ci95 is not None else None, "extra": extra,
    }


def is_paper(kind: str, spec: str) -> bool:
    """Whether a component SPEC is the paper's model (see docs/scoring.md, "paper" profile)."""
    spec = spec.strip()
    if kind == "judge":
        return spec.startswith("openai:") and spec[len("openai:"):].split("@", 1)[0] == PAPER_JUDGE_MODEL
    return spec == "paper" or spec.startswith("paper:")


def provenance(cfg: RunConfig, used: dict[str, str], *, judge_id: str, usage: dict[str, Any] | None,
               imported_transcripts: int) -> dict[str, Any]:
    """Which evaluator did what; ``leaderboard_comparable`` only with the whole paper profile."""
    out: dict[str, Any] = {}
    for kind in ("asr", "mos", "emotion"):
        spec = str(getattr(cfg, kind))
        if kind in used:
            out[kind] = used[kind]
        else:
            out[kind] = None if spec in ("none", "off") else f"{spec} (not used)"
    out["judge"] = judge_id if cfg.judge.strip() not in ("none", "off") else None
    out["specs"] = {k: str(getattr(cfg, k)) for k in ("asr", "mos", "emotion", "judge")}
    if imported_transcripts:
        out["asr_transcripts"] = f"imported with the outputs (json_asr) for {imported_transcripts} replies"
    out["leaderboard_comparable"] = all(is_paper(k, str(getattr(cfg, k))) for k in ("asr", "mos", "emotion", "judge"))
    if usage is not None:
        out["judge_usage"] = usage
    return out


def judge_provenance(cfg: RunConfig, judge_id: str, store: RunStore | None) -> dict[str, Any] | None:
    """The judge's validity for this run (its latest judge-check figures per rubric family used,
    the subsets whose rubrics are not validated) and whether it is the system's own model."""
    if cfg.judge.strip() in ("none", "off") or judge_id in ("none", "") or judge_id.startswith("unavailable:"):
        return None
    from vocalbench.scoring.judge_check import judge_validity, same_model

    used = store.judge_rubrics(judge_id) if store is not None else {}
    out = judge_validity(judge_id, used).to_dict()
    out["same_model_as_system"] = same_model(cfg.system, cfg.judge, judge_id)
    return out


def build_summary(cfg: RunConfig, results: dict[str, SubsetResult], *, store: RunStore | None = None,
                  components_used: dict[str, str] | None = None, judge_id: str = "none",
                  not_scored: list[str] | None = None, imported_transcripts: int = 0,
                  seconds: float | None = None) -> dict[str, Any]:
    """The summary dict for these results (subset rows in canonical order)."""
    from vocalbench._version import __version__
    from vocalbench.data.official import ordered

    dims = compute_dimensions(results, cfg.lang)
    overall = overall_result(dims.values, cfg.protocol, dims.incomplete, lang=cfg.lang)
    names = ordered([n for n in results if n not in ROWS], cfg.lang)
    names += [n for n in ("utmos", "wer", "per", "fcl_ms", "faa_ms", "rtf") if n in results]
    usage = (store.judge_usage() or None) if store is not None else None
    prov = provenance(cfg, components_used or {}, judge_id=judge_id, usage=usage,
                      imported_transcripts=imported_transcripts)
    if store is not None and store.get_meta("data_source"):
        prov["data"] = store.get_meta("data_source")  # the Hub dataset and commit (runner/folder.py)
    validity = judge_provenance(cfg, judge_id, store)
    if validity is not None:
        prov["judge_validity"] = validity
    summary = Summary.model_validate({
        "lang": cfg.lang,
        "protocol": cfg.protocol,
        "system": cfg.system,
        "subsets": {n: subset_row(results[n]) for n in names},
        "dimensions": dims.values,
        "overall": overall,
        "provenance": prov,
        "meta": {"vocalbench": __version__, "schema": SCHEMA_VERSION,
                 "incomplete_dimensions": sorted(dims.incomplete), "not_scored": sorted(not_scored or []),
                 **({"scoring_seconds": round(seconds, 3)} if seconds is not None else {})},
    })
    return summary.to_dict()


def write_summary(run_dir: str | Path, summary: dict[str, Any] | Summary) -> Path:
    """Validate ``summary`` against :class:`Summary` and write ``RUN/summary.json`` atomically
    (UTF-8, ``ensure_ascii=False``)."""
    model = summary if isinstance(summary, Summary) else Summary.model_validate(summary)
    return write_json(Path(run_dir) / "summary.json", model.to_dict())

