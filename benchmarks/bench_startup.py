"""Start-up: what an application pays before its first scored run, each case in fresh processes.

Run: ``uv run python benchmarks/bench_startup.py [--rounds 5]``.
Targets (issue 26):

- ``ScoringEngine(...)`` with 3 LLM-judged scorers: under 50 ms, against the same engine with 3 code
  scorers (the baseline: no judge) in the same round;
- ``run_evals`` of 20 items on a plain function that takes 0.1 s, concurrency 10: under 0.5 s in a
  fresh process (the baseline: the same 20 calls on a thread pool of 10, 0.2 s at best);
- ``rescore`` with nothing to do (an empty store) with 3 judged scorers: under 1 s, against the same
  with 3 code scorers; and the ``agentevals rescore`` command, the same, as a whole process.

Each measurement is a new interpreter (``sys.executable -c``): nothing is imported or cached yet, as at an
application's start. The child times the call itself (``time.perf_counter`` around it, after
``import agentevals``) and says whether LiteLLM or LangChain got imported; the parent times the whole
process too. A case and its baseline alternate (A B A B ...), and the median of the rounds is reported.
The judges point at a loopback address with a key: the check needs no network, no call is made. The
last column names the modules the case imported and the thread that did (``MainThread``: the caller's).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from dataclasses import dataclass
from pathlib import Path

#: Prepended to every child: its report, printed as the last line.
PRELUDE = """
import importlib.abc, json, sys, threading, time

IMPORTED = {}  # module -> the thread that started importing it, by the time of the report

class Watcher(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name in ("litellm", "langchain_core"):
            IMPORTED.setdefault(name, threading.current_thread().name)
        return None

sys.meta_path.insert(0, Watcher())

def report(seconds):
    print(json.dumps({"seconds": seconds, "loaded": [f"{m} ({t})" for m, t in sorted(IMPORTED.items())]}))

def judged(i):
    from agentevals import Judge, PromptStep, create_scorer
    judge = Judge(model="openai/gpt-4o-mini", api_base="http://127.0.0.1:9/v1", api_key="sk-bench")
    step = PromptStep(description="score", create_prompt=lambda run, **_: "p")
    return create_scorer(id=f"judged_{i}", judge=judge).generate_score(step)

def coded(i):
    from agentevals import create_scorer
    return create_scorer(id=f"code_{i}").generate_score(lambda run, **_: 1.0)
"""

ENGINE = """
from agentevals import ScoringEngine
from agentevals.engine import ExitOptions
from agentevals.sinks import MemorySink
scorers = [{make}(i) for i in range(3)]
started = time.perf_counter()
engine = ScoringEngine(scorers, sinks=[MemorySink()], exit=ExitOptions(handle_sigterm=False))
report(time.perf_counter() - started)
"""

RUN_EVALS = """
from agentevals import run_evals
from agentevals.scorers import create_exact_match_scorer

def target(text):
    time.sleep(0.1)
    return text

started = time.perf_counter()
run_evals(
    data=[{{"input": str(i), "ground_truth": str(i)}} for i in range(20)],
    scorers=[create_exact_match_scorer()], target=target, concurrency=10, progress=False,
)
report(time.perf_counter() - started)
"""

THREAD_POOL = """
import agentevals
from concurrent.futures import ThreadPoolExecutor

def target(text):
    time.sleep(0.1)
    return text

started = time.perf_counter()
with ThreadPoolExecutor(10) as pool:
    list(pool.map(target, [str(i) for i in range(20)]))
report(time.perf_counter() - started)
"""

RESCORE = """
from agentevals.evals import rescore
scorers = [{make}(i) for i in range(3)]
started = time.perf_counter()
rescore({db!r}, scorers, progress=False)
report(time.perf_counter() - started)
"""

RESCORE_COMMAND = """
from agentevals.cli import main
started = time.perf_counter()
code = main(["rescore", "--db", {db!r}, "--no-progress", "--scorer", {scorer!r}])
assert code == 0, code
report(time.perf_counter() - started)
"""


@dataclass
class Sample:
    seconds: float  # the call, timed in the child
    process: float  # the whole child process, timed by the parent
    loaded: list[str]


def run_child(body: str, env: dict[str, str]) -> Sample:
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-c", PRELUDE + textwrap.dedent(body)],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
        check=False,
    )
    process = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"a child failed:\n{done.stderr[-3000:]}")
    result = json.loads(done.stdout.strip().splitlines()[-1])
    return Sample(result["seconds"], process, result["loaded"])


def cases(db: str) -> list[tuple[str, str, str]]:
    """(name, the case's child, its baseline's child)."""
    judged_scorer = 'answer_relevancy:{"model": "openai/gpt-4o-mini"}'
    return [
        (
            "ScoringEngine(): 3 judged vs 3 code scorers",
            ENGINE.format(make="judged"),
            ENGINE.format(make="coded"),
        ),
        ("run_evals: 20 items x 0.1 s, concurrency 10 vs a thread pool", RUN_EVALS.format(), THREAD_POOL),
        (
            "rescore (no-op): 3 judged vs 3 code scorers",
            RESCORE.format(make="judged", db=db),
            RESCORE.format(make="coded", db=db),
        ),
        (
            "agentevals rescore (no-op): judged vs code scorer",
            RESCORE_COMMAND.format(db=db, scorer=judged_scorer),
            RESCORE_COMMAND.format(db=db, scorer="exact_match"),
        ),
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5, help="pairs of fresh processes per case")
    args = parser.parse_args()
    from agentevals.sinks import SQLiteSink

    env = {**os.environ, "OPENAI_API_KEY": "sk-bench"}
    with tempfile.TemporaryDirectory() as tmp:
        db = str(Path(tmp) / "empty.db")
        SQLiteSink(db).check()
        print(
            f"{'case':<62} {'call A':>8} {'call B':>8} {'A-B':>8} {'proc A':>7} {'proc B':>7}  imported by A"
        )
        for name, case, baseline in cases(db):
            pairs = [(run_child(case, env), run_child(baseline, env)) for _ in range(args.rounds)]
            a = statistics.median(p[0].seconds for p in pairs)
            b = statistics.median(p[1].seconds for p in pairs)
            pa = statistics.median(p[0].process for p in pairs)
            pb = statistics.median(p[1].process for p in pairs)
            loaded = sorted({m for p in pairs for m in p[0].loaded}) or ["-"]
            print(
                f"{name:<62} {a * 1000:7.0f}ms {b * 1000:7.0f}ms {(a - b) * 1000:7.0f}ms "
                f"{pa:6.2f}s {pb:6.2f}s  {', '.join(loaded)}"
            )
    print("call: the call timed inside a fresh process (median); proc: the whole process, start to exit.")


if __name__ == "__main__":
    main()
