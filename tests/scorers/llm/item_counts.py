"""Reading a judge request for the item counts its schema states, and for a retry that says too few came."""

from __future__ import annotations

from agentevals.testing import ChatRequest


def item_bounds(request: ChatRequest, field: str) -> tuple[int | None, int | None]:
    """``(minItems, maxItems)`` of the list ``field`` in the schema the request sends (JSON-schema mode)."""
    schema = request.body["response_format"]["json_schema"]["schema"]
    listed = schema["properties"][field]
    return listed.get("minItems"), listed.get("maxItems")


def asks_again_for(request: ChatRequest, field: str, count: int) -> bool:
    """Whether ``request`` retries a reply whose ``field`` held fewer than ``count`` items, showing the judge
    its reply and saying so."""
    feedback = request.prompt
    return (
        request.messages[-2]["role"] == "assistant"
        and feedback.startswith("That reply is not valid")
        and f"at {field}: List should have at least {count} item" in feedback
    )
