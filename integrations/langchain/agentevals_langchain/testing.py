"""A scripted chat model for tests and demos: it works with ``create_agent`` (tool calling) offline.

LangChain's own fake chat models do not implement ``bind_tools``; this one does (it ignores the tools)
and replies through a function of the conversation, so concurrent runs never share a reply queue.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Sequence
from typing import Any

from langchain_core.callbacks import AsyncCallbackManagerForLLMRun, CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult

Responder = Callable[[list[BaseMessage]], AIMessage | str]


def tool_call(name: str, args: dict[str, Any], call_id: str | None = None) -> dict[str, Any]:
    """A tool call for ``AIMessage(tool_calls=[...])``."""
    return {"name": name, "args": args, "id": call_id or f"call_{uuid.uuid4().hex[:12]}", "type": "tool_call"}


class ScriptedChatModel(BaseChatModel):
    """A chat model whose reply is ``respond(messages)``: an ``AIMessage`` (maybe with tool calls) or text.

    Token usage is reported as word counts, so usage capture can be tested.

    >>> model = ScriptedChatModel(respond=lambda messages: "pong")
    >>> model.invoke("ping").content
    'pong'
    >>> replies = ScriptedChatModel.from_replies(["first", "second"])
    >>> [replies.invoke("x").content for _ in range(3)]
    ['first', 'second', 'second']
    """

    respond: Responder
    model_name: str = "scripted-chat-model"

    @classmethod
    def from_replies(cls, replies: Sequence[AIMessage | str], **kwargs: Any) -> ScriptedChatModel:
        """A model that gives ``replies`` in order, then repeats the last one (one conversation only)."""
        if not replies:
            raise ValueError("from_replies needs at least one reply")
        script = list(replies)
        position = [0]

        def respond(messages: list[BaseMessage]) -> AIMessage | str:
            reply = script[min(position[0], len(script) - 1)]
            position[0] += 1
            return reply

        return cls(respond=respond, **kwargs)

    @property
    def _llm_type(self) -> str:
        return "scripted"

    @property
    def _identifying_params(self) -> dict[str, Any]:
        return {"model_name": self.model_name}

    def bind_tools(self, tools: Sequence[Any], *, tool_choice: Any = None, **kwargs: Any) -> Any:
        return self

    def _reply(self, messages: list[BaseMessage]) -> ChatResult:
        reply = self.respond(list(messages))
        message = AIMessage(content=reply) if isinstance(reply, str) else reply.model_copy(deep=True)
        if message.usage_metadata is None:
            prompt_words = sum(len(m.text.split()) for m in messages)
            reply_words = len(message.text.split()) + 4 * len(message.tool_calls)
            message.usage_metadata = {
                "input_tokens": prompt_words,
                "output_tokens": reply_words,
                "total_tokens": prompt_words + reply_words,
            }
        return ChatResult(generations=[ChatGeneration(message=message)])

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        return self._reply(messages)

    async def _agenerate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        return self._reply(messages)
