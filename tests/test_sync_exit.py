"""The shared event loop at interpreter exit: engines flush first (judge calls still work), then the
tasks left on the loop (LiteLLM's logging worker) are cancelled and the loop closed, so Python prints
no "Task was destroyed but it is pending!"."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from pathlib import Path

SCRIPT = """
import atexit, asyncio, gc, sys

loops = []

def inspect_loop():  # registered first: runs after every other exit handler
    for loop in loops:
        if not loop.is_closed():
            names = sorted(t.get_coro().__qualname__ for t in asyncio.all_tasks(loop) if not t.done())
            print("LOOP LEFT OPEN, pending:", names, file=sys.stderr)
    loops.clear()
    gc.collect()

atexit.register(inspect_loop)

from pydantic import BaseModel
from agentevals import PromptStep, Run, ScoringEngine, create_scorer
from agentevals._support._sync import background_loop
from agentevals.engine import DeliveryOptions, QueueOptions
from agentevals.sinks import JsonlSink, SQLiteSink
from agentevals.testing import FakeJudgeServer

class Verdict(BaseModel):
    score: float

server = FakeJudgeServer(responder=lambda request: {"score": 1.0}).start()
scorer = (
    create_scorer(id="judged", judge=server.judge())
    .analyze(PromptStep(description="grade", create_prompt=lambda run, **_: f"Grade {run.output_text}",
                        output_schema=Verdict))
    .generate_score(lambda results, **_: results.analyze_step_result.score)
)
assert scorer.run_sync(Run(input="q", output="a")).score == 1.0
out = sys.argv[1]
engine = ScoringEngine([scorer], sinks=[JsonlSink(out + ".jsonl"), SQLiteSink(out + ".db")],
                       delivery=DeliveryOptions(dead_letter=out + ".dead.jsonl"),
                       queue=QueueOptions(linger=0.5))
for i in range(20):
    engine.submit(Run(run_id=f"r{i}", input="q", output="a"))
loops.append(background_loop())
print("submitted")  # and exit: the engine's exit-time shutdown scores and writes the 20 runs
"""


def test_exit_scores_everything_then_closes_the_loop_without_pending_tasks(tmp_path: Path) -> None:
    script = tmp_path / "exit_script.py"
    script.write_text(SCRIPT)
    out = tmp_path / "scores"
    proc = subprocess.run(
        [sys.executable, str(script), str(out)], capture_output=True, text=True, timeout=120, cwd=tmp_path
    )
    assert proc.returncode == 0, proc.stderr
    assert "submitted" in proc.stdout
    assert "Task was destroyed" not in proc.stderr
    assert "LOOP LEFT OPEN" not in proc.stderr, proc.stderr
    assert "Exception ignored" not in proc.stderr, proc.stderr
    rows = [json.loads(line) for line in Path(f"{out}.jsonl").read_text().splitlines()]
    assert len(rows) == 20
    assert {(r["score"], r["error_type"]) for r in rows} == {(1.0, None)}  # judged at exit, not failed
    with sqlite3.connect(f"{out}.db") as conn:
        assert conn.execute("SELECT count(*), sum(score) FROM agentevals_scores").fetchone() == (20, 20.0)
    assert not Path(f"{out}.dead.jsonl").exists()
