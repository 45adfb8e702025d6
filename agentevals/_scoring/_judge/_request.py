"""Pure construction of a judge request (no LiteLLM import)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from functools import lru_cache
from typing import Any

from pydantic import BaseModel, SecretStr

from agentevals._support._utf8 import mend_utf8

JUDGE_METADATA_KEY = "agentevals_judge"
"""Metadata flag set on every judge request sent through LiteLLM."""

JSON_INSTRUCTION = (
    "Reply with a single JSON object and nothing else. It must validate against this JSON schema:\n"
)

RETRY_INSTRUCTION = (
    "That reply is not valid: {problem}. Reply again with a single JSON object and nothing else, valid "
    "against the JSON schema given above."
)

_CAPS = frozenset({"max_tokens", "max_completion_tokens"})  # the reply caps LiteLLM takes


def build_messages(instructions: str, prompt: str, schema: type[BaseModel] | None) -> list[dict[str, str]]:
    """The chat messages for one judge call: the instructions as system prompt, the step prompt as user
    (both :func:`~agentevals._support._utf8.mend_utf8`)."""
    user = mend_utf8(prompt)
    if schema is not None:
        user = f"{user}\n\n{JSON_INSTRUCTION}{schema_text(schema)}"
    messages = [{"role": "user", "content": user}]
    if instructions:
        messages.insert(0, {"role": "system", "content": mend_utf8(instructions)})
    return messages


@lru_cache(maxsize=256)
def schema_text(schema: type[BaseModel]) -> str:
    """``schema``'s JSON schema as compact text, built once per class (pydantic builds it anew on every
    ``model_json_schema`` call, which on every judge call of a busy worker adds up)."""
    return json.dumps(schema.model_json_schema(), ensure_ascii=False, separators=(",", ":"))


def build_request(
    *,
    model: str,
    instructions: str,
    prompt: str,
    schema: type[BaseModel] | None,
    output: Mapping[str, Any],
    max_tokens: int | None,
    temperature: float | None,
    timeout: float,
    api_base: str | None,
    api_key: SecretStr | str | None,
    extra: dict[str, Any],
) -> dict[str, Any]:
    """Keyword arguments for ``litellm.acompletion``.

    ``output`` holds the arguments that ask for structured output (the judge's mode, see
    :mod:`~agentevals._scoring._judge._structured`); ``max_tokens`` caps the reply unless ``extra`` sets a
    cap of its own. LiteLLM's and the OpenAI SDK's own retries are switched off (``max_retries=0``):
    retries are ours, so that they are counted, bounded and logged in one place. Secrets (``api_key``,
    the credential entries of ``extra``) stay ``SecretStr`` here: ``_litellm.acompletion`` reveals them.
    """
    request: dict[str, Any] = {
        "model": model,
        "messages": build_messages(instructions, prompt, schema),
        "timeout": timeout,
        "max_retries": 0,
        "num_retries": 0,
    }
    if temperature is not None:
        request["temperature"] = temperature
    if schema is not None:
        request.update(output)
    if max_tokens is not None and not _CAPS & extra.keys():
        request["max_tokens"] = max_tokens
    if api_base is not None:
        request["api_base"] = api_base
    if api_key is not None:
        request["api_key"] = api_key
    request.update(extra)
    # Marks the call as a judge call, so integrations that score LiteLLM traffic never score it.
    request["metadata"] = {**(extra.get("metadata") or {}), JUDGE_METADATA_KEY: True}
    return request


def with_feedback(request: Mapping[str, Any], reply: str, problem: str) -> dict[str, Any]:
    """``request`` followed by the judge's invalid ``reply`` and a user message saying what was wrong with
    it (``problem``), for the next attempt: at temperature 0 the same request would get the same reply.

    >>> retry = with_feedback({"messages": [{"role": "user", "content": "Rate it."}]}, "{}", "score: missing")
    >>> [m["role"] for m in retry["messages"]], retry["messages"][-1]["content"][:40]
    (['user', 'assistant', 'user'], 'That reply is not valid: score: missing.')
    """
    messages = [
        *request["messages"],
        {"role": "assistant", "content": mend_utf8(reply)},
        {"role": "user", "content": RETRY_INSTRUCTION.format(problem=problem)},
    ]
    return {**request, "messages": messages}
