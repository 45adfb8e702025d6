"""The floor plan: each folder one job, imports only downwards, SQL only in the store, a small root.

Each rule is a function over a package directory, run against ``agentevals`` and against a small
package written to a temporary directory that breaks it (so a rule that cannot fail is noticed).
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest
from _graph import cycles, modules, room_edges

PACKAGE = Path(__file__).resolve().parents[2] / "agentevals"

MAX_ROOT_MODULES = 12

SQL = re.compile(
    r"\b(SELECT\s|INSERT\s+INTO|CREATE\s+(TABLE|INDEX|UNIQUE\s+INDEX|TRIGGER|VIEW)|UPDATE\s+\S+\s+SET"
    r"|DELETE\s+FROM|ALTER\s+TABLE|DROP\s+(TABLE|INDEX|TRIGGER))"
)
SQL_HOMES = ("_store/", "_engine/_forward/_spool.py")  # the spool is its own SQLite file

ORDER = ("_support", "_model", "_scoring", "_store", "sinks", "_engine")
"""The lower floors, bottom first: each may import only the floors below it."""
UPPER = ("_trust", "_evals", "_worker", "_view", "scorers", "testing")
FORBIDDEN = {
    # folder: folders it may not import (each covers its sub-folders)
    **{floor: ORDER[i + 1 :] + UPPER for i, floor in enumerate(ORDER)},
    "_engine": UPPER,
    "_trust": ("_evals", "_worker", "_view"),
    "_evals": ("_worker", "_view"),
    "_worker": ("_evals", "_view"),
}
ONLY_THE_CLI_IMPORTS = ("_worker", "_view")


def _top_in(room: str, package: Path) -> str:
    parts = room.split(".")
    return parts[1] if len(parts) > 1 and (package / parts[1]).is_dir() else ""


def sql_outside_the_store(package: Path) -> list[str]:
    """``path:line`` of each string literal holding an SQL statement outside the store."""
    found = []
    for path in modules(package).values():
        relative = path.relative_to(package).as_posix()
        if relative.startswith(SQL_HOMES):
            continue
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and SQL.search(node.value):
                found.append(f"{package.name}/{relative}:{node.lineno}")
    return found


def imports_against_the_order(package: Path) -> list[str]:
    """Each import from a room into a room it may not use, as ``module:line -> module``."""
    found = []
    for source, targets in room_edges(package).items():
        top = _top_in(source, package)
        for target, example in targets.items():
            there = _top_in(target, package)
            against_the_order = there in FORBIDDEN.get(top, ())
            in_the_cli = top == "_cli" or source == f"{package.name}.cli"
            behind_the_cli = there in ONLY_THE_CLI_IMPORTS and not in_the_cli
            if there and there != top and (against_the_order or behind_the_cli):
                found.append(example)
    return sorted(found)


def folder_cycles(package: Path) -> list[str]:
    """Each cycle between rooms (folders, sub-folders and root modules)."""
    graph = {source: set(targets) for source, targets in room_edges(package).items()}
    return [" -> ".join(cycle) for cycle in cycles(graph)]


def root_modules(package: Path) -> list[str]:
    return sorted(path.name for path in package.glob("*.py"))


def test_sql_statements_live_only_in_the_store() -> None:
    assert not sql_outside_the_store(PACKAGE), "SQL belongs in agentevals/_store/:\n" + "\n".join(
        sql_outside_the_store(PACKAGE)
    )


def test_folders_import_only_downwards() -> None:
    offenders = imports_against_the_order(PACKAGE)
    assert not offenders, "imports against the floor plan's order:\n" + "\n".join(offenders)


def test_no_import_cycle_between_folders() -> None:
    found = folder_cycles(PACKAGE)
    assert not found, "import cycles between folders:\n" + "\n".join(found)


def test_the_package_root_holds_at_most_twelve_modules() -> None:
    found = root_modules(PACKAGE)
    assert len(found) <= MAX_ROOT_MODULES, f"{len(found)} modules at the root: {found}"


def _write(root: Path, files: dict[str, str]) -> Path:
    for relative, text in files.items():
        path = root / "agentevals" / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root / "agentevals"


@pytest.fixture
def broken(tmp_path: Path) -> Path:
    """A package that breaks every rule once."""
    return _write(
        tmp_path,
        {
            "__init__.py": "",
            "cli.py": "from agentevals._view import _app\n",
            "_model/__init__.py": "",
            "_model/_run.py": "from agentevals._scoring import _scorer\n",  # _model looks up
            "_scoring/__init__.py": "",
            "_scoring/_scorer.py": "from agentevals._model import _run\n",  # ... and the cycle back
            "_engine/__init__.py": "",
            "_engine/_engine.py": "from agentevals._worker import _actor\n",  # only the CLI runs workers
            "_worker/__init__.py": "",
            "_worker/_actor.py": "",
            "_view/__init__.py": "",
            "_view/_app.py": 'COUNT = "SELECT count(*) FROM scores"\n',  # SQL outside the store
            "_store/__init__.py": "",
            "_store/_reads.py": 'COUNT = "SELECT count(*) FROM scores"\n',
            **{f"m{i}.py": "" for i in range(MAX_ROOT_MODULES)},
        },
    )


def test_the_rules_catch_a_package_that_breaks_them(broken: Path) -> None:
    assert sql_outside_the_store(broken) == ["agentevals/_view/_app.py:1"]
    assert imports_against_the_order(broken) == [
        "agentevals._engine._engine:1 -> agentevals._worker._actor",
        "agentevals._model._run:1 -> agentevals._scoring._scorer",
    ]
    assert folder_cycles(broken) == ["agentevals._model -> agentevals._scoring -> agentevals._model"]
    assert len(root_modules(broken)) == MAX_ROOT_MODULES + 2


def test_the_rules_pass_a_package_that_keeps_them(tmp_path: Path) -> None:
    package = _write(
        tmp_path,
        {
            "__init__.py": "from agentevals._engine import _engine\n",
            "cli.py": "from agentevals._view import _app\nfrom agentevals._worker import _actor\n",
            "_model/__init__.py": "",
            "_model/_run.py": "",
            "_scoring/__init__.py": "",
            "_scoring/_scorer.py": "from agentevals._model import _run\n",
            "_store/__init__.py": "",
            "_store/_x.py": 'COUNT = "SELECT count(*) FROM scores"\nfrom agentevals._model import _run\n',
            "_engine/__init__.py": "",
            "_engine/_engine.py": "from agentevals._scoring import _scorer\nimport agentevals._store._x\n",
            "_worker/__init__.py": "",
            "_worker/_actor.py": "from agentevals._engine import _engine\n",
            "_view/__init__.py": "",
            "_view/_app.py": "from agentevals._store import _x\n",
        },
    )
    assert sql_outside_the_store(package) == []
    assert imports_against_the_order(package) == []
    assert folder_cycles(package) == []
