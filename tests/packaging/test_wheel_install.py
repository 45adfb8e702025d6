"""A new user's install: the built wheels in a fresh virtual environment, used from outside the repo.

Builds every wheel of the workspace, creates a venv with ``python -m venv``, installs
``agentevals-core[langchain,litellm]`` with the venv's own pip (our wheels from ``--find-links``,
their dependencies from the package index configured on this machine), then runs the README's
Quickstart and ``agentevals demo`` from a temporary directory with no access to the workspace and
no network. Slow (it installs LangChain and LiteLLM): deselect with ``-m "not slow"``. It skips only
when the package index cannot be reached, and never under ``CI``.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
EXTRAS = "langchain,litellm"


@dataclass(frozen=True)
class Venv:
    root: Path
    bin: Path
    version: str  # of the wheels built from the workspace

    @property
    def python(self) -> Path:
        return self.bin / ("python.exe" if os.name == "nt" else "python")


def index_unreachable() -> str | None:
    """Why the package index cannot be reached, or None when it can."""
    url = os.environ.get("PIP_INDEX_URL", "https://pypi.org/simple/").rstrip("/") + "/pip/"
    try:
        with urllib.request.urlopen(url, timeout=10):
            return None
    except OSError as err:
        return f"package index {url} unreachable ({err})"


def run(args: list[str | Path], *, timeout: float, **kwargs: object) -> subprocess.CompletedProcess[str]:
    result = subprocess.run(
        [str(a) for a in args],
        capture_output=True,
        text=True,
        timeout=timeout,
        **kwargs,  # type: ignore[call-overload]
    )
    if result.returncode != 0:
        pytest.fail(
            f"{' '.join(map(str, args))} exited {result.returncode}\n"
            f"--- stdout\n{result.stdout[-5000:]}\n--- stderr\n{result.stderr[-5000:]}"
        )
    return result


def build_wheels(out: Path) -> None:
    uv = os.environ.get("UV") or shutil.which("uv")
    if uv is None:
        pytest.fail("uv is needed to build the workspace's wheels (pip install uv)")
    run([uv, "build", "--all-packages", "--wheel", "--quiet", "-o", out], cwd=ROOT, timeout=600)


def offline_env(venv: Venv) -> dict[str, str]:
    """The environment of a user's shell in the venv, with nothing that reaches the network or the
    workspace: no PYTHONPATH, proxies, API keys, tracing or judge model; LiteLLM's bundled price list."""
    dropped_prefixes = ("AGENTEVALS_", "LANGCHAIN_", "LANGSMITH_", "LITELLM_", "OPENAI_", "ANTHROPIC_")
    env = {
        key: value
        for key, value in os.environ.items()
        if key not in ("PYTHONPATH", "PYTHONHOME", "PYTHONSTARTUP", "VIRTUAL_ENV", "UV")
        and not key.upper().endswith(("_PROXY", "_API_KEY"))
        and not key.upper().startswith(dropped_prefixes)
    }
    env["PATH"] = f"{venv.bin}{os.pathsep}{env.get('PATH', '')}"
    env["VIRTUAL_ENV"] = str(venv.root)
    env["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"
    env["NO_PROXY"] = env["no_proxy"] = "127.0.0.1,localhost"
    return env


@pytest.fixture(scope="module")
def venv(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Venv]:
    if not os.environ.get("CI") and (reason := index_unreachable()):
        pytest.skip(reason)
    base = tmp_path_factory.mktemp("wheel_install")
    wheels = base / "wheels"
    build_wheels(wheels)
    built = {path.name.split("-")[0]: path.name.split("-")[1] for path in wheels.glob("*.whl")}
    integrations = {"agentevals_langchain", "agentevals_litellm", "agentevals_otel"}
    assert set(built) == {"agentevals_core", *integrations}, built
    run([sys.executable, "-m", "venv", base / "venv"], timeout=300)
    bin_dir = base / "venv" / ("Scripts" if os.name == "nt" else "bin")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    requirement = f"agentevals-core[{EXTRAS}]=={built['agentevals_core']}"  # not a newer one on the index
    run(
        [bin_dir / "python", "-m", "pip", "install", "--quiet", "--find-links", wheels, requirement],
        cwd=base,
        env=env,
        timeout=1500,
    )
    yield Venv(root=base / "venv", bin=bin_dir, version=built["agentevals_core"])


@pytest.fixture
def user_dir(tmp_path: Path) -> Path:
    """A working directory outside the repository."""
    assert ROOT not in tmp_path.parents
    return tmp_path


def test_the_extras_install_our_wheels_into_the_venv(venv: Venv, user_dir: Path) -> None:
    code = (
        "import importlib.metadata as md, agentevals, agentevals_langchain, agentevals_litellm\n"
        "for module in (agentevals, agentevals_langchain, agentevals_litellm):\n"
        "    print(module.__file__)\n"
        "for name in ('agentevals-core', 'agentevals-langchain', 'agentevals-litellm'):\n"
        "    print(md.version(name))\n"
    )
    result = run([venv.python, "-c", code], cwd=user_dir, env=offline_env(venv), timeout=300)

    *files, core, langchain, litellm = result.stdout.split()
    assert all(Path(file).is_relative_to(venv.root) for file in files), files
    assert core == langchain == litellm == venv.version


def quickstart_code() -> str:
    """The first ```python block under README's ``## Quickstart`` heading."""
    text = README.read_text(encoding="utf-8")
    _, found, section = text.partition("\n## Quickstart\n")
    assert found, "README.md has no '## Quickstart' heading"
    section = section.split("\n## ", 1)[0]
    match = re.search(r"^```python\n(.*?)^```", section, re.DOTALL | re.MULTILINE)
    assert match, "README.md's Quickstart has no ```python block"
    return match.group(1)


def test_readme_quickstart_runs_from_the_installed_wheels(venv: Venv, user_dir: Path) -> None:
    script = user_dir / "quickstart.py"
    script.write_text(quickstart_code(), encoding="utf-8")

    result = run([venv.python, script], cwd=user_dir, env=offline_env(venv), timeout=300)

    score_lines = [
        line for line in result.stdout.splitlines() if any(_is_score(token) for token in line.split())
    ]
    assert score_lines, f"no score printed:\n{result.stdout}\n{result.stderr}"


def _is_score(token: str) -> bool:
    try:
        return 0.0 <= float(token) <= 1.0
    except ValueError:
        return False


def test_agentevals_demo_runs_from_the_installed_wheels(venv: Venv, user_dir: Path) -> None:
    agentevals = venv.bin / ("agentevals.exe" if os.name == "nt" else "agentevals")

    result = run([agentevals, "demo"], cwd=user_dir, env=offline_env(venv), timeout=600)

    summary = re.search(r"(\d+) runs, (\d+) scores, (\d+) scorer failures", result.stdout)
    assert summary, f"no summary line:\n{result.stdout}\n{result.stderr}"
    runs, scores, failures = map(int, summary.groups())
    assert runs > 0 and scores > 0 and failures == 0, summary.group(0)
    assert (user_dir / "agentevals.db").exists()
