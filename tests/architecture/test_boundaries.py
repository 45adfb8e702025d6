"""The package's boundaries: integrations use the public seam only, core imports no integration, and
the core's modules import each other without cycles."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CORE = ROOT / "agentevals"
INTEGRATIONS = ROOT / "integrations"
INTEGRATION_PACKAGES = ("agentevals_langchain", "agentevals_litellm")


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _imports(path: Path) -> Iterator[tuple[int, str]]:
    """(line, imported module) for each import in ``path``, lazy (in a function) and type-only ones too:
    an import moved into a function to dodge a cycle is still a cycle. Relative imports resolved."""
    tree = ast.parse(path.read_text(), str(path))
    package = _module_name(path).rsplit(".", 0 if path.name == "__init__.py" else 1)[0]
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
            for alias in node.names:  # `from agentevals import _x` imports the module agentevals._x
                yield node.lineno, f"{base}.{alias.name}"


def test_integrations_import_only_public_names() -> None:
    offenders = [
        f"{path.relative_to(ROOT)}:{line}: {name}"
        for path in INTEGRATIONS.rglob("*.py")
        for line, name in _imports(path)
        if name.startswith("agentevals.")
        and any(part.startswith("_") for part in name.split(".")[1:])
        and name != "agentevals._conflicts"  # the packaging check each integration runs first: no API
    ]
    assert not offenders, "integrations must use agentevals.live and other public modules:\n" + "\n".join(
        offenders
    )


def test_core_imports_no_integration() -> None:
    offenders = [
        f"{path.relative_to(ROOT)}:{line}: {name}"
        for path in CORE.rglob("*.py")
        for line, name in _imports(path)
        if name.split(".")[0] in INTEGRATION_PACKAGES
    ]
    assert not offenders, "core finds integrations through entry points only:\n" + "\n".join(offenders)


def test_core_modules_import_each_other_without_cycles() -> None:
    modules = {_module_name(path): path for path in CORE.rglob("*.py")}
    graph = {
        name: {
            imported
            for _, imported in _imports(path)
            if imported in modules and imported != name and not name.startswith(imported + ".")
        }
        for name, path in modules.items()
    }
    cycles: list[list[str]] = []
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(node: str) -> None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                cycles.append([*path[path.index(nxt) :], nxt])
            elif nxt not in state:
                visit(nxt)
        path.pop()
        state[node] = 2

    for node in sorted(graph):
        if node not in state:
            visit(node)
    assert not cycles, "import cycles:\n" + "\n".join(" -> ".join(c) for c in cycles)
