"""Converters from OpenAI-style message dicts and LangChain messages into canonical messages.

Tool results (OpenAI ``role="tool"`` messages, LangChain ``ToolMessage``) are folded into the matching
``ToolInvocation`` of the assistant message that made the call, as the canonical message shape expects.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from agentevals._model._messages import AgentInput, Message, ToolInvocation

_ROLE_ALIASES = {"human": "user", "ai": "assistant", "developer": "system", "function": "tool"}


def messages_from_openai(messages: Iterable[Mapping[str, Any]]) -> list[Message]:
    """Convert OpenAI chat-completions messages (dicts) into canonical messages.

    >>> msgs = messages_from_openai([{"role": "user", "content": "hi"},
    ...                              {"role": "assistant", "content": "hello"}])
    >>> [m.role for m in msgs]
    ['user', 'assistant']
    """
    reject_text(messages, "messages_from_openai()")
    out: list[Message] = []
    pending: dict[str, ToolInvocation] = {}
    for raw in messages:
        role = _ROLE_ALIASES.get(str(raw.get("role")), str(raw.get("role")))
        if role == "tool":
            _attach_tool_result(out, pending, raw.get("tool_call_id"), raw.get("content"), raw)
            continue
        invocations = [_invocation_from_openai(call) for call in raw.get("tool_calls") or []]
        for inv in invocations:
            pending[inv.tool_call_id] = inv
        reasoning = raw.get("reasoning_content") or raw.get("reasoning")
        out.append(
            Message(
                role=role,
                content=_text(raw.get("content")),
                tool_invocations=invocations,
                reasoning=reasoning if isinstance(reasoning, str) and reasoning else None,
                name=raw.get("name"),
                id=raw.get("id"),
            )
        )
    return out


# One LangChain message as plain values: (role, content, name, id, tool calls as (id, name, args),
# reasoning, tool_call_id, failed). Tuples of strings are untracked by the garbage collector, so a
# finished run can wait to be scored holding these instead of the messages themselves.
LangChainParts = tuple[str, Any, Any, Any, tuple[tuple[str, Any, Any], ...], str | None, Any, bool]


def messages_from_langchain(messages: Sequence[Any]) -> list[Message]:
    """Convert LangChain messages (or anything ``convert_to_messages`` accepts) into canonical messages."""
    return messages_from_parts(langchain_parts(messages))


def langchain_parts(messages: Sequence[Any]) -> tuple[LangChainParts, ...]:
    """What :func:`messages_from_parts` needs of each LangChain message (or ``convert_to_messages`` input)."""
    reject_text(messages, "messages_from_langchain()")
    AIMessage, BaseMessage, ToolMessage, convert_to_messages = _langchain_messages()
    items = messages if all(isinstance(m, BaseMessage) for m in messages) else convert_to_messages(messages)
    parts: list[LangChainParts] = []
    for msg in items:
        content = msg.content
        if isinstance(msg, ToolMessage):
            failed = getattr(msg, "status", "success") == "error"
            parts.append(("tool", content, None, None, (), None, msg.tool_call_id, failed))
            continue
        calls: tuple[tuple[str, Any, Any], ...] = ()
        reasoning = None
        if isinstance(msg, AIMessage):
            calls = tuple((call.get("id") or "", call["name"], call.get("args")) for call in msg.tool_calls)
            reasoning = _langchain_reasoning(msg)
        text = content if isinstance(content, str) else str(msg.text)
        parts.append((_langchain_role(msg), text, msg.name, msg.id, calls, reasoning, None, False))
    return tuple(parts)


def _langchain_role(msg: Any) -> str:
    """The role of a LangChain message: its type, a streamed chunk's too ("AIMessageChunk" is "ai"),
    or a ``ChatMessage``'s own role."""
    kind = str(msg.type).removesuffix("MessageChunk").lower()
    if kind == "chat":
        kind = str(getattr(msg, "role", kind))
    return _ROLE_ALIASES.get(kind, kind)


@functools.cache
def _langchain_messages() -> tuple[Any, Any, Any, Callable[[Any], list[Any]]]:
    """LangChain's message classes, imported once (an import statement costs microseconds per call)."""
    try:
        from langchain_core.messages import AIMessage, BaseMessage, ToolMessage, convert_to_messages
    except ImportError as err:
        raise ImportError(
            "these messages are neither agentevals Messages nor OpenAI-style dicts; reading them as "
            "LangChain messages needs LangChain: pip install 'agentevals-core[langchain]'"
        ) from err

    return AIMessage, BaseMessage, ToolMessage, convert_to_messages


def messages_from_parts(parts: Iterable[LangChainParts]) -> list[Message]:
    """Canonical messages from :func:`langchain_parts`; tool results join the calls they answer."""
    out: list[Message] = []
    pending: dict[str, ToolInvocation] = {}
    for role, content, name, message_id, calls, reasoning, tool_call_id, failed in parts:
        if role == "tool":
            _attach_tool_result(out, pending, tool_call_id, content, None, failed=failed)
            continue
        invocations = [
            ToolInvocation(tool_call_id=call_id, tool_name=tool, args=dict(args or {}), state="call")
            for call_id, tool, args in calls
        ]
        for inv in invocations:
            pending[inv.tool_call_id] = inv
        out.append(
            Message(
                role=role,
                content=content,
                tool_invocations=invocations,
                reasoning=reasoning,
                name=name,
                id=message_id,
            )
        )
    return out


def to_messages(messages: Sequence[Any]) -> list[Message]:
    """Convert a sequence of canonical, OpenAI-style or LangChain messages into canonical messages."""
    reject_text(messages, "a message list")
    items = list(messages)
    if all(isinstance(m, Message) for m in items):
        return items
    if all(isinstance(m, Mapping) for m in items):
        if any("tool_calls" in m or m.get("role") in ("tool", "function") for m in items):
            return messages_from_openai(items)
        return [Message.model_validate(_with_known_role(m)) for m in items]
    return messages_from_langchain(items)


def reject_text(messages: Any, what: str) -> None:
    """Raise ``TypeError`` for a bare string (or bytes) where a list of messages is expected.

    A string is a sequence too: read as messages it would silently become one message per character.
    """
    if isinstance(messages, str | bytes):
        raise TypeError(
            f"{what} takes a list of messages (OpenAI-style dicts, LangChain messages or agentevals "
            f"Messages), not a string: pass [{{'role': 'user', 'content': {str(messages)[:40]!r}}}, ...], "
            "or for a plain text exchange Run(input=..., output=...)"
        )


def split_conversation(messages: Sequence[Message]) -> tuple[AgentInput, list[Message]]:
    """Split a conversation at its last user message into the agent's input and its output."""
    system = [m for m in messages if m.role == "system"]
    rest = [m for m in messages if m.role != "system"]
    last_user = max((i for i, m in enumerate(rest) if m.role == "user"), default=-1)
    agent_input = AgentInput(
        input_messages=rest[last_user : last_user + 1] if last_user >= 0 else [],
        remembered_messages=rest[:last_user] if last_user > 0 else [],
        system_messages=system,
    )
    return agent_input, rest[last_user + 1 :]


def _with_known_role(message: Mapping[str, Any]) -> Mapping[str, Any]:
    role = message.get("role")
    if role in _ROLE_ALIASES:
        return {**message, "role": _ROLE_ALIASES[str(role)]}
    return message


def _invocation_from_openai(call: Mapping[str, Any]) -> ToolInvocation:
    function = call.get("function") or {}
    arguments = function.get("arguments")
    if isinstance(arguments, str):
        try:
            args = json.loads(arguments) if arguments.strip() else {}
        except json.JSONDecodeError:
            args = {"_raw": arguments}
    else:
        args = dict(arguments or {})
    if not isinstance(args, dict):
        args = {"value": args}
    return ToolInvocation(
        tool_call_id=str(call.get("id") or ""),
        tool_name=str(function.get("name")),
        args=args,
        state="call",
    )


def _attach_tool_result(
    out: list[Message],
    pending: dict[str, ToolInvocation],
    tool_call_id: Any,
    content: Any,
    raw: Mapping[str, Any] | None,
    *,
    failed: bool = False,
) -> None:
    result = parse_json_text(_text(content)) if isinstance(content, str | list) else content
    invocation = pending.pop(str(tool_call_id), None) if tool_call_id is not None else None
    if invocation is not None:
        invocation.result = result
        invocation.state = "error" if failed else "result"
        if failed:
            invocation.error = _text(content)
        return
    name = raw.get("name") if raw else None
    out.append(Message(role="tool", content=_text(content), name=name))


def parse_json_text(text: str) -> Any:
    """``text`` parsed as JSON when it holds a JSON object or array, else ``text`` itself."""
    stripped = text.strip()
    if stripped[:1] in ("{", "["):
        try:
            return json.loads(stripped)
        except json.JSONDecodeError:
            pass
    return text


def _text(content: Any) -> str:
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        texts = []
        for part in content:
            if isinstance(part, str):
                texts.append(part)
            elif isinstance(part, Mapping) and part.get("type") == "text":
                texts.append(str(part.get("text", "")))
        return "".join(texts)
    return str(content)


def _langchain_reasoning(msg: Any) -> str | None:
    if isinstance(msg.content, str) and not msg.additional_kwargs:
        return None  # reasoning lives in content blocks or provider extras; neither is here
    texts = [
        str(block.get("reasoning", ""))
        for block in msg.content_blocks
        if isinstance(block, Mapping) and block.get("type") == "reasoning" and block.get("reasoning")
    ]
    if not texts:
        extra = msg.additional_kwargs.get("reasoning_content")
        return extra if isinstance(extra, str) and extra else None
    return "\n".join(texts)
