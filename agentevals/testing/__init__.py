"""Test doubles for agentevals users: a fake OpenAI-compatible judge server on 127.0.0.1."""

from agentevals.testing._assertions import assert_scores
from agentevals.testing._fake_judge import ChatRequest, FakeJudge, FakeJudgeServer, Reply
from agentevals.testing._schema_replies import schema_responder

__all__ = ["ChatRequest", "FakeJudge", "FakeJudgeServer", "Reply", "assert_scores", "schema_responder"]
