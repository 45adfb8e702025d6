"""Stores and servers for the viewer's tests: the demo's store, a generated store of realistic records
written through ``SQLiteSink`` (entities, models, versions, failures, judge costs, two evaluations, a
run whose output is a script tag), a store of two scorer versions with people's labels (SQLite and
PostgreSQL), uvicorn on a free port, and Debian's Chromium through Playwright."""

from __future__ import annotations

import os
import random
import shutil
import socket
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from agentevals import ScoreResult
from agentevals._store._catalog_tables import DropCount, ScorerInfo
from agentevals._support._sync import run_sync
from agentevals.results import JudgeCall, ScoreFailure, ScoreSkipped
from agentevals.sinks import SQLiteSink

CHROMIUM = "/usr/bin/chromium"
OUTPUT = Path(__file__).parent / "output"
XSS = "<script>alert(1)</script>"
XSS_RUN = "run-xss"
NOW = datetime(2026, 3, 31, 12, 0, tzinfo=UTC)


def _messages(question: str, answer: str, tool: str, failed: bool) -> tuple[Any, Any]:
    call = {
        "tool_call_id": "call-1",
        "tool_name": tool,
        "args": {"query": question},
        "result": None if failed else f"{tool} says: {answer}",
        "state": "error" if failed else "result",
        "error": "TimeoutError: the tool took too long" if failed else None,
        "duration_ms": 42.5,
    }
    input_ = {
        "system_messages": [{"role": "system", "content": "You are a support agent."}],
        "input_messages": [{"role": "user", "content": question}],
    }
    output = [
        {"role": "assistant", "content": "", "tool_invocations": [call]},
        {"role": "assistant", "content": answer},
    ]
    return input_, output


def generated_records(runs: int = 1500, seed: int = 7) -> list[Any]:
    """``runs`` runs over 30 days, each scored by three scorers (one an LLM judge with tokens and
    cost); the last 200 runs are two evaluations where B scores the same items lower."""
    rng = random.Random(seed)
    records: list[Any] = []
    entities = ["support_agent", "billing_agent", "search_chain"]
    for n in range(runs):
        created = NOW - timedelta(minutes=(runs - n) * 30 * 24 * 60 / runs)
        entity = entities[n % 3]
        item = n % 100
        eval_id = None
        if n >= runs - 200:
            eval_id = "eval-a" if n < runs - 100 else "eval-b"
        question = f"How do I reset my password, case {item}?"
        failed_tool = n % 37 == 0
        input_, output = _messages(question, "Open settings, then security.", "kb_search", failed_tool)
        common = {
            "run_id": f"run-{n:05d}",
            "entity": entity,
            "input": input_,
            "output": output,
            "context": [f"Passwords are reset under Settings › Security (doc {item})."],
            "ground_truth": "Open settings, then security.",
            "created_at": created,
            "eval_id": eval_id,
            "source": "live",
            "run_duration_ms": 800.0 + n % 50,
            "metadata": {
                "models": ["gpt-4o-mini" if n % 2 else "claude-haiku"],
                "usage": {"input_tokens": 90},
            },
        }
        drift = 0.15 if eval_id == "eval-b" else 0.0
        quality = max(0.0, min(1.0, rng.gauss(0.78 - drift - (0.1 if entity == "search_chain" else 0), 0.15)))
        records.append(
            ScoreResult(
                scorer_id="exact_match",
                scorer_name="Exact match",
                score=float(quality > 0.6),
                reason="matches" if quality > 0.6 else "differs",
                scorer_version="1",
                **common,
            )
        )
        if n % 41 == 0:
            records.append(
                ScoreFailure(
                    scorer_id="faithfulness",
                    scorer_name="Faithfulness",
                    scorer_version="2",
                    error_type="JudgeTimeout",
                    error_message="the judge did not answer in 30 s",
                    failed_step="analyze",
                    **common,
                )
            )
        else:
            records.append(
                ScoreResult(
                    scorer_id="faithfulness",
                    scorer_name="Faithfulness",
                    score=round(quality, 3),
                    reason=f"{round(quality * 5)} of 5 claims are supported by the context",
                    scorer_version="2" if n > runs // 2 else "1",
                    analyze_prompt=f"List the claims of the answer to: {question}",
                    analyze_step_result={
                        "claims": ["open settings", "then security"],
                        "verdicts": ["yes", "yes"],
                    },
                    judge_calls=[
                        JudgeCall(
                            step="analyze",
                            model="openai/gpt-4o-mini",
                            prompt_tokens=300,
                            completion_tokens=40,
                            cost_usd=0.00012,
                        )
                    ],
                    **common,
                )
            )
        if n % 10 == 0:
            records.append(
                ScoreSkipped(
                    scorer_id="tone",
                    scorer_name="Tone",
                    skip_reason="no_output",
                    reason="the run has no text output",
                    **common,
                )
            )
        else:
            records.append(
                ScoreResult(
                    scorer_id="tone",
                    scorer_name="Tone",
                    score=round(rng.uniform(0.5, 1), 3),
                    reason="calm and polite",
                    **common,
                )
            )
    records.append(
        ScoreResult(
            scorer_id="exact_match",
            scorer_name="Exact match",
            score=0.0,
            reason=XSS,
            run_id=XSS_RUN,
            entity="support_agent",
            input=XSS,
            output=XSS,
            context=[XSS],
            created_at=NOW - timedelta(hours=1),
            source="live",
            metadata={"models": [XSS]},
        )
    )
    return records


def write_store(path: Path, records: list[Any]) -> Path:
    async def write() -> None:
        sink = SQLiteSink(path)
        try:
            for start in range(0, len(records), 500):
                await sink.write(records[start : start + 500])
        finally:
            await sink.close()

    run_sync(write())  # a loop may be running already (Playwright's sync API)
    return path


#: The live engine keeps 0.7 for faithfulness and a maximum for tone; evaluation eval-b its own 0.9.
CATALOG = [
    ScorerInfo("faithfulness", "Faithfulness", "2", "live", threshold_min=0.7),
    ScorerInfo("tone", "Tone", None, "live", threshold_max=0.8),
    ScorerInfo("faithfulness", "Faithfulness", "2", "eval", eval_id="eval-b", threshold_min=0.9),
]
#: Drops in two hours of two entities (the ``''`` rows count the runs themselves).
DROPS = [
    DropCount(
        (NOW - timedelta(days=2)).strftime("%Y-%m-%dT%H"), "support_agent", "faithfulness", "overflow", 4
    ),
    DropCount((NOW - timedelta(days=2)).strftime("%Y-%m-%dT%H"), "support_agent", "", "overflow", 4),
    DropCount(
        (NOW - timedelta(days=20)).strftime("%Y-%m-%dT%H"), "billing_agent", "faithfulness", "evicted", 3
    ),
    DropCount((NOW - timedelta(days=20)).strftime("%Y-%m-%dT%H"), "billing_agent", "tone", "evicted", 2),
    DropCount((NOW - timedelta(days=20)).strftime("%Y-%m-%dT%H"), "billing_agent", "", "evicted", 3),
]
REPLY = f'{{"verdicts": ["yes"], "note": "{XSS}"}}'


def catalog_records() -> list[Any]:
    """300 generated runs and one whose judge replies are stored (one with a script tag)."""
    records = generated_records(runs=300)
    records.append(
        ScoreResult(
            scorer_id="faithfulness",
            scorer_name="Faithfulness",
            score=0.4,
            reason="one claim is unsupported",
            run_id="run-replied",
            entity="support_agent",
            input="question",
            output="answer",
            created_at=NOW - timedelta(hours=2),
            source="live",
            analyze_prompt="List the claims.",
            analyze_step_result={"verdicts": ["yes"]},
            generate_score_prompt="Score the claims.",
            judge_replies={"analyze": REPLY, "generate_score": "0.4"},
        )
    )
    return records


#: The one hour a store of :func:`hour_records` holds (UTC), and its runs.
HOUR = NOW - timedelta(hours=2)
HOUR_RUNS = 30


def hour_records(runs: int = HOUR_RUNS) -> list[Any]:
    """A store's first hour: ``runs`` runs from :data:`HOUR` on, each scored by a code scorer
    (``exact_match``, 0 or 1), an LLM judge with tokens and cost (``faithfulness``, scores in every
    bar of the histogram), a code scorer whose score is the same count outside 0..1 (``tool_calls``,
    2) and a judge that timed out every time (``context_recall``)."""
    records: list[Any] = []
    for n in range(runs):
        common = {
            "run_id": f"hour-{n:02d}",
            "entity": "support_agent",
            "input": f"question {n}",
            "output": f"answer {n}",
            "created_at": HOUR + timedelta(minutes=5 + n * 50 / runs),
            "source": "live",
        }
        records.append(
            ScoreResult(scorer_id="exact_match", scorer_name="Exact match", score=float(n % 3 > 0), **common)
        )
        call = JudgeCall(
            step="analyze",
            model="openai/gpt-4o-mini",
            prompt_tokens=300,
            completion_tokens=40,
            cost_usd=0.0001 + n * 1e-6,
        )
        records.append(
            ScoreResult(
                scorer_id="faithfulness",
                scorer_name="Faithfulness",
                score=round((n * 7 % 20) / 20 + 0.02, 2),  # 30 runs: one or two in each 0.05
                judge_calls=[call],
                **common,
            )
        )
        records.append(ScoreResult(scorer_id="tool_calls", scorer_name="Tool calls", score=2.0, **common))
        records.append(
            ScoreFailure(
                scorer_id="context_recall",
                scorer_name="Context recall",
                error_type="JudgeTimeout",
                error_message="the judge did not answer in 30 s",
                **common,
            )
        )
    return records


async def write_catalog(sink: Any) -> None:
    try:
        await sink.write_scorers(CATALOG)
        await sink.write_drops(DROPS)
    finally:
        await sink.close()


@pytest.fixture(scope="session")
def catalog_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A store of :func:`catalog_records` with the scorers' thresholds and the engine's drops."""
    path = write_store(tmp_path_factory.mktemp("catalog") / "catalog.db", catalog_records())
    run_sync(write_catalog(SQLiteSink(path)))
    return path


@pytest.fixture(scope="session")
def generated_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_store(tmp_path_factory.mktemp("view") / "generated.db", generated_records())


@pytest.fixture(scope="session")
def hour_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A store of :func:`hour_records`: one hour of data."""
    return write_store(tmp_path_factory.mktemp("hour") / "hour.db", hour_records())


@pytest.fixture(scope="session")
def demo_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The store ``agentevals demo`` writes (its LangChain agent, scored live, offline judge)."""
    from agentevals_langchain.demo import main

    path = tmp_path_factory.mktemp("demo") / "agentevals.db"
    assert main(["--db", str(path), "--quiet"]) == 0
    return path


class Server:
    """uvicorn serving the viewer's app in a thread on a free loopback port."""

    def __init__(self, store: Path) -> None:
        import uvicorn

        from agentevals._view._app import create_app

        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = s.getsockname()[1]
        config = uvicorn.Config(create_app(store), host="127.0.0.1", port=self.port, log_level="warning")
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def __enter__(self) -> Server:
        self.thread.start()
        deadline = time.monotonic() + 30
        while not self.server.started:
            if time.monotonic() > deadline or not self.thread.is_alive():
                raise RuntimeError("the viewer's server did not start")
            time.sleep(0.05)
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=10)


@pytest.fixture(scope="session")
def demo_server(demo_store: Path) -> Iterator[Server]:
    with Server(demo_store) as server:
        yield server


@pytest.fixture(scope="session")
def generated_server(generated_store: Path) -> Iterator[Server]:
    with Server(generated_store) as server:
        yield server


@pytest.fixture(scope="session")
def hour_server(hour_store: Path) -> Iterator[Server]:
    with Server(hour_store) as server:
        yield server


@pytest.fixture(scope="session")
def catalog_server(catalog_store: Path) -> Iterator[Server]:
    with Server(catalog_store) as server:
        yield server


class ViewCommand:
    """``agentevals view ARGS`` run as a command on a free port of 127.0.0.1 until leaving the block;
    ``output`` is what it printed."""

    def __init__(self, *args: str) -> None:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = s.getsockname()[1]
        self.command = [sys.executable, "-m", "agentevals.cli", "view", *args, "--port", str(self.port)]
        self.output = ""

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def __enter__(self) -> ViewCommand:
        import httpx

        self.process = subprocess.Popen(
            self.command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        deadline = time.monotonic() + 60
        while True:
            assert self.process.poll() is None, self.process.communicate()
            try:
                httpx.get(self.url + "/static/app.css", timeout=5)
                return self
            except httpx.TransportError:
                assert time.monotonic() < deadline, "agentevals view did not start"
                time.sleep(0.2)

    def __exit__(self, *exc: object) -> None:
        self.process.terminate()
        self.output, _ = self.process.communicate(timeout=30)


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """Debian's Chromium driven by Playwright, for the tests of one module. Skips with the reason when it
    is missing, except under ``CI=true``, where a missing browser fails the test (``.ci/run`` installs
    it). Playwright's sync API leaves its event loop marked as running on the main thread between its
    calls (it runs the loop in a greenlet it switches out of), so while it lives no other loop can start
    there: it is stopped with its module, before any async test of another module runs."""
    reason = None
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        reason = "playwright is not installed (uv sync installs the dev group)"
    if reason is None and not (Path(CHROMIUM).exists() or shutil.which("chromium")):
        reason = f"no Chromium at {CHROMIUM} (apt-get install -y chromium)"
    if reason is not None:
        if os.environ.get("CI"):
            pytest.fail(reason)
        pytest.skip(reason)
    OUTPUT.mkdir(exist_ok=True)
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        try:
            yield chromium
        finally:
            chromium.close()


#: When the labelled store's ``helpfulness`` records start: version v1 first, v2 from ten days on.
LABELLED_START = NOW - timedelta(days=20)
V2_START = LABELLED_START + timedelta(days=10, hours=5, minutes=30)
#: ``helpfulness`` v2 runs ``h0`` … ``h79``: the judge passes the even ones (0.9) and fails the odd (0.1).
V2_RUNS = 80
#: Of those, the runs people labelled pass/fail: all but h0 and h2 as the judge did, h1 passed.
LABELLED_RUNS = 70
#: Runs people labelled with a score, and the scores they gave.
SCORE_LABELS = {"h70": 0.8, "h71": 0.3, "h72": 0.6, "h73": 0.2, "h74": 0.4}


def labelled_records() -> list[Any]:
    """``helpfulness`` v1 (20 runs ``old0`` …, evaluation ``eval-old``) then v2 (:data:`V2_RUNS` runs,
    evaluation ``eval-new``, half of them of agent ``billing_agent``), and ``tone`` (no version) on
    every run."""
    records: list[Any] = []
    for n in range(20):
        common = {
            "run_id": f"old{n}",
            "entity": "support_agent",
            "input": f"old question {n}",
            "output": f"old answer {n}",
            "created_at": LABELLED_START + timedelta(hours=n),
            "eval_id": "eval-old",
            "source": "eval",
        }
        records.append(
            ScoreResult(
                scorer_id="helpfulness", scorer_name="Helpfulness", scorer_version="v1", score=0.7, **common
            )
        )
        records.append(ScoreResult(scorer_id="tone", scorer_name="Tone", score=0.8, **common))
    for n in range(V2_RUNS):
        common = {
            "run_id": f"h{n}",
            "entity": "support_agent" if n < V2_RUNS // 2 else "billing_agent",
            "input": f"question {n}",
            "output": f"answer {n}",
            "created_at": V2_START + timedelta(hours=n),
            "eval_id": "eval-new",
            "source": "eval",
        }
        records.append(
            ScoreResult(
                scorer_id="helpfulness",
                scorer_name="Helpfulness",
                scorer_version="v2",
                score=0.9 if n % 2 == 0 else 0.1,
                reason="helps" if n % 2 == 0 else "does not help",
                **common,
            )
        )
        records.append(ScoreResult(scorer_id="tone", scorer_name="Tone", score=0.8, **common))
    return records


def add_labels(address: str, table: str) -> None:
    """People's labels of ``helpfulness`` (pass/fail on :data:`LABELLED_RUNS` runs, scores on
    :data:`SCORE_LABELS`) by ann, and one label of a name no scorer has."""
    from agentevals.evals import Labels

    with Labels(address, table=table) as labels:
        for n in range(LABELLED_RUNS):
            passed = (n % 2 == 0) != (n in (0, 1, 2))
            labels.add(f"h{n}", "helpfulness", "pass" if passed else "fail", labeller="ann", note=f"note {n}")
        for run_id, value in SCORE_LABELS.items():
            labels.add(run_id, "helpfulness", value, labeller="bob")
        labels.add("h3", "helpful", True, labeller="ann")


async def drop_postgres_store(url: str, table: str) -> None:
    import psycopg

    from agentevals._store._row import tables
    from agentevals._store._schema_check import store_tables

    async with await psycopg.AsyncConnection.connect(url, autocommit=True) as conn:
        for name in store_tables(tables(table)):
            await conn.execute(f"DROP TABLE IF EXISTS {name} CASCADE")
        for name in ("rollup", "bins"):
            for event in ("insert", "update", "delete"):
                await conn.execute(f"DROP FUNCTION IF EXISTS {table}_{name}_{event}()")


@pytest.fixture(params=["sqlite", "postgres"])
def labelled_store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[str, str]]:
    """``(address, table)`` of a new store of :func:`labelled_records`, without labels, on SQLite or on
    PostgreSQL (dropped afterwards)."""
    from agentevals.sinks._open import sink_for

    table = f"agentevals_view_{uuid.uuid4().hex[:10]}"
    postgres = request.param == "postgres"
    address = request.getfixturevalue("postgres").url if postgres else str(tmp_path / "labelled.db")

    async def write() -> None:
        sink: Any = sink_for(address, table=table)
        try:
            await sink.write(labelled_records())
        finally:
            await sink.close()

    run_sync(write())
    try:
        yield address, table
    finally:
        if postgres:
            run_sync(drop_postgres_store(address, table))
