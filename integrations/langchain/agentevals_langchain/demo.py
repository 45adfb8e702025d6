"""``agentevals demo``: a small LangChain agent scored live, offline, in a few seconds.

A ``create_agent`` agent with a scripted chat model and three real tools (calculator, weather table,
capitals table) answers 20 questions. ``ScoringMiddleware`` in the constructor scores every run in the
background with code-based scorers and an LLM-judged one (answer relevancy, sampled at 50%); the judge
is a local fake OpenAI-compatible server unless ``AGENTEVALS_JUDGE_MODEL`` names a real LiteLLM model
(with its API key in the environment). Results go to SQLite (and, with ``--verbose`` or
``AGENTEVALS_DEBUG=1``, one log line each); a summary table follows.

Run: ``agentevals demo`` or ``python -m agentevals_langchain.demo [--db PATH] [--verbose] [--quiet]``.
"""

from __future__ import annotations

import argparse
import ast
import logging
import operator
import os
import re
import statistics
import sys
import time
import uuid
from collections.abc import Callable, Sequence
from contextlib import ExitStack
from typing import Any

from langchain.agents import create_agent
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.tools import tool

from agentevals import Judge, create_scorer
from agentevals.scorers import (
    create_includes_scorer,
    create_keyword_coverage_scorer,
    create_tone_scorer,
    create_trajectory_efficiency_scorer,
)
from agentevals.scorers.llm import create_answer_relevancy_scorer
from agentevals.sinks import LoggingSink, MemorySink, SQLiteSink
from agentevals_langchain._middleware import ScoringMiddleware
from agentevals_langchain.testing import ScriptedChatModel, tool_call

QUESTIONS: list[tuple[str, str]] = [
    ("What is 12 * 7?", "84"),
    ("What is 144 / 12?", "12"),
    ("What is 2 ** 10?", "1024"),
    ("What is 17 + 25?", "42"),
    ("What is 1000 - 1?", "999"),
    ("What is (3 + 4) * 5?", "35"),
    ("What is the weather in Paris?", "sunny"),
    ("What is the weather in Oslo?", "snow"),
    ("What is the weather in Lima?", "cloudy"),
    ("What is the weather in Cairo?", "hot"),
    ("What is the weather in Atlantis?", "unknown"),
    ("What is the capital of Japan?", "Tokyo"),
    ("What is the capital of Canada?", "Ottawa"),
    ("What is the capital of Australia?", "Canberra"),
    ("What is the capital of Brazil?", "Brasília"),
    ("What is the capital of Kenya?", "Nairobi"),
    ("What is the capital of Wakanda?", "unknown"),
    ("Tell me a joke about databases.", "joke"),
    ("Who wrote Hamlet?", "Shakespeare"),
    ("What is 9 * 9 and the weather in Rome?", "81"),
]

WEATHER = {"paris": "sunny, 21°C", "oslo": "light snow, -3°C", "lima": "cloudy, 18°C", "cairo": "hot, 35°C"}
WEATHER.update({"rome": "clear, 24°C"})
CAPITALS = {
    "japan": "Tokyo",
    "canada": "Ottawa",
    "australia": "Sydney",
    "brazil": "Brasília",
    "kenya": "Nairobi",
}
# (Australia -> "Sydney" is a deliberate error in the "database", so one answer is wrong.)

_OPS: dict[type[ast.AST], Callable[..., Any]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.Pow: operator.pow,
    ast.USub: operator.neg,
}


@tool
def calculator(expression: str) -> str:
    """Evaluate an arithmetic expression (+, -, *, /, **, parentheses)."""

    def ev(node: ast.AST) -> float:
        if isinstance(node, ast.Expression):
            return ev(node.body)
        if isinstance(node, ast.Constant) and isinstance(node.value, int | float):
            return node.value
        if isinstance(node, ast.BinOp) and type(node.op) in _OPS:
            return float(_OPS[type(node.op)](ev(node.left), ev(node.right)))
        if isinstance(node, ast.UnaryOp) and type(node.op) in _OPS:
            return float(_OPS[type(node.op)](ev(node.operand)))
        raise ValueError(f"unsupported expression: {expression!r}")

    value = ev(ast.parse(expression, mode="eval"))
    return str(int(value)) if float(value).is_integer() else f"{value:.4g}"


@tool
def get_weather(city: str) -> str:
    """Current weather in a city."""
    return WEATHER.get(city.lower(), f"no weather data for {city}")


@tool
def lookup_capital(country: str) -> str:
    """The capital city of a country."""
    return CAPITALS.get(country.lower(), f"unknown country {country}")


def _plan(question: str) -> list[dict[str, Any]]:
    """The tool calls a (scripted) model would make for a question."""
    calls = []
    math = re.search(r"what is ([\d\s()+\-*/.]+?)(?:\?| and)", question, re.I)
    if math and re.search(r"\d", math.group(1)):
        calls.append(tool_call("calculator", {"expression": math.group(1).strip()}))
    weather = re.search(r"weather in (\w+)", question, re.I)
    if weather:
        calls.append(tool_call("get_weather", {"city": weather.group(1)}))
    capital = re.search(r"capital of (\w+)", question, re.I)
    if capital:
        calls.append(tool_call("lookup_capital", {"country": capital.group(1)}))
    return calls


def scripted_reply(messages: list[BaseMessage]) -> AIMessage | str:
    """Plan tool calls for a new question; answer from the tool results once they are in."""
    last = messages[-1]
    if isinstance(last, HumanMessage):
        calls = _plan(last.text)
        if calls:
            return AIMessage(content="", tool_calls=calls)
        if "joke" in last.text.lower():
            return "Why did the database administrator leave his wife? She had one-to-many relationships."
        return "I can only help with arithmetic, the weather and capital cities."
    results = [m for m in messages if isinstance(m, ToolMessage)]
    parts = []
    for result in results:
        text = result.text
        if result.name == "calculator":
            parts.append(f"The answer is {text}.")
        elif result.name == "get_weather":
            parts.append(f"The weather there is {text}." if "no weather" not in text else "I have no data.")
        else:
            parts.append(
                f"The capital is {text}." if "unknown" not in text else "I do not know that country."
            )
    return " ".join(parts)


class DemoError(Exception):
    """The demo cannot start; its message says why and how to fix it."""


def _judge(stack: ExitStack) -> tuple[Judge, str]:
    model = os.environ.get("AGENTEVALS_JUDGE_MODEL")
    if model:
        judge = Judge(model=model, timeout=30.0)
        try:
            judge.check()  # before any question: a missing key would fail every judged run
        except ValueError as err:
            raise DemoError(
                f"AGENTEVALS_JUDGE_MODEL={model}: {err}. Set it, or unset AGENTEVALS_JUDGE_MODEL to "
                "judge with the offline fake judge."
            ) from None
        return judge, model
    from agentevals.testing import FakeJudgeServer, schema_responder

    server = stack.enter_context(FakeJudgeServer(responder=schema_responder()))
    return server.judge(), "fake judge on 127.0.0.1 (set AGENTEVALS_JUDGE_MODEL for a real one)"


def build_scorers(judge: Judge) -> dict[str, Any]:
    """Prebuilt and custom code-based scorers, plus one LLM-judged scorer sampled at 50%."""
    used_tool = create_scorer(
        id="used_tool", description="1 when the agent called at least one tool"
    ).generate_score(lambda run, **_: 1.0 if any(m.tool_invocations for m in run.output_messages) else 0.0)
    return {
        "includes_expected": create_includes_scorer(),
        "keyword_coverage": create_keyword_coverage_scorer(),
        "tone": create_tone_scorer(),
        "efficiency": create_trajectory_efficiency_scorer(max_steps=1),
        "used_tool": used_tool,
        "answer_relevancy": {"scorer": create_answer_relevancy_scorer(judge), "sampling": 0.5},
    }


SummaryRow = tuple[str, int, float | None, float | None, float | None, int]


def summarize(records: Sequence[Any]) -> list[SummaryRow]:
    """(scorer, count, mean, min, max, failures) per scorer, sorted by scorer id."""
    rows: list[SummaryRow] = []
    for scorer_id in sorted({r.scorer_id for r in records}):
        mine = [r for r in records if r.scorer_id == scorer_id]
        scores = [float(r.score) for r in mine if r.score is not None]
        failures = len(mine) - len(scores)
        if scores:
            rows.append((scorer_id, len(mine), statistics.fmean(scores), min(scores), max(scores), failures))
        else:
            rows.append((scorer_id, len(mine), None, None, None, failures))
    return rows


def format_table(rows: Sequence[SummaryRow]) -> str:
    def num(value: float | None) -> str:
        return "-" if value is None else f"{value:.2f}"

    header = f"{'scorer':<20} {'count':>5} {'mean':>6} {'min':>6} {'max':>6} {'failures':>8}"
    lines = [header, "-" * len(header)]
    for scorer_id, count, mean, low, high, failures in rows:
        lines.append(f"{scorer_id:<20} {count:>5} {num(mean):>6} {num(low):>6} {num(high):>6} {failures:>8}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Run the demo; returns a process exit code (0 when every sampled run was scored, 2 when it cannot
    start, e.g. a judge model without its API key)."""
    args = _parser().parse_args(argv)
    verbose = args.verbose or os.environ.get("AGENTEVALS_DEBUG", "") not in ("", "0")
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    if verbose:
        logging.getLogger("agentevals.results").setLevel(logging.INFO)
    try:
        return _run(args.db, verbose=verbose, quiet=args.quiet)
    except DemoError as err:
        print(f"agentevals demo: {err}", file=sys.stderr)
        return 2


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="agentevals demo", description=__doc__.splitlines()[0])
    parser.add_argument("--db", default="agentevals.db", help="SQLite file for the results (agentevals.db)")
    parser.add_argument(
        "--verbose", action="store_true", help="log each score record (also with AGENTEVALS_DEBUG=1)"
    )
    parser.add_argument("--quiet", action="store_true", help="print the summary only, not each answer")
    return parser


def _run(db: str, *, verbose: bool, quiet: bool) -> int:
    started = time.perf_counter()
    memory = MemorySink()
    with ExitStack() as stack:
        judge, judge_label = _judge(stack)
        middleware = _middleware(judge, [SQLiteSink(db), memory, *([LoggingSink()] if verbose else [])])
        agent = create_agent(
            ScriptedChatModel(respond=scripted_reply, model_name="scripted-demo-model"),
            tools=[calculator, get_weather, lookup_capital],
            system_prompt="You answer arithmetic, weather and capital-city questions using your tools.",
            middleware=[middleware],
            name="demo_agent",
        )
        print(f"agentevals demo: {len(QUESTIONS)} questions, judge: {judge_label}")
        for question, expected in QUESTIONS:
            result = agent.invoke(
                {"messages": [{"role": "user", "content": question}]},
                # A stable run id per question makes the 50% sample the same on every demo run.
                config={
                    "run_id": uuid.uuid5(uuid.NAMESPACE_URL, question),
                    "metadata": {"ground_truth": expected},
                },
            )
            if not quiet:
                print(f"  Q: {question:<42} A: {result['messages'][-1].text}")
        flushed = middleware.flush(timeout=60.0)
        stats = middleware.engine.stats()
        middleware.shutdown(timeout=30.0)
    print()
    print(format_table(summarize(memory.records)))
    print()
    elapsed = time.perf_counter() - started
    print(
        f"{stats.submitted} runs, {stats.scored} scores, {stats.failed} scorer failures, "
        f"answer_relevancy sampled {stats.sampled.get('answer_relevancy', 0)}/{stats.submitted} (50%); "
        f"results in {os.path.abspath(db)} ({elapsed:.1f} s)"
    )
    if not flushed:
        print("warning: not every result was written before the timeout", file=sys.stderr)
        return 1
    return 0


def _middleware(judge: Judge, sinks: list[Any]) -> ScoringMiddleware:
    """The scoring middleware; what the engine refuses at construction (a sink that cannot store) as a
    :class:`DemoError`."""
    try:
        return ScoringMiddleware(scorers=build_scorers(judge), sinks=sinks)
    except ValueError as err:
        raise DemoError(str(err)) from None


if __name__ == "__main__":
    raise SystemExit(main())
