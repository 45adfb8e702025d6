"""agentevals-core does not depend on LangChain: without it, the core scores runs, builds runs from
OpenAI-style messages and runs evals against plain functions. LangChain is imported only when a user
passes LangChain objects, which means the integration (and so LangChain) is installed."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

SCRIPT = textwrap.dedent(
    """
    import sys

    for name in ("langchain", "langchain_core", "langgraph", "agentevals_langchain"):
        sys.modules[name] = None  # any import of them raises ImportError

    from agentevals import Run, ScoringEngine, create_scorer, run_evals
    from agentevals.sinks import MemorySink

    exact = create_scorer(id="exact").generate_score(
        lambda run, **_: float(run.output_text == run.ground_truth)
    )
    run = Run.from_messages(
        [{"role": "user", "content": "2+2?"}, {"role": "assistant", "content": "4"}], ground_truth="4"
    )
    assert exact.run_sync(run).score == 1.0

    memory = MemorySink()
    engine = ScoringEngine({"exact": exact}, sinks=[memory])
    engine.submit(run)
    engine.flush()
    engine.shutdown()
    assert [r.score for r in memory.records] == [1.0], memory.records

    result = run_evals(
        data=[{"input": "2+2?", "ground_truth": "4"}], scorers=[exact], target=lambda q: "4", progress=False
    )
    assert result.scores == {"exact": 1.0}, result.scores
    assert not any(m.startswith(("langchain", "langgraph")) for m in sys.modules if sys.modules[m])
    print("ok")
    """
)


def test_core_scores_and_runs_evals_without_langchain() -> None:
    env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    result = subprocess.run(
        [sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=300, env=env
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip().endswith("ok")
