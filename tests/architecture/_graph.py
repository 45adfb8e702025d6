"""The package's import graph, read from the source (no import runs), for the architecture tests."""

from __future__ import annotations

import ast
from collections.abc import Iterator, Mapping, Set
from pathlib import Path


def module_name(path: Path, root: Path) -> str:
    """``agentevals/_store/_row.py`` -> ``agentevals._store._row`` (``root`` holds the package)."""
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def modules(package: Path) -> dict[str, Path]:
    """Every module of ``package`` by its dotted name."""
    return {module_name(path, package.parent): path for path in sorted(package.rglob("*.py"))}


def imports(path: Path, root: Path) -> Iterator[tuple[int, str]]:
    """(line, imported name) for each import in ``path``, lazy (in a function) and type-only ones too:
    an import moved into a function to dodge a cycle is still a cycle. Relative imports resolved.
    ``from a import b`` yields ``a`` and ``a.b`` (``b`` may be a module)."""
    tree = ast.parse(path.read_text(), str(path))
    name = module_name(path, root)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            yield node.lineno, base
            for alias in node.names:
                yield node.lineno, f"{base}.{alias.name}"


def module_edges(package: Path) -> dict[str, dict[str, int]]:
    """For each module, the modules of ``package`` it imports (with the first line that does).
    ``from pkg import mod`` counts as importing ``pkg.mod`` only, not ``pkg``'s ``__init__``."""
    found = modules(package)
    edges: dict[str, dict[str, int]] = {}
    for name, path in found.items():
        targets: dict[str, int] = {}
        seen = list(imports(path, package.parent))
        submodules = {imported for _, imported in seen if imported in found}
        for line, imported in seen:
            if imported not in found or imported == name or name.startswith(imported + "."):
                continue
            if any(sub.startswith(imported + ".") for sub in submodules):
                continue  # `from agentevals import _renamed` imports the module, not the package
            targets.setdefault(imported, line)
        edges[name] = targets
    return edges


def room(module: str, package: Path) -> str:
    """The folder a module lives in (``agentevals._scoring._judge``). A module at the package root is a
    room of its own (``agentevals.cli``), and so is each ``__init__``, the face a folder shows to the
    rooms above (``agentevals.scorers.__init__``; the package's own: ``agentevals``)."""
    parts = module.split(".")
    if package.parent.joinpath(*parts).is_dir():
        return module if len(parts) == 1 else f"{module}.__init__"
    if len(parts) == 2:
        return module
    return ".".join(parts[:-1])


def room_edges(package: Path) -> dict[str, dict[str, str]]:
    """Imports between rooms: for each pair, one example ``module:line -> module``."""
    edges: dict[str, dict[str, str]] = {}
    for source, targets in module_edges(package).items():
        here = room(source, package)
        for target, line in targets.items():
            there = room(target, package)
            if there != here:
                edges.setdefault(here, {}).setdefault(there, f"{source}:{line} -> {target}")
    return edges


def cycles(graph: Mapping[str, Set[str]]) -> list[list[str]]:
    """Every cycle a depth-first walk of ``graph`` finds (each as its nodes, the first repeated last)."""
    found: list[list[str]] = []
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(node: str) -> None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                found.append([*path[path.index(nxt) :], nxt])
            elif nxt not in state:
                visit(nxt)
        path.pop()
        state[node] = 2

    for node in sorted(graph):
        if node not in state:
            visit(node)
    return found
