"""``vocalbench list systems|subsets|components``: what is registered, the package it comes from
(``vocalbench`` or a plug-in's) and whether it is installed; a broken plug-in is one row saying why."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from vocalbench.catalog import SubsetSpec

KINDS = ("systems", "subsets", "components")
COMPONENT_KINDS = ("asr", "tts", "mos", "emotion", "judge", "llm", "encoder", "component")  # component: a misnamed plug-in


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("what", choices=KINDS, help="what to list")
    p.add_argument("--lang", choices=["en", "zh"], default=None, help="subsets of one language only")
    p.add_argument("--json", action="store_true", help="one JSON object per line")


def rows(what: str, lang: str | None = None) -> list[dict[str, object]]:
    """The listing as plain rows (also used by tests and reports)."""
    from vocalbench import registry

    out: list[dict[str, object]] = []
    if what == "subsets":
        from vocalbench import catalog

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
    kinds = ("system",) if what == "systems" else COMPONENT_KINDS
    for kind in kinds:
        for e in registry.entries(kind):
            out.append({"kind": e.kind, "name": e.name, "package": e.package, "installed": e.installed(),
                        "extra": e.extra, "missing": e.missing(), "problem": e.problem, "summary": e.summary})
    return out


def _package(spec: SubsetSpec) -> str:
    """Where a subset comes from: its plug-in's package, else the top module that declared it."""
    from vocalbench import parts

    try:
        return parts.get("subset", spec.name).package
    except KeyError:
        return str(getattr(spec.scorer, "__module__", parts.BUILTIN)).split(".")[0]


def duplex_rows(lang: str) -> list[dict[str, object]]:
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

    data = rows(args.what, args.lang)
    if args.json:
        for r in data:
            print(json.dumps(r, ensure_ascii=False))
        return 0
    table = Table(title=args.what)
    if args.what == "subsets":
        for col in ("lang", "subset", "items", "package", "scoring"):
            table.add_column(col)
        for r in data:
            scoring = f"[red]broken:[/red] {escape(str(r['problem']))}" if r.get("problem") else escape(str(r["scoring"]))
            table.add_row(str(r["lang"]), str(r["subset"]), "–" if r["items"] is None else str(r["items"]),
                          escape(str(r["package"])), scoring)
    else:
        for col in ("kind", "name", "package", "installed", "extra", "summary"):
            table.add_column(col)
        for r in data:
            if r["problem"]:
                inst = f"[red]broken[/red]: {escape(str(r['problem']))}"
            elif r["installed"]:
                inst = "yes"
            else:
                inst = "[red]no[/red] (missing " + ", ".join(r["missing"]) + ")"  # type: ignore[arg-type]
            table.add_row(str(r["kind"]), str(r["name"]), escape(str(r["package"])), inst,
                          escape(f"pip install 'vocalbench[{r['extra']}]'") if r["extra"]
                          else ("core" if r["package"] == "vocalbench" else "–"),
                          escape(str(r["summary"])))
    Console(width=160).print(table)
    return 0
