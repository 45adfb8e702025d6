"""A real ChatOpenAI agent tested offline: the fake server plays both the agent's model and the judge.

The agent's model turns come from a function of the request (a tool call, then the answer; the second
question is streamed), and an LLM-judged scorer grades each answer live through the same server, whose
judge replies are plausible and schema-valid but no real judgement. No API key, no network.
"""

from __future__ import annotations

from agentevals_langchain import ScoringMiddleware
from langchain.agents import create_agent
from langchain_core.messages import AIMessageChunk
from langchain_core.tools import tool
from langchain_openai import ChatOpenAI

from agentevals.scorers.llm import create_answer_relevancy_scorer
from agentevals.sinks import MemorySink
from agentevals.testing import ChatRequest, FakeJudgeServer, Reply, schema_responder


@tool
def get_weather(city: str) -> str:
    """Current weather in a city."""
    return {"paris": "sunny, 21°C", "oslo": "light snow, -3°C"}.get(city.lower(), "unknown")


def weather_model(request: ChatRequest) -> Reply:
    """The agent's model: call the tool for the city asked about, then answer with its result."""
    if not request.tool_results:
        return Reply.tool_call("get_weather", city=request.prompt.split()[-1])
    return Reply.text(f"It is {request.tool_results[-1]}.")


def main() -> None:
    with FakeJudgeServer(
        agent_responder=weather_model, responder=schema_responder(positive_rate=1.0)
    ) as server:
        model = ChatOpenAI(model=server.agent_model, base_url=server.url, api_key="fake-key", streaming=True)
        memory = MemorySink()
        scoring = ScoringMiddleware(
            scorers=[create_answer_relevancy_scorer(server.judge())], sinks=[memory], name="weather_agent"
        )
        agent = create_agent(model, tools=[get_weather], middleware=[scoring], name="weather_agent")
        result = agent.invoke({"messages": [{"role": "user", "content": "Weather in Paris"}]})
        print(result["messages"][-1].text)
        question = {"messages": [{"role": "user", "content": "Weather in Oslo"}]}
        chunks = [chunk for chunk, _ in agent.stream(question, stream_mode="messages")]
        print("|".join(c.text for c in chunks if isinstance(c, AIMessageChunk) and c.text))  # word by word
        scoring.flush(timeout=120.0)  # the first judge call loads LiteLLM, which can take a while
    for record in sorted(memory.records, key=lambda r: str(r.output)):
        print(record.scorer_id, record.score, record.reason)


if __name__ == "__main__":
    main()
