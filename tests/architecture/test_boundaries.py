"""The package's boundaries: integrations use the public seam only, core imports no integration, and
the core's modules import each other without cycles."""

from __future__ import annotations

from pathlib import Path

from _graph import cycles, imports, module_edges

ROOT = Path(__file__).resolve().parents[2]
CORE = ROOT / "agentevals"
INTEGRATIONS = ROOT / "integrations"
INTEGRATION_PACKAGES = ("agentevals_langchain", "agentevals_litellm", "agentevals_otel")


def test_integrations_import_only_public_names() -> None:
    offenders = [
        f"{path.relative_to(ROOT)}:{line}: {name}"
        for path in INTEGRATIONS.rglob("*.py")
        for line, name in imports(path, ROOT)
        if name.startswith("agentevals.") and any(part.startswith("_") for part in name.split(".")[1:])
    ]
    assert not offenders, "integrations must use agentevals.live and other public modules:\n" + "\n".join(
        offenders
    )


def test_core_imports_no_integration() -> None:
    offenders = [
        f"{path.relative_to(ROOT)}:{line}: {name}"
        for path in CORE.rglob("*.py")
        for line, name in imports(path, ROOT)
        if name.split(".")[0] in INTEGRATION_PACKAGES
    ]
    assert not offenders, "core finds integrations through entry points only:\n" + "\n".join(offenders)


def test_core_modules_import_each_other_without_cycles() -> None:
    graph = {name: set(targets) for name, targets in module_edges(CORE).items()}
    found = cycles(graph)
    assert not found, "import cycles:\n" + "\n".join(" -> ".join(c) for c in found)
