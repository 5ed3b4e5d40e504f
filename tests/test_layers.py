"""vocalbench's top-level packages depend one way: no import cycle between them, counting every
import in a module (inside functions and ``TYPE_CHECKING`` blocks too) and every import made at run
time (``importlib.import_module`` of a name the module spells out, and the ``"module:attribute"``
targets of the lazy parts table), and each import points down the layer order below
(docs/extending.md)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src" / "vocalbench"

# Lowest first: a part may import only parts on its own level or below it.
LAYERS: list[set[str]] = [
    {"_version", "errors", "files", "limits", "redact", "records", "config", "audio", "concurrency", "progress", "parts",
     "catalog", "retry", "text", "stats"},
    {"data"},
    {"components"},
    {"systems"},
    {"judge"},
    {"run_config"},  # the run's configuration: its SPECs are the systems', components' and judge's types
    {"runner"},
    {"scoring"},
    {"construct"},
    {"duplex"},
    {"report"},
    {"registry", "commands"},
    {"cli"},
    {"api"},  # the Python API: evaluate/score/load_summary run the commands' own code
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


def _is_module(dotted: str) -> bool:
    """Whether ``a.b.c`` names a module or package of src/vocalbench (``from a.b import c`` imports it)."""
    rel = SRC.parent.joinpath(*dotted.split("."))
    return rel.is_dir() or rel.with_suffix(".py").exists()


def _module_of(path: Path) -> str:
    rel = path.relative_to(SRC.parent).with_suffix("")
    names = list(rel.parts)
    if names[-1] == "__init__":
        names.pop()
    return ".".join(names)


_TARGET = re.compile(r"^(vocalbench(?:\.\w+)+):\w+$")  # a lazy "module:attribute" entry


def _constants(tree: ast.Module) -> dict[str, str]:
    """Module-level names bound to a string (``_M = "vocalbench.components"``)."""
    return {t.id: node.value.value for node in tree.body if isinstance(node, ast.Assign)
            and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)
            for t in node.targets if isinstance(t, ast.Name)}


def _text(node: ast.expr, names: dict[str, str]) -> str | None:
    """The string an expression spells out (a literal, a module-level name, an f-string of those)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.Name):
        return names.get(node.id)
    if isinstance(node, ast.JoinedStr):
        parts = [_text(v.value if isinstance(v, ast.FormattedValue) else v, names) for v in node.values]
        return None if None in parts else "".join(p for p in parts if p is not None)
    return None


def runtime_targets(node: ast.AST, names: dict[str, str]) -> list[str]:
    """Modules a node imports at run time: ``importlib.import_module(<spelled-out name>)``, or a
    ``"vocalbench.module:attribute"`` string (an entry of the lazy parts table)."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute | ast.Name) and node.args and \
            (node.func.attr if isinstance(node.func, ast.Attribute) else node.func.id) == "import_module":
        name = _text(node.args[0], names)
        return [name] if name else []
    if isinstance(node, ast.Constant | ast.JoinedStr):
        m = _TARGET.match(_text(node, names) or "")
        return [m.group(1)] if m else []
    return []


def _imports(path: Path) -> list[str]:
    """The vocalbench modules one file imports (every import statement and run-time import)."""
    module = _module_of(path)
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names = _constants(tree)
    out: list[str] = []
    for node in ast.walk(tree):
        targets = runtime_targets(node, names)
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                up = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                base = ".".join(up + ([node.module] if node.module else []))
            # ``from vocalbench import data`` imports the part ``data``; ``from vocalbench
            # import __version__`` imports the facade
            targets = [f"{base}.{a.name}" if base == "vocalbench" or _is_module(f"{base}.{a.name}") else base
                       for a in node.names]
        out += [t for t in targets if t.split(".")[0] == "vocalbench"]
    return out


def import_edges() -> dict[tuple[str, str], set[str]]:
    """{(part, imported part): {files}} over every import statement and run-time import in src/vocalbench."""
    edges: dict[tuple[str, str], set[str]] = {}
    for path in sorted(SRC.rglob("*.py")):
        src = _part(_module_of(path))
        for target in _imports(path):
            dst = _part(target)
            if dst is not None and src is not None and dst != src:
                edges.setdefault((src, dst), set()).add(str(path.relative_to(SRC)))
    return edges


def _file_of(module: str) -> Path | None:
    rel = SRC.parent.joinpath(*module.split("."))
    return rel / "__init__.py" if rel.is_dir() else rel.with_suffix(".py") if rel.with_suffix(".py").exists() else None


def file_edges() -> dict[tuple[str, str], set[str]]:
    """{(file, file it imports)} over src/vocalbench, function-level and run-time imports included."""
    edges: dict[tuple[str, str], set[str]] = {}
    for path in sorted(SRC.rglob("*.py")):
        for target in _imports(path):
            f = _file_of(target)
            if f is not None and f != path:
                edges.setdefault((str(path.relative_to(SRC)), str(f.relative_to(SRC))), set())
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


def test_no_import_cycle_between_files() -> None:
    """No file imports a file that imports it back, through any chain (a package's ``__init__``
    that imports its modules counts: they take what they share from a module of their own)."""
    assert not _cycles(file_edges())


def test_every_import_points_down_the_layers() -> None:
    edges = import_edges()
    unknown = sorted({p for e in edges for p in e} - set(LEVEL))
    assert not unknown, f"parts without a layer (add them to LAYERS): {unknown}"
    upward = [f"{a} -> {b}: {sorted(files)}" for (a, b), files in sorted(edges.items()) if LEVEL[a] < LEVEL[b]]
    assert not upward, "imports against the layer order:\n" + "\n".join(upward)


def test_the_check_sees_imports_made_at_run_time() -> None:
    names = {"_M": "vocalbench.components"}
    call = ast.parse('importlib.import_module("vocalbench.scoring.subsets")').body[0].value  # type: ignore[attr-defined]
    assert runtime_targets(call, names) == ["vocalbench.scoring.subsets"]
    entry = ast.parse('f"{_M}.asr:whisper_base"').body[0].value  # type: ignore[attr-defined]
    assert runtime_targets(entry, names) == ["vocalbench.components.asr"]
    # the catalogue is filled from the top: the package facade hands it the scorer modules' import
    assert "__init__.py" in import_edges()[("vocalbench", "scoring")]


def test_the_check_finds_a_cycle_through_a_function_level_import() -> None:
    assert _cycles({("a", "b"): set(), ("b", "c"): set(), ("c", "a"): set(), ("c", "d"): set()}) == [["a", "b", "c"]]
    # systems/cascade.py imports the components layer only inside functions
    assert "systems/cascade.py" in import_edges()[("systems", "components")]


def test_the_judge_sits_between_components_and_scoring() -> None:
    edges = import_edges()
    assert ("scoring", "judge") in edges and ("judge", "components") in edges
    assert not [e for e in edges if e[0] == "judge" and e[1] == "scoring"], "the judge imports scoring's engine"
    # the text normalisers and statistics are top-level leaves the judge may use
    assert "judge/check.py" in edges[("judge", "stats")]
