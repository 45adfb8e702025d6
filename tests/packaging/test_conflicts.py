"""Another distribution sharing the ``agentevals`` package: importing ours or an integration says so.

Each case lays out a site directory in tmp_path (our package copied, a fake ``agentevals-0.0.9``
distribution beside it) and imports from a subprocess where it is the only place ``agentevals`` is.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import agentevals
from agentevals import _conflicts

PACKAGE = Path(agentevals.__file__).parent
FIX = "pip uninstall agentevals agentevals-cli && pip install --force-reinstall agentevals-core"


def fake_distribution(site: Path, dir_name: str, record: str = "agentevals/__init__.py,,\n") -> None:
    """A ``.dist-info`` directory as pip leaves it: METADATA and RECORD."""
    meta = site / dir_name
    meta.mkdir()
    name, _, version = dir_name.removesuffix(".dist-info").partition("-")
    (meta / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n")
    (meta / "RECORD").write_text(record)


def our_package(site: Path) -> Path:
    target = site / "agentevals"
    shutil.copytree(PACKAGE, target, ignore=shutil.ignore_patterns("__pycache__"))
    return target


def import_in(site: Path, module: str) -> subprocess.CompletedProcess[str]:
    """Import ``module`` in a subprocess where ``agentevals`` can come only from ``site`` (the
    workspace's editable install of it is taken off ``sys.path``; the integrations stay)."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["PYTHONPATH"] = str(site)
    code = f"import sys; sys.path.remove({str(PACKAGE.parent)!r}); import {module}"
    return subprocess.run(
        [sys.executable, "-c", code],
        cwd=site,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def assert_conflict_error(result: subprocess.CompletedProcess[str], *names: str) -> None:
    assert result.returncode != 0
    last = result.stderr.strip().splitlines()[-1]
    assert last.startswith("ImportError: ")
    for name in names:
        assert name in last
    assert FIX in last


def test_finds_conflicting_distributions_by_their_metadata_directories(tmp_path: Path) -> None:
    fake_distribution(tmp_path, "agentevals-0.0.9.dist-info")
    fake_distribution(tmp_path, "agentevals_cli-1.2.0.dist-info")
    fake_distribution(tmp_path, "agentevals_core-0.1.0.dist-info")  # ours, and the integrations
    fake_distribution(tmp_path, "agentevals_langchain-0.1.0.dist-info", "agentevals_langchain/x.py,,\n")
    (tmp_path / "agentevals.egg-info").mkdir()  # a legacy install without a file list: assumed to conflict

    assert _conflicts.conflicting_distributions(str(tmp_path)) == [
        "agentevals",
        "agentevals 0.0.9",
        "agentevals-cli 1.2.0",
    ]


def test_a_distribution_of_that_name_without_the_package_is_no_conflict(tmp_path: Path) -> None:
    fake_distribution(tmp_path, "agentevals_cli-2.0.dist-info", "agentevals_cli/__init__.py,,\n")
    egg = tmp_path / "agentevals-0.5-py3.11.egg-info"
    egg.mkdir()
    (egg / "top_level.txt").write_text("agentevals_tools\n")

    assert _conflicts.conflicting_distributions(str(tmp_path)) == []
    assert _conflicts.conflicting_distributions(str(tmp_path / "missing")) == []


def test_importing_agentevals_fails_when_another_distribution_shares_the_package(tmp_path: Path) -> None:
    our_package(tmp_path)
    fake_distribution(tmp_path, "agentevals-0.0.9.dist-info")

    result = import_in(tmp_path, "agentevals")

    assert_conflict_error(result, "agentevals 0.0.9", str(tmp_path))


def test_our_package_alone_imports(tmp_path: Path) -> None:
    our_package(tmp_path)
    fake_distribution(tmp_path, "agentevals_core-0.1.0.dist-info")

    result = import_in(tmp_path, "agentevals")

    assert result.returncode == 0, result.stderr


@pytest.mark.parametrize("integration", ["agentevals_langchain", "agentevals_litellm", "agentevals_otel"])
def test_an_integration_fails_when_the_other_projects_init_replaced_ours(
    tmp_path: Path, integration: str
) -> None:
    package = our_package(tmp_path)
    (package / "__init__.py").write_text('"""Another project\'s agentevals."""\n')  # installed after ours
    fake_distribution(tmp_path, "agentevals-0.0.9.dist-info")

    result = import_in(tmp_path, integration)

    assert_conflict_error(result, "agentevals 0.0.9")


@pytest.mark.parametrize("integration", ["agentevals_langchain", "agentevals_litellm", "agentevals_otel"])
def test_an_integration_fails_when_another_projects_package_shadows_ours(
    tmp_path: Path, integration: str
) -> None:
    (tmp_path / "agentevals").mkdir()  # earlier on sys.path than ours, and none of our files
    (tmp_path / "agentevals" / "__init__.py").write_text("")
    fake_distribution(tmp_path, "agentevals_cli-1.0.dist-info")

    result = import_in(tmp_path, integration)

    assert_conflict_error(result, integration.replace("_", "-"), "agentevals-cli")


def test_an_integration_fails_when_uninstalling_the_other_project_removed_our_init(tmp_path: Path) -> None:
    (our_package(tmp_path) / "__init__.py").unlink()  # `import agentevals` is now a namespace package

    result = import_in(tmp_path, "agentevals_litellm")

    assert_conflict_error(result, "has no __init__.py")
