"""A fake OpenAI-compatible chat-completions server on 127.0.0.1, answering from a script.

Judge calls go through the real LiteLLM HTTP path, so retries on 429/5xx, timeouts and malformed JSON
are exercised as in production, without a real provider or an API key.
"""

from __future__ import annotations

import json
import threading
import time
import uuid
from collections import deque
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from agentevals._judge._judge import Judge
from agentevals._result import JudgeCall


@dataclass(frozen=True)
class Reply:
    """One scripted reply: text content, an HTTP error status, a delay, or a raw body.

    >>> Reply.json({"score": 1.0}).content
    '{"score": 1.0}'
    """

    content: str | None = ""
    status: int = 200
    delay: float = 0.0
    raw_body: str | None = None
    prompt_tokens: int = 12
    completion_tokens: int = 8

    @classmethod
    def text(cls, content: str) -> Reply:
        return cls(content=content)

    @classmethod
    def json(cls, value: Any) -> Reply:
        return cls(content=json.dumps(value))

    @classmethod
    def error(cls, status: int, message: str = "fake error") -> Reply:
        body = json.dumps({"error": {"message": message, "type": "fake_error", "code": status}})
        return cls(status=status, raw_body=body)

    @classmethod
    def rate_limited(cls) -> Reply:
        return cls.error(429, "Rate limit reached (fake)")

    @classmethod
    def server_error(cls) -> Reply:
        return cls.error(500, "Internal server error (fake)")

    @classmethod
    def slow(cls, seconds: float, then: Reply | str | Mapping[str, Any] = "") -> Reply:
        reply = as_reply(then)
        return Reply(
            content=reply.content,
            status=reply.status,
            delay=seconds,
            raw_body=reply.raw_body,
            prompt_tokens=reply.prompt_tokens,
            completion_tokens=reply.completion_tokens,
        )

    @classmethod
    def malformed(cls, content: str = '{"verdicts": [ this is not json') -> Reply:
        return cls(content=content)


def as_reply(value: Reply | str | Mapping[str, Any] | list[Any]) -> Reply:
    if isinstance(value, Reply):
        return value
    if isinstance(value, str):
        return Reply.text(value)
    return Reply.json(value)


@dataclass(frozen=True)
class ChatRequest:
    """A chat-completions request the server received: its JSON body and its headers.

    ``headers`` has lower-case names and is left out of the repr (it holds the ``authorization``).
    """

    body: dict[str, Any]
    headers: dict[str, str] = field(default_factory=dict, repr=False)

    @property
    def messages(self) -> list[dict[str, Any]]:
        return list(self.body.get("messages", []))

    @property
    def system(self) -> str:
        return next((str(m.get("content")) for m in self.messages if m.get("role") == "system"), "")

    @property
    def prompt(self) -> str:
        """The last user message's text."""
        users = [m for m in self.messages if m.get("role") == "user"]
        return str(users[-1].get("content", "")) if users else ""

    @property
    def model(self) -> str:
        return str(self.body.get("model", ""))


Responder = Callable[[ChatRequest], Reply | str | Mapping[str, Any] | list[Any]]


@dataclass(frozen=True)
class FakeJudge(Judge):
    """A :class:`~agentevals.Judge` pointed at a :class:`FakeJudgeServer`. Its calls go through LiteLLM
    like any other, but records name the model ``fake/<name>`` and cost nothing, so a store written
    against the fake server never shows real-looking spend."""

    def _recorded(self, call: JudgeCall) -> JudgeCall:
        name = call.model.rsplit("/", 1)[-1]
        return call.model_copy(update={"model": f"fake/{name}", "cost_usd": 0.0})


@dataclass
class FakeJudgeServer:
    """Serve scripted chat completions on ``http://127.0.0.1:<port>/v1``.

    Replies come from ``script`` in order, then from ``responder`` (called with each
    :class:`ChatRequest`); with neither left, the server answers 500 saying so.

    >>> with FakeJudgeServer([{"score": 0.5}]) as server:
    ...     judge = server.judge(instructions="Grade strictly.")
    ...     server.url.startswith("http://127.0.0.1:")
    True
    """

    script: Iterable[Reply | str | Mapping[str, Any] | list[Any]] = ()
    responder: Responder | None = None
    model: str = "gpt-4o-mini"
    requests: list[ChatRequest] = field(default_factory=list, init=False)
    _queue: deque[Reply] = field(default_factory=deque, init=False, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, init=False, repr=False)
    _server: ThreadingHTTPServer | None = field(default=None, init=False, repr=False)

    def __post_init__(self) -> None:
        self._queue.extend(as_reply(r) for r in self.script)

    @property
    def url(self) -> str:
        if self._server is None:
            raise RuntimeError("the FakeJudgeServer is not started; use it as a context manager")
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}/v1"

    def push(self, *replies: Reply | str | Mapping[str, Any] | list[Any]) -> None:
        """Append replies to the script."""
        with self._lock:
            self._queue.extend(as_reply(r) for r in replies)

    def judge(self, **overrides: Any) -> Judge:
        """A :class:`~agentevals.Judge` pointed at this server (fast backoff suited to tests)."""
        settings: dict[str, Any] = {
            "model": f"openai/{self.model}",
            "api_base": self.url,
            "api_key": "fake-key",
            "backoff": 0.01,
            "max_backoff": 0.05,
            "jitter": 0.01,
            "timeout": 10.0,
        }
        settings.update(overrides)
        return FakeJudge(**settings)

    def start(self) -> FakeJudgeServer:
        server = _Listener(("127.0.0.1", 0), _handler_for(self))
        threading.Thread(
            target=server.serve_forever, kwargs={"poll_interval": 0.02}, name="fake-judge", daemon=True
        ).start()
        self._server = server
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self) -> FakeJudgeServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _next_reply(self, request: ChatRequest) -> Reply:
        with self._lock:
            self.requests.append(request)
            if self._queue:
                return self._queue.popleft()
        if self.responder is not None:
            return as_reply(self.responder(request))
        return Reply.error(500, "FakeJudgeServer: no scripted reply left for this request")


class _Listener(ThreadingHTTPServer):
    """A thread a connection, and room for a burst of new ones: with ``socketserver``'s backlog of 5,
    32 clients connecting at once overflowed the accept queue, and the kernel's retries (a connection
    stalled for a second or more, or reset) showed up as judge latency."""

    daemon_threads = True
    request_queue_size = 1024


def _completion_body(reply: Reply, model: str) -> str:
    return json.dumps(
        {
            "id": f"chatcmpl-{uuid.uuid4().hex[:12]}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": model,
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": reply.content},
                    "finish_reason": "stop",
                }
            ],
            "usage": {
                "prompt_tokens": reply.prompt_tokens,
                "completion_tokens": reply.completion_tokens,
                "total_tokens": reply.prompt_tokens + reply.completion_tokens,
            },
        }
    )


def _handler_for(fake: FakeJudgeServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        # The headers and the body go out in two writes: with Nagle's algorithm on, the body waited for
        # the client's delayed ACK of the headers (~40 ms a reply on a kept-alive connection).
        disable_nagle_algorithm = True

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            try:
                body = json.loads(self.rfile.read(length) or b"{}")
            except json.JSONDecodeError:
                self._send(400, json.dumps({"error": {"message": "request body is not JSON"}}))
                return
            if not self.path.rstrip("/").endswith("/chat/completions"):
                self._send(404, json.dumps({"error": {"message": f"no route {self.path}"}}))
                return
            headers = {name.lower(): value for name, value in self.headers.items()}
            reply = fake._next_reply(ChatRequest(body=body, headers=headers))
            if reply.delay:
                time.sleep(reply.delay)
            payload = reply.raw_body if reply.raw_body is not None else _completion_body(reply, fake.model)
            self._send(reply.status, payload)

        def _send(self, status: int, payload: str) -> None:
            data = payload.encode()
            try:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client gave up (e.g. its timeout fired): nothing to answer

        def log_message(self, format: str, *args: Any) -> None:
            return

    return Handler
