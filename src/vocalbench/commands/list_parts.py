"""``vocalbench list systems|subsets|components``: what is registered, the package it comes from
(``vocalbench`` or a plug-in's) and whether it is installed; a broken plug-in is one row saying why."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, NotRequired, TypedDict

if TYPE_CHECKING:
    from vocalbench.catalog import SubsetSpec

KINDS = ("systems", "subsets", "components")
COMPONENT_KINDS = ("asr", "tts", "mos", "emotion", "judge", "llm", "encoder", "component")  # component: a misnamed plug-in


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("what", choices=KINDS, help="what to list")
    p.add_argument("--lang", choices=["en", "zh"], default=None, help="subsets of one language only")
    p.add_argument("--json", action="store_true", help="one JSON object per line")


class SubsetRow(TypedDict):
    """One subset of ``vocalbench list subsets`` (``problem``: a plug-in that cannot be loaded)."""

    lang: str
    subset: str
    items: int | None
    scoring: str
    package: str
    problem: NotRequired[str]


class PartRow(TypedDict):
    """One system or component kind of ``vocalbench list systems|components``."""

    kind: str
    name: str
    package: str
    installed: bool
    extra: str | None
    missing: list[str]
    problem: str | None
    summary: str


def rows(what: str, lang: str | None = None) -> list[SubsetRow] | list[PartRow]:
    """The listing as plain rows (also used by tests and reports)."""
    return subset_rows(lang) if what == "subsets" else part_rows(what)


def subset_rows(lang: str | None = None) -> list[SubsetRow]:
    """Every subset of the catalogue (of ``lang`` only when given), the duplex kinds, broken plug-ins."""
    from vocalbench import catalog, registry

    out: list[SubsetRow] = []
    for lg in catalog.LANGS:
        if lang and lg != lang:
            continue
        for spec in catalog.specs(lg):
            out.append({"lang": lg, "subset": spec.name, "items": spec.items[lg],
                        "scoring": f"{spec.metric}: {spec.description}", "package": _package(spec)})
        out += duplex_rows(lg)
    out += [{"lang": "", "subset": e.name, "items": None, "scoring": "", "package": e.package,
             "problem": e.problem} for e in registry.entries("subset") if e.plugin and e.problem]
    return out


def part_rows(what: str) -> list[PartRow]:
    """The registered systems (``what`` "systems") or components, installed or not."""
    from vocalbench import registry

    kinds = ("system",) if what == "systems" else COMPONENT_KINDS
    return [{"kind": e.kind, "name": e.name, "package": e.package, "installed": e.installed(), "extra": e.extra,
             "missing": e.missing(), "problem": e.problem, "summary": e.summary}
            for kind in kinds for e in registry.entries(kind)]


def _package(spec: SubsetSpec) -> str:
    """Where a subset comes from: its plug-in's package, else the top module that declared it."""
    from vocalbench import parts

    try:
        return parts.get("subset", spec.name).package
    except KeyError:
        return str(getattr(spec.scorer, "__module__", parts.BUILTIN)).split(".")[0]


def duplex_rows(lang: str) -> list[SubsetRow]:
    """The duplex suite's kinds (``--subsets duplex`` runs them all): scenarios in the full set, measures."""
    from vocalbench.duplex.scenarios import KINDS, read_scripts
    from vocalbench.duplex.score import KIND_LABELS, LABELS, MEASURES

    scripts = read_scripts(lang, "full")
    return [{"lang": lang, "subset": f"duplex/{kind}", "items": sum(s.kind == kind for s in scripts), "package": "vocalbench",
             "scoring": f"{KIND_LABELS[kind]}: " + ", ".join(LABELS[m] for m in (*MEASURES[kind], "ttfa_p50"))}
            for kind in KINDS]


def run(args: argparse.Namespace) -> int:
    import json

    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table

    if args.json:
        for r in rows(args.what, args.lang):
            print(json.dumps(r, ensure_ascii=False))
        return 0
    table = Table(title=args.what)
    if args.what == "subsets":
        for col in ("lang", "subset", "items", "package", "scoring"):
            table.add_column(col)
        for s in subset_rows(args.lang):
            scoring = f"[red]broken:[/red] {escape(s['problem'])}" if s.get("problem") else escape(s["scoring"])
            table.add_row(s["lang"], s["subset"], "–" if s["items"] is None else str(s["items"]),
                          escape(s["package"]), scoring)
    else:
        for col in ("kind", "name", "package", "installed", "extra", "summary"):
            table.add_column(col)
        for p in part_rows(args.what):
            if p["problem"]:
                inst = f"[red]broken[/red]: {escape(p['problem'])}"
            elif p["installed"]:
                inst = "yes"
            else:
                inst = "[red]no[/red] (missing " + ", ".join(p["missing"]) + ")"
            table.add_row(p["kind"], p["name"], escape(p["package"]), inst,
                          escape(f"pip install 'vocalbench[{p['extra']}]'") if p["extra"]
                          else ("core" if p["package"] == "vocalbench" else "–"),
                          escape(p["summary"]))
    Console(width=160).print(table)
    return 0
