"""How a judge asks for JSON: the structured output modes, the ``"auto"`` choice among them, the request
arguments of each, and the advice an error gives when replies keep failing to parse. Pure (no LiteLLM).

Servers take structured output differently: OpenAI and the providers LiteLLM knows take a JSON schema
(``json_schema``); the llama.cpp server also takes ``{"type": "json_object", "schema": ...}``
(``json_object_schema``); Ollama's own API takes the schema as ``format``. Every mode also states the
schema in the prompt, so a server that ignores the request still has it.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from functools import lru_cache
from typing import Any, Literal, get_args
from urllib.parse import urlsplit

from pydantic import BaseModel

from agentevals._scoring._judge._request import schema_text

Mode = Literal["json_schema", "json_object_schema", "json_object", "ollama", "prompt"]
StructuredOutput = Literal["auto", "json_schema", "json_object_schema", "json_object", "ollama", "prompt"]
MODES: tuple[str, ...] = get_args(StructuredOutput)

# Ollama's own API (LiteLLM's ``ollama/`` and ``ollama_chat/``) takes the schema as ``format``.
_OLLAMA = frozenset({"ollama", "ollama_chat"})
# vLLM enforces a ``json_schema`` (guided decoding) but only a generic object for ``json_object``;
# LM Studio refuses ``json_object``.
_JSON_SCHEMA = frozenset({"hosted_vllm", "lm_studio"})
# llama.cpp's server and llamafile take the schema with ``json_object``.
_JSON_OBJECT_SCHEMA = frozenset({"llamafile"})

#: The longest string the grammar modes (``json_object_schema``, ``ollama``) let a judge write.
GRAMMAR_STRING_LIMIT = 500
#: The steps between a bounded number's ``minimum`` and ``maximum`` in the grammar modes.
GRAMMAR_NUMBER_STEPS = 100
_OWN_STRING_BOUNDS = frozenset({"enum", "const", "pattern", "format", "maxLength"})

_ALTERNATIVES: dict[Mode, str] = {
    "json_schema": "try structured_output='json_object_schema' (llama.cpp server) or 'json_object'",
    "json_object_schema": "try structured_output='json_schema' (vLLM, LM Studio, recent llama.cpp) "
    "or 'json_object'",
    "json_object": "try structured_output='json_object_schema' (llama.cpp server) or 'json_schema'",
    "ollama": "try structured_output='json_object' (Ollama's JSON mode) or a larger model",
    "prompt": "try structured_output='json_schema' (OpenAI-compatible servers: vLLM, LM Studio, "
    "llama.cpp), 'json_object_schema' (llama.cpp server) or 'json_object'",
}


def check_mode(value: object) -> None:
    """Raise a ``ValueError`` listing the modes unless ``value`` names one."""
    if value not in MODES:
        raise ValueError(
            f"Judge(structured_output=...) must be one of {', '.join(map(repr, MODES))}, got {value!r}"
        )


def auto_mode(model: str, api_base: str | None, schema_supported: Callable[[str], bool]) -> Mode:
    """The mode ``"auto"`` picks for ``model`` at ``api_base``; ``schema_supported`` asks LiteLLM whether
    it knows the model to take a JSON schema (asked only when the provider does not decide).

    >>> knows = {"openai/gpt-4o-mini"}.__contains__
    >>> auto_mode("openai/gpt-4o-mini", "http://127.0.0.1:4000/v1", knows)
    'json_schema'
    >>> auto_mode("openai/smollm2", "http://127.0.0.1:8080/v1", knows)
    'json_object_schema'
    >>> auto_mode("ollama_chat/qwen3", None, knows)
    'ollama'
    """
    provider = model.split("/", 1)[0] if "/" in model else ""
    if provider in _OLLAMA:
        return "ollama"
    if provider in _JSON_SCHEMA or schema_supported(model):
        return "json_schema"
    if provider in _JSON_OBJECT_SCHEMA:
        return "json_object_schema"
    if provider == "openai":
        # A model LiteLLM does not know: at OpenAI, JSON mode; elsewhere an OpenAI-compatible server.
        return "json_object" if api_base is None or _is_openai(api_base) else "json_object_schema"
    return "prompt"  # a provider LiteLLM may refuse a response_format for: the prompt alone asks


def _is_openai(api_base: str) -> bool:
    host = (urlsplit(api_base).hostname or "").lower()
    return host == "openai.com" or host.endswith(".openai.com")


def mode_arguments(mode: Mode, schema: type[BaseModel]) -> dict[str, Any]:
    """The ``litellm.acompletion`` arguments that ask for ``schema`` in ``mode``. For ``json_schema`` the
    class itself: the LiteLLM shell sends it as LiteLLM would."""
    if mode == "json_schema":
        return {"response_format": schema}
    if mode == "json_object_schema":
        return {"response_format": {"type": "json_object", "schema": _schema_dict(schema)}}
    if mode == "json_object":
        return {"response_format": {"type": "json_object"}}
    if mode == "ollama":
        return {"format": _schema_dict(schema)}
    return {}


def _schema_dict(schema: type[BaseModel]) -> dict[str, Any]:
    # A fresh dict each call from the cached text: LiteLLM may edit what it is given.
    value: dict[str, Any] = json.loads(_grammar_schema_text(schema))
    return value


@lru_cache(maxsize=256)
def _grammar_schema_text(schema: type[BaseModel]) -> str:
    """``schema`` as the modes that turn it into a grammar send it, with the bounds their grammars can
    hold: every free string (no enum, pattern, format or length of its own) at most
    :data:`GRAMMAR_STRING_LIMIT` characters, so that a small model cannot spend its reply cap inside one
    string; and a number with a ``minimum`` and a ``maximum`` (which llama.cpp's grammars do not enforce)
    one of :data:`GRAMMAR_NUMBER_STEPS` + 1 evenly spaced values between them (two decimals for a score in
    [0, 1]). The JSON-schema mode sends the schema as it is: OpenAI's strict schemas refuse ``maxLength``
    and enforce ``minimum``/``maximum`` themselves."""
    return json.dumps(_grammar_bounds(json.loads(schema_text(schema))), ensure_ascii=False)


def _grammar_bounds(node: Any) -> Any:
    if isinstance(node, list):
        return [_grammar_bounds(item) for item in node]
    if not isinstance(node, dict):
        return node
    bounded = {key: _grammar_bounds(value) for key, value in node.items()}
    kind = bounded.get("type")
    if kind == "string" and not _OWN_STRING_BOUNDS & bounded.keys():
        bounded["maxLength"] = GRAMMAR_STRING_LIMIT
    elif kind == "number" and "enum" not in bounded:
        low, high = bounded.get("minimum"), bounded.get("maximum")
        if isinstance(low, int | float) and isinstance(high, int | float) and low < high:
            step = (high - low) / GRAMMAR_NUMBER_STEPS
            bounded["enum"] = [_plain(low + i * step) for i in range(GRAMMAR_NUMBER_STEPS + 1)]
    return bounded


def _plain(value: float) -> float | int:
    """``value`` as JSON writes it short: whole numbers without ``.0``, others without float noise."""
    rounded = round(value, 10)
    return int(rounded) if rounded.is_integer() else rounded


def advice(mode: Mode, chosen: bool) -> str:
    """What an error says to try when replies keep failing to parse under ``mode`` (``chosen`` by
    ``"auto"``)."""
    return f"the replies did not parse under structured_output={mode!r}{_how(chosen)}; {_ALTERNATIVES[mode]}"


def refusal_advice(mode: Mode, chosen: bool) -> str:
    """What an error says when the server refused a request (400) that asked for JSON in ``mode``."""
    return f"if the server refuses structured_output={mode!r}{_how(chosen)}, {_ALTERNATIVES[mode]}"


def _how(chosen: bool) -> str:
    return " (chosen by 'auto')" if chosen else ""
