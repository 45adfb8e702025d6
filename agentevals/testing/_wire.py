"""A scripted :class:`Reply` in OpenAI's chat-completions wire format (one JSON body, or SSE chunks), or
in Ollama's own (``/api/chat``, ``/api/generate``)."""

from __future__ import annotations

import json
import re
import time
import uuid
from typing import Any

from agentevals.testing._reply import Reply

_WORD = re.compile(r"\s*\S+\s*|\s+")
_ARGUMENT_PIECE = 8  # characters of a tool call's JSON arguments per chunk, so clients must join them


def completion_body(reply: Reply, model: str) -> str:
    """A ``chat.completion`` object."""
    message: dict[str, Any] = {"role": "assistant", "content": reply.content}
    if reply.tool_calls:
        message["tool_calls"] = [
            {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments_json}}
            for c in reply.tool_calls
        ]
    return json.dumps(
        {
            **_envelope(model, "chat.completion"),
            "choices": [{"index": 0, "message": message, "finish_reason": _finish_reason(reply)}],
            "usage": _usage(reply),
        }
    )


def event_stream(reply: Reply, model: str, *, include_usage: bool) -> str:
    """The ``chat.completion.chunk`` events of a streamed reply, as server-sent events ending in ``[DONE]``.

    Text arrives a word a chunk; each tool call as a chunk with its id and name, then its arguments in
    pieces; a usage chunk (no choices) comes last when the request's ``stream_options`` asked for it.
    """
    envelope = _envelope(model, "chat.completion.chunk")

    def chunk(delta: dict[str, Any], finish_reason: str | None = None) -> dict[str, Any]:
        return {**envelope, "choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason}]}

    events = [chunk({"role": "assistant", "content": ""})]
    events += [chunk({"content": word}) for word in _WORD.findall(reply.content or "")]
    for index, call in enumerate(reply.tool_calls):
        head = {"index": index, "id": call.id, "type": "function"}
        events.append(chunk({"tool_calls": [{**head, "function": {"name": call.name, "arguments": ""}}]}))
        arguments = call.arguments_json
        events += [
            chunk(
                {
                    "tool_calls": [
                        {"index": index, "function": {"arguments": arguments[i : i + _ARGUMENT_PIECE]}}
                    ]
                }
            )
            for i in range(0, len(arguments), _ARGUMENT_PIECE)
        ]
    events.append(chunk({}, _finish_reason(reply)))
    if include_usage:
        events.append({**envelope, "choices": [], "usage": _usage(reply)})
    return "".join(f"data: {json.dumps(event)}\n\n" for event in events) + "data: [DONE]\n\n"


def ollama_body(reply: Reply, model: str, *, chat: bool) -> str:
    """An Ollama ``/api/chat`` (``chat``) or ``/api/generate`` reply, not streamed."""
    text = reply.content or ""
    answer: dict[str, Any] = (
        {"message": {"role": "assistant", "content": text}} if chat else {"response": text}
    )
    return json.dumps(
        {
            "model": model,
            "created_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            **answer,
            "done": True,
            "done_reason": _finish_reason(reply),
            "prompt_eval_count": reply.prompt_tokens,
            "eval_count": reply.completion_tokens,
        }
    )


def _envelope(model: str, kind: str) -> dict[str, Any]:
    return {
        "id": f"chatcmpl-{uuid.uuid4().hex[:12]}",
        "object": kind,
        "created": int(time.time()),
        "model": model,
    }


def _finish_reason(reply: Reply) -> str:
    if reply.finish_reason is not None:
        return reply.finish_reason
    return "tool_calls" if reply.tool_calls else "stop"


def _usage(reply: Reply) -> dict[str, int]:
    return {
        "prompt_tokens": reply.prompt_tokens,
        "completion_tokens": reply.completion_tokens,
        "total_tokens": reply.prompt_tokens + reply.completion_tokens,
    }
