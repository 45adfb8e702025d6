"""The canonical message model and converters from OpenAI-style dicts and LangChain messages."""

from agentevals._model._convert import messages_from_langchain, messages_from_openai
from agentevals._model._messages import AgentInput, Message, ToolInvocation

__all__ = ["AgentInput", "Message", "ToolInvocation", "messages_from_langchain", "messages_from_openai"]
