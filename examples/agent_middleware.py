"""Scorers in the agent constructor: ScoringMiddleware in LangChain's create_agent.

Runs offline with a scripted chat model; swap in any real chat model (e.g. ChatOpenAI) unchanged.
Results go to SQLite (AGENTEVALS_DB, default ./agentevals.db) and to the log.
"""

from __future__ import annotations

import logging
import os

from agentevals_langchain import ScoringMiddleware
from agentevals_langchain.testing import ScriptedChatModel, tool_call
from langchain.agents import create_agent
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langchain_core.tools import tool

from agentevals import create_scorer
from agentevals.scorers import create_includes_scorer
from agentevals.sinks import LoggingSink, SQLiteSink


@tool
def get_weather(city: str) -> str:
    """Current weather in a city."""
    return {"paris": "sunny, 21°C", "oslo": "light snow, -3°C"}.get(city.lower(), "unknown")


def model_reply(messages: list[BaseMessage]) -> AIMessage | str:
    last = messages[-1]
    if isinstance(last, HumanMessage):
        return AIMessage(content="", tool_calls=[tool_call("get_weather", {"city": last.text.split()[-1]})])
    return f"It is {last.text}."


def main() -> None:
    logging.basicConfig(level=logging.INFO, format="%(name)s: %(message)s")
    used_tool = create_scorer(id="used_tool").generate_score(
        lambda run, **_: float(any(m.tool_invocations for m in run.output_messages))
    )
    scoring = ScoringMiddleware(
        scorers={
            "mentions_weather": create_includes_scorer(),
            "used_tool": {"scorer": used_tool, "sampling": 0.5},
        },
        sinks=[SQLiteSink(os.environ.get("AGENTEVALS_DB", "agentevals.db")), LoggingSink()],
    )
    agent = create_agent(
        ScriptedChatModel(respond=model_reply),
        tools=[get_weather],
        system_prompt="You report the weather.",
        middleware=[scoring],
        name="weather_agent",
    )
    for city, expected in [("Paris", "sunny"), ("Oslo", "snow")]:
        result = agent.invoke(
            {"messages": [{"role": "user", "content": f"Weather in {city}"}]},
            config={"metadata": {"ground_truth": expected}},  # the expected answer, for `includes`
        )
        print(result["messages"][-1].text)
    scoring.flush()  # wait for background scoring before exit (shutdown also happens at exit)
    print(scoring.engine.stats())


if __name__ == "__main__":
    main()
