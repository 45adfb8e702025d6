"""Test doubles for agentevals users: a fake OpenAI-compatible server on 127.0.0.1 for judges and agents,
and an engine that keeps the runs an integration captures."""

from agentevals.testing._assertions import assert_scores
from agentevals.testing._fake_judge import FakeJudge, FakeJudgeServer
from agentevals.testing._recording_engine import RecordingEngine
from agentevals.testing._reply import ChatRequest, Reply, ToolCall
from agentevals.testing._schema_replies import schema_responder

__all__ = [
    "ChatRequest",
    "FakeJudge",
    "FakeJudgeServer",
    "RecordingEngine",
    "Reply",
    "ToolCall",
    "assert_scores",
    "schema_responder",
]
