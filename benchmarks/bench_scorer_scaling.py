"""Seconds per code scorer on large inputs: every code scorer must stay (near) linear in its input.

Each scorer scores one run whose texts are ``--sizes`` bytes (default 100 kB and 1 MB) of prose
*without sentence punctuation* (the worst case of a sentence splitter), with ground truth of the
same size, a JSON output of the same size for ``json_match``, and for the tool and trajectory
scorers one tool call per kilobyte (100 and 1,000 calls) with an expected trajectory of the same
length. Each scorer runs once in its own process, killed after ``--timeout`` seconds (so a
quadratic scorer cannot hang the benchmark); the time printed is the scorer's ``run`` alone,
building the run excluded. Target: every scorer under 1 s at 1 MB.

Run: ``uv run python benchmarks/bench_scorer_scaling.py [--sizes 100000 1000000] [--timeout 30]``
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing as mp
import random
import time
from collections.abc import Callable
from typing import Any

from agentevals import Run, Scorer
from agentevals.scorers import (
    checks,
    create_completeness_scorer,
    create_content_similarity_scorer,
    create_exact_match_scorer,
    create_includes_scorer,
    create_json_match_scorer,
    create_keyword_coverage_scorer,
    create_levenshtein_scorer,
    create_regex_scorer,
    create_textual_difference_scorer,
    create_tone_scorer,
    create_tool_call_accuracy_scorer_code,
    create_tool_failures_scorer,
    create_trajectory_accuracy_scorer_code,
    create_trajectory_blacklist_scorer,
    create_trajectory_efficiency_scorer,
    create_trajectory_scorer,
)
from agentevals.scorers.utils import create_agent_test_run, create_test_message, create_tool_invocation

_VOCABULARY = (
    "the agent answered a question about the weather in paris and then searched the web for good "
    "recent news it was happy to help but the user was not satisfied with the slow reply so it tried "
    "again running quickly through reports tables numbers customers billing errors support tickets"
)
WORDS = _VOCABULARY.split()
TOOLS = ("search", "weather", "calculator", "fetch", "summarize")


def prose(size: int, seed: int) -> str:
    """About ``size`` bytes of words and commas, no sentence terminator."""
    rng = random.Random(seed)
    parts: list[str] = []
    total = 0
    while total < size:
        word = rng.choice(WORDS) + ("," if rng.random() < 0.05 else "")
        parts.append(word)
        total += len(word) + 1
    return " ".join(parts)[:size]


def text_run(size: int) -> Run:
    return Run(input=prose(size, 1), output=prose(size, 2), ground_truth=prose(size, 3))


def json_run(size: int) -> Run:
    items = [{"id": i, "name": f"item {i}", "tags": ["a", "b"]} for i in range(size // 40)]
    return Run(input="list the items", output=json.dumps(items), ground_truth=items)


def tool_names(calls: int) -> list[str]:
    return [TOOLS[i % len(TOOLS)] for i in range(calls)]


def tool_run(size: int) -> Run:
    calls = max(1, size // 1000)
    names = tool_names(calls)
    invocations = [
        create_tool_invocation(
            tool_name=name, tool_call_id=f"c{i}", args={"q": prose(400, i)}, result={"text": prose(400, -i)}
        )
        for i, name in enumerate(names)
    ]
    messages = [
        create_test_message(prose(100, i), role="assistant", tool_invocations=invocations[i : i + 2])
        for i in range(0, calls, 2)
    ]
    run = create_agent_test_run(input_messages=[prose(1000, 7)], output=messages)
    return run.model_copy(update={"expected_trajectory": names})


SCORERS: dict[str, tuple[Callable[[], Scorer], Callable[[int], Run]]] = {
    "completeness": (create_completeness_scorer, text_run),
    "content_similarity": (create_content_similarity_scorer, text_run),
    "keyword_coverage": (create_keyword_coverage_scorer, text_run),
    "textual_difference": (create_textual_difference_scorer, text_run),
    "tone": (create_tone_scorer, text_run),
    "tone_reference": (lambda: create_tone_scorer(reference_tone="calm and happy"), text_run),
    "exact_match": (create_exact_match_scorer, text_run),
    "includes": (create_includes_scorer, text_run),
    "regex": (lambda: create_regex_scorer(r"\bweather\s+in\s+\w+\b"), text_run),
    "levenshtein": (create_levenshtein_scorer, text_run),
    "json_match": (create_json_match_scorer, json_run),
    "check_includes": (lambda: checks.includes("weather in london"), text_run),
    "check_excludes": (lambda: checks.excludes("weather in london"), text_run),
    "check_equals": (lambda: checks.equals("the agent"), text_run),
    "check_matches": (lambda: checks.matches(r"weather in \w+"), text_run),
    "check_similarity": (lambda: checks.similarity(prose(1000, 5)), text_run),
    "check_called_tool": (lambda: checks.called_tool("search"), tool_run),
    "check_did_not_call": (lambda: checks.did_not_call("delete"), tool_run),
    "check_tool_order": (lambda: checks.tool_order(["search", "fetch", "summarize"]), tool_run),
    "check_max_tool_calls": (lambda: checks.max_tool_calls(10), tool_run),
    "check_used_no_tools": (checks.used_no_tools, tool_run),
    "check_no_tool_errors": (checks.no_tool_errors, tool_run),
    "tool_call_accuracy_code": (
        lambda: create_tool_call_accuracy_scorer_code(expected_tool_order=list(TOOLS)),
        tool_run,
    ),
    "trajectory_accuracy_strict": (
        lambda: create_trajectory_accuracy_scorer_code(ordering="strict"),
        tool_run,
    ),
    "trajectory_accuracy_relaxed": (create_trajectory_accuracy_scorer_code, tool_run),
    "trajectory_accuracy_unordered": (
        lambda: create_trajectory_accuracy_scorer_code(ordering="unordered"),
        tool_run,
    ),
    "trajectory_efficiency": (lambda: create_trajectory_efficiency_scorer(max_steps=50), tool_run),
    "trajectory_blacklist": (
        lambda: create_trajectory_blacklist_scorer(
            blacklisted_tools=["delete"], blacklisted_sequences=[["fetch", "delete"]]
        ),
        tool_run,
    ),
    "tool_failures": (create_tool_failures_scorer, tool_run),
    "trajectory": (
        lambda: create_trajectory_scorer(defaults={"max_steps": 50, "blacklisted_tools": ["delete"]}),
        tool_run,
    ),
}


def _measure(name: str, size: int, queue: Any) -> None:
    factory, build = SCORERS[name]
    scorer, run = factory(), build(size)
    start = time.perf_counter()
    asyncio.run(scorer.run(run))
    queue.put(time.perf_counter() - start)


def measure(name: str, size: int, timeout: float) -> str:
    """The scorer's seconds on a run of ``size`` bytes, or ``> timeout`` if it had to be killed."""
    queue: Any = mp.get_context("fork").Queue()
    process = mp.get_context("fork").Process(target=_measure, args=(name, size, queue))
    process.start()
    process.join(timeout)
    if process.is_alive():
        process.kill()
        process.join()
        return f"> {timeout:g}"
    if process.exitcode != 0:
        return "error"
    return f"{queue.get():.3f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[100_000, 1_000_000])
    parser.add_argument("--timeout", type=float, default=30.0)
    parser.add_argument("--only", nargs="*", default=None, help="scorer names to run (default: all)")
    args = parser.parse_args()
    names = args.only or list(SCORERS)
    print(f"{'scorer':32}" + "".join(f"{f'{size // 1000} kB (s)':>14}" for size in args.sizes))
    for name in names:
        cells = [measure(name, size, args.timeout) for size in args.sizes]
        print(f"{name:32}" + "".join(f"{cell:>14}" for cell in cells), flush=True)


if __name__ == "__main__":
    main()
