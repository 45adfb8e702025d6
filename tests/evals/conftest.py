"""Fakes for the run_evals tests: a chat model that answers by question (safe under concurrency)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import pytest
from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from pydantic import Field


class QuestionChatModel(BaseChatModel):
    """Answers the last human message from ``answers``; questions in ``tool_calls`` first call a tool.

    Unlike the list-driven fakes, each reply depends only on the conversation, so concurrent items
    cannot steal each other's scripted replies.
    """

    answers: dict[str, str]
    tool_calls: dict[str, dict[str, Any]] = Field(default_factory=dict)
    default: str = "I don't know."

    @property
    def _llm_type(self) -> str:
        return "question-fake"

    def bind_tools(self, tools: Any, *, tool_choice: Any = None, **kwargs: Any) -> QuestionChatModel:
        return self

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        question = next(str(m.content) for m in reversed(messages) if isinstance(m, HumanMessage))
        last = messages[-1]
        if isinstance(last, ToolMessage):
            reply = AIMessage(content=f"{self.answers.get(question, self.default)} ({last.content})")
        elif question in self.tool_calls:
            call = self.tool_calls[question]
            reply = AIMessage(content="", tool_calls=[{**call, "type": "tool_call"}])
        else:
            reply = AIMessage(content=self.answers.get(question, self.default))
        return ChatResult(generations=[ChatGeneration(message=reply)])


@pytest.fixture
def chat_model() -> Callable[..., QuestionChatModel]:
    def make(answers: Mapping[str, str], **kwargs: Any) -> QuestionChatModel:
        return QuestionChatModel(answers=dict(answers), **kwargs)

    return make
