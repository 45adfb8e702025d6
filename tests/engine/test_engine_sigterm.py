"""SIGTERM (how containers stop a service) flushes the engine, then chains to the previous handler."""

from __future__ import annotations

import re
import signal
import sqlite3
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest
from engine_helpers import length_scorer

from agentevals import ScoringEngine
from agentevals.engine import DeliveryOptions, ExitOptions
from agentevals.sinks import MemorySink

CHILD = Path(__file__).with_name("sigterm_child.py")
RUNS = 10_000

pytestmark = pytest.mark.skipif(not hasattr(signal, "SIGTERM") or sys.platform == "win32", reason="POSIX")


def run_child(tmp_path: Path, mode: str) -> tuple[int, str, str, int]:
    """Start the child, wait for its 10,000 queued runs, SIGTERM it; (returncode, out, err, rows)."""
    db = tmp_path / f"{mode}.db"
    child = subprocess.Popen(
        [sys.executable, str(CHILD), str(db), mode],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert child.stdout is not None
    assert child.stdout.readline().strip() == "ready"
    child.send_signal(signal.SIGTERM)
    out, err = child.communicate(timeout=120)
    rows = 0
    if db.exists():
        with sqlite3.connect(db) as conn:
            rows = int(conn.execute("SELECT count(*) FROM agentevals_scores").fetchone()[0])
    return child.returncode, out, err, rows


def counts(text: str, name: str) -> int:
    found = re.findall(rf"\b{name}=(\d+)", text)
    assert found, f"no {name}= in {text[-2000:]!r}"
    return int(found[-1])


def test_sigterm_with_the_default_handler_flushes_then_ends_the_process(tmp_path: Path) -> None:
    code, _, err, rows = run_child(tmp_path, "default")
    print(f"SIGTERM, default handler: exit {code}, {rows} rows; {err.strip().splitlines()[-1]}")
    assert code == -signal.SIGTERM  # still killed by SIGTERM, as without the engine
    assert rows == RUNS
    assert counts(err, "scored") == counts(err, "written") == RUNS
    assert counts(err, "abandoned") == counts(err, "lost") == counts(err, "dead_lettered") == 0


def test_sigterm_runs_the_applications_handler_after_the_flush(tmp_path: Path) -> None:
    code, out, _, rows = run_child(tmp_path, "app")
    print(f"SIGTERM, app handler: exit {code}, {rows} rows; {out.strip()}")
    assert code == 0 and "app handler called" in out
    assert counts(out, "finished") == counts(out, "scored") == RUNS  # flushed before the app's handler
    assert counts(out, "queued") == 0
    assert rows == RUNS


def test_handle_sigterm_false_leaves_sigterm_alone(tmp_path: Path) -> None:
    code, _, _, rows = run_child(tmp_path, "off")
    assert code == -signal.SIGTERM and rows == 0


def test_the_handler_is_installed_on_the_main_thread_and_removed_at_shutdown(dead_letter: Path) -> None:
    before = signal.getsignal(signal.SIGTERM)
    engine = ScoringEngine(
        length_scorer(), sinks=[MemorySink()], delivery=DeliveryOptions(dead_letter=dead_letter)
    )
    installed = signal.getsignal(signal.SIGTERM)
    assert installed is not before and callable(installed)
    assert engine.shutdown(timeout=5)
    assert signal.getsignal(signal.SIGTERM) is before

    off = ScoringEngine(
        length_scorer(),
        sinks=[MemorySink()],
        delivery=DeliveryOptions(dead_letter=dead_letter),
        exit=ExitOptions(handle_sigterm=False),
    )
    assert signal.getsignal(signal.SIGTERM) is before
    off.shutdown(timeout=5)

    made: list[Any] = []
    thread = threading.Thread(
        target=lambda: made.append(
            ScoringEngine(
                length_scorer(), sinks=[MemorySink()], delivery=DeliveryOptions(dead_letter=dead_letter)
            )
        )
    )
    thread.start()
    thread.join()
    assert signal.getsignal(signal.SIGTERM) is before  # only the main thread may install handlers
    made[0].shutdown(timeout=5)


def test_a_handler_installed_over_ours_keeps_the_chain(dead_letter: Path) -> None:
    before = signal.getsignal(signal.SIGTERM)
    calls: list[str] = []
    first = ScoringEngine(
        length_scorer(), sinks=[MemorySink()], delivery=DeliveryOptions(dead_letter=dead_letter)
    )
    ours = signal.getsignal(signal.SIGTERM)
    signal.signal(signal.SIGTERM, lambda signum, frame: calls.append("app") or ours(signum, frame))  # type: ignore[operator]
    try:
        first.shutdown(timeout=5)  # ours is not on top: it stays, as a pass-through
        previous_calls: list[int] = []
        assert callable(ours)
        ours.previous = lambda signum, frame: previous_calls.append(signum)  # type: ignore[union-attr]
        signal.raise_signal(signal.SIGTERM)
        assert calls == ["app"] and previous_calls == [signal.SIGTERM]
    finally:
        signal.signal(signal.SIGTERM, before)
