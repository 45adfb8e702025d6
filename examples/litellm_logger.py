"""Score raw LiteLLM calls: register ScoringLogger once; every completion/acompletion is scored.

Uses LiteLLM's mock_response so it runs offline; drop mock_response to call a real model.
"""

from __future__ import annotations

import os

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # no network fetch at import

import litellm
from agentevals_litellm import ScoringLogger

from agentevals import create_scorer
from agentevals.sinks import MemorySink


def main() -> None:
    polite = create_scorer(id="polite").generate_score(
        lambda run, **_: 1.0 if any(w in run.output_text.lower() for w in ("please", "thank")) else 0.0
    )
    memory = MemorySink()
    logger = ScoringLogger(scorers=[polite], sinks=[memory]).register()
    try:
        for reply in ("Thank you for asking! It is sunny.", "Sunny."):
            litellm.completion(
                model="openai/gpt-4o-mini",
                messages=[{"role": "user", "content": "How is the weather?"}],
                mock_response=reply,
                metadata={"session": "example"},  # copied into the run's metadata
            )
        import time

        deadline = time.monotonic() + 10  # sync calls are logged on a LiteLLM thread
        while logger.engine.stats().submitted < 2 and time.monotonic() < deadline:
            time.sleep(0.01)
        logger.flush()
    finally:
        logger.unregister()
    for record in memory.records:
        print(record.scorer_id, record.score, record.output[0].content)


if __name__ == "__main__":
    main()
