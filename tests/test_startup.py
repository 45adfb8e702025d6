"""Start-up: building an engine, a first eval and a no-op re-score import no more than they use.

Each test runs in a fresh interpreter (this one has imported everything already) and looks at
``sys.modules``; an import watcher records which thread imports LiteLLM.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

from agentevals.sinks import SQLiteSink

#: Records the thread that imports LiteLLM; holds a thread other than the main one until ``RELEASE``
#: is set, so the test sees the state the caller's thread left at a moment of its choosing.
WATCHER = """
import importlib.abc, sys, threading
IMPORTERS = []
RELEASE = threading.Event()

class Watcher(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name == "litellm":
            IMPORTERS.append(threading.current_thread().name)
            if threading.current_thread() is not threading.main_thread():
                RELEASE.wait(120)
        return None

sys.meta_path.insert(0, Watcher())

def judged(i, judge):
    from agentevals import PromptStep, create_scorer
    step = PromptStep(description="score", create_prompt=lambda run, **_: f"score {run.output}")
    return create_scorer(id=f"judged_{i}", judge=judge).generate_score(step)
"""


def run_script(body: str, *, env: dict[str, str] | None = None) -> dict[str, object]:
    """Run ``WATCHER`` + ``body`` in a fresh interpreter; the JSON object it prints last."""
    environ = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    done = subprocess.run(
        [sys.executable, "-c", WATCHER + textwrap.dedent(body)],
        env={**environ, **(env or {})},
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-4000:]
    result: dict[str, object] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def test_an_engine_with_judged_scorers_leaves_litellm_to_a_thread_of_its_own() -> None:
    result = run_script(
        """
        import json, sys, threading
        from agentevals import Run, ScoringEngine
        from agentevals.engine import ExitOptions, ScoringOptions
        from agentevals.sinks import MemorySink
        from agentevals.testing import FakeJudgeServer

        with FakeJudgeServer(responder=lambda request: {"score": 1.0}) as server:
            memory = MemorySink()
            engine = ScoringEngine(
                [judged(i, server.judge()) for i in range(3)],
                sinks=[memory],
                exit=ExitOptions(handle_sigterm=False),
                # Judged scorers wait for the import before their timeouts start.
                scoring=ScoringOptions(timeout=30),
            )
            on_return = "litellm" in sys.modules
            before = list(IMPORTERS)
            RELEASE.set()
            engine.submit(Run(run_id="r1", input="q", output="a"))
            report = engine.shutdown(timeout=120)
        print(json.dumps({
            "on_return": on_return,
            "before": before,
            "importers": IMPORTERS,
            "clean": bool(report),
            "scores": sorted((r.scorer_id, r.outcome, r.score) for r in memory.records),
        }))
        """
    )
    warm_up = "agentevals-litellm-warm-up"
    assert result["on_return"] is False and result["before"] in ([], [warm_up])
    assert result["importers"] == [warm_up]  # a thread of its own, never the caller's nor the loop
    assert result["clean"] and result["scores"] == [[f"judged_{i}", "scored", 1.0] for i in range(3)]


def test_an_engine_refuses_a_missing_key_without_importing_litellm() -> None:
    result = run_script(
        """
        import json, sys
        from agentevals import Judge, ScoringEngine
        from agentevals.engine import ExitOptions
        try:
            judge = Judge(model="openai/gpt-4o-mini")
            ScoringEngine([judged(0, judge)], exit=ExitOptions(handle_sigterm=False))
        except ValueError as err:
            error = str(err)
        else:
            error = None
        print(json.dumps({"error": error, "litellm": "litellm" in sys.modules, "importers": IMPORTERS}))
        """
    )
    assert result["error"] == (
        "scorer 'judged_0' cannot score: judge model 'openai/gpt-4o-mini' needs OPENAI_API_KEY in the "
        "environment (or pass Judge(api_key=...)) (pass check=False to ScoringEngine to skip this check "
        "(e.g. when keys are set later))"
    )
    assert result["litellm"] is False and result["importers"] == []


def test_run_evals_with_a_plain_function_target_does_not_import_langchain() -> None:
    result = run_script(
        """
        import json, sys
        from agentevals import run_evals
        from agentevals.scorers import create_exact_match_scorer

        def shout(text):
            return text.upper()

        result = run_evals(
            data=[{"input": "a", "ground_truth": "A"}, {"input": "b", "ground_truth": "B"}],
            scorers=[create_exact_match_scorer()], target=shout, progress=False,
        )
        print(json.dumps({
            "scores": result.scores,
            "loaded": sorted(m for m in ("langchain_core", "langgraph", "litellm") if m in sys.modules),
        }))
        """
    )
    assert result == {"scores": {"exact_match": 1.0}, "loaded": []}


def test_a_rescore_with_nothing_to_do_does_not_import_litellm(tmp_path: Path) -> None:
    db = tmp_path / "scores.db"
    SQLiteSink(db).check()
    result = run_script(
        f"""
        import json, sys
        from agentevals import Judge
        from agentevals.cli import main
        from agentevals.evals import rescore

        summary = rescore({str(db)!r}, [judged(0, Judge(model="openai/gpt-4o-mini"))], progress=False)
        code = main(["rescore", "--db", {str(db)!r}, "--no-progress",
                     "--scorer", 'answer_relevancy:{{"model": "anthropic/claude-3-5-haiku-latest"}}'])
        print(json.dumps({{"runs": summary.runs, "code": code, "litellm": "litellm" in sys.modules}}))
        """,
        env={"OPENAI_API_KEY": "sk-test", "ANTHROPIC_API_KEY": "sk-ant-test"},
    )
    assert result == {"runs": 0, "code": 0, "litellm": False}


def test_a_worker_with_judged_scorers_imports_litellm_at_start(tmp_path: Path) -> None:
    result = run_script(
        f"""
        import json, sys, threading
        from agentevals import Judge
        from agentevals._engine._config import normalize_scorers
        from agentevals._worker._actor import WorkerApp
        from agentevals._worker._setup import WorkerConfig

        RELEASE.set()
        config = WorkerConfig(
            broker="redis://127.0.0.1:6379/0", scorers="-", sinks=({str(tmp_path / "s.db")!r},),
            queue="agentevals_test_startup",
        )
        app = WorkerApp(config, normalize_scorers([judged(0, Judge(model="openai/gpt-4o-mini"))]))
        for thread in threading.enumerate():
            if thread.name == "agentevals-litellm-warm-up":
                thread.join(120)
        app.broker.close()
        print(json.dumps({{"litellm": "litellm" in sys.modules, "importers": IMPORTERS}}))
        """,
        env={"OPENAI_API_KEY": "sk-test"},
    )
    assert result == {"litellm": True, "importers": ["agentevals-litellm-warm-up"]}


def test_the_engine_loop_answers_a_flush_while_litellm_is_imported() -> None:
    result = run_script(
        """
        import json
        from agentevals import ScoringEngine
        from agentevals.engine import ExitOptions
        from agentevals.testing import FakeJudgeServer

        with FakeJudgeServer(responder=lambda request: {"score": 1.0}) as server:
            no_sigterm = ExitOptions(handle_sigterm=False)
            engine = ScoringEngine([judged(0, server.judge())], sinks=[], exit=no_sigterm)
            flushed = bool(engine.flush(timeout=5))  # the import is held on its thread until RELEASE
            RELEASE.set()
            engine.shutdown(timeout=120)
        print(json.dumps({"flushed": flushed, "importers": IMPORTERS}))
        """
    )
    assert result == {"flushed": True, "importers": ["agentevals-litellm-warm-up"]}
