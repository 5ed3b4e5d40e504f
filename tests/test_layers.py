"""vocalbench's top-level packages depend one way: no import cycle between them, counting every
import in a module (inside functions and ``TYPE_CHECKING`` blocks too), and each import points
down the layer order below (docs/extending.md)."""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src" / "vocalbench"

# Lowest first: a part may import only parts on its own level or below it.
LAYERS: list[set[str]] = [
    {"_version", "errors", "files", "redact", "records", "config", "audio", "concurrency", "progress", "parts", "catalog"},
    {"data"},
    {"components"},
    {"systems"},
    {"runner"},
    {"scoring"},
    {"build"},
    {"report"},
    {"registry", "commands"},
    {"cli"},
    {"vocalbench"},  # the package facade (__init__: __version__, overall_score)
]
LEVEL = {name: i for i, names in enumerate(LAYERS) for name in names}


def _part(module: str) -> str | None:
    """The top-level part of a dotted module name (``vocalbench`` for the package facade)."""
    parts = module.split(".")
    if parts[0] != "vocalbench":
        return None
    if len(parts) == 1:
        return "vocalbench"
    return parts[1] if (SRC / parts[1]).is_dir() or (SRC / f"{parts[1]}.py").exists() else "vocalbench"


def _module_of(path: Path) -> str:
    rel = path.relative_to(SRC.parent).with_suffix("")
    names = list(rel.parts)
    if names[-1] == "__init__":
        names.pop()
    return ".".join(names)


def import_edges() -> dict[tuple[str, str], set[str]]:
    """{(part, imported part): {files}} over every import statement in src/vocalbench."""
    edges: dict[tuple[str, str], set[str]] = {}
    for path in sorted(SRC.rglob("*.py")):
        module = _module_of(path)
        src = _part(module)
        package = module if path.name == "__init__.py" else module.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    up = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                    base = ".".join(up + ([node.module] if node.module else []))
                # ``from vocalbench import data`` imports the part ``data``; ``from vocalbench
                # import __version__`` imports the facade
                targets = [f"{base}.{a.name}" if base == "vocalbench" else base for a in node.names]
            for target in targets:
                dst = _part(target)
                if dst is not None and src is not None and dst != src:
                    edges.setdefault((src, dst), set()).add(str(path.relative_to(SRC)))
    return edges


def _cycles(edges: dict[tuple[str, str], set[str]]) -> list[list[str]]:
    graph: dict[str, set[str]] = {}
    for a, b in edges:
        graph.setdefault(a, set()).add(b)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    out: list[list[str]] = []

    def visit(v: str) -> None:  # Tarjan's strongly connected components
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def test_no_import_cycle_between_top_level_parts() -> None:
    edges = import_edges()
    cycles = _cycles(edges)
    detail = [f"{a} -> {b}: {sorted(files)}" for (a, b), files in sorted(edges.items())
              if any(a in c and b in c for c in cycles)]
    assert not cycles, f"import cycles {cycles}:\n" + "\n".join(detail)


def test_every_import_points_down_the_layers() -> None:
    edges = import_edges()
    unknown = sorted({p for e in edges for p in e} - set(LEVEL))
    assert not unknown, f"parts without a layer (add them to LAYERS): {unknown}"
    upward = [f"{a} -> {b}: {sorted(files)}" for (a, b), files in sorted(edges.items()) if LEVEL[a] < LEVEL[b]]
    assert not upward, "imports against the layer order:\n" + "\n".join(upward)


def test_the_check_finds_a_cycle_through_a_function_level_import() -> None:
    assert _cycles({("a", "b"): set(), ("b", "c"): set(), ("c", "a"): set(), ("c", "d"): set()}) == [["a", "b", "c"]]
    # systems/cascade.py imports the components layer only inside functions
    assert "systems/cascade.py" in import_edges()[("systems", "components")]
