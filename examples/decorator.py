"""Plain Python, no framework: @scored on any sync or async function taking a prompt or messages."""

from __future__ import annotations

import asyncio

from agentevals import create_scorer, scored
from agentevals.sinks import MemorySink

memory = MemorySink()
short = create_scorer(id="short").generate_score(lambda run, **_: 1.0 if len(run.output_text) < 40 else 0.0)
echoes = create_scorer(id="echoes_question").generate_score(
    lambda run, **_: 1.0 if run.input_text.split()[-1].strip("?") in run.output_text else 0.0
)


@scored(scorers=[short, echoes], sinks=[memory])
def answer(prompt: str) -> str:
    return f"You asked about {prompt.split()[-1].strip('?')}; here is a short answer."


@scored(scorers=[short], sinks=[memory], sampling=1.0)
async def chat(messages: list[dict[str, str]]) -> str:
    await asyncio.sleep(0)
    return "Hello!"


def main() -> None:
    print(answer("What about Paris?"))
    print(asyncio.run(chat([{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi"}])))
    answer.engine.flush()  # type: ignore[attr-defined]
    chat.engine.flush()  # type: ignore[attr-defined]
    for record in memory.records:
        print(record.scorer_id, record.score)


if __name__ == "__main__":
    main()
