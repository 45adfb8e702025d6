"""A fake OpenAI-compatible chat-completions server on 127.0.0.1, answering from a script.

Judge calls go through the real LiteLLM HTTP path, so retries on 429/5xx, timeouts and malformed JSON
are exercised as in production, without a real provider or an API key. The same server can play the
agent's model (tool calls, streamed replies), so a real OpenAI client drives an agent offline.
"""

from __future__ import annotations

import json
import threading
import time
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from agentevals._model._result import JudgeCall
from agentevals._scoring._judge._judge import Judge
from agentevals.testing._reply import ChatRequest, Reply, ReplyLike, Responder, as_reply
from agentevals.testing._wire import completion_body, event_stream, ollama_body


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

    Requests naming the model ``agent_model`` are the agent's, served apart (live scoring judges an
    agent while it runs, so the two kinds of requests interleave): from ``agent_script``, then
    ``agent_responder``. Point an OpenAI client at ``url`` with that model, e.g.
    ``ChatOpenAI(model="fake-agent", base_url=server.url, api_key="fake")``. A request with
    ``"stream": true`` gets the reply as server-sent chunks. Ollama's own ``/api/chat`` and
    ``/api/generate`` are served too (LiteLLM's ``ollama_chat/`` and ``ollama/`` models, with ``api_base``
    the server's ``url``), not streamed.

    >>> with FakeJudgeServer([{"score": 0.5}]) as server:
    ...     judge = server.judge(instructions="Grade strictly.")
    ...     server.url.startswith("http://127.0.0.1:")
    True
    >>> agent_turns = [Reply.tool_call("get_weather", city="Paris"), "It is sunny."]
    >>> FakeJudgeServer(agent_script=agent_turns).agent_model
    'fake-agent'
    """

    script: Iterable[ReplyLike] = ()
    responder: Responder | None = None
    model: str = "gpt-4o-mini"
    agent_script: Iterable[ReplyLike] = ()
    agent_responder: Responder | None = None
    agent_model: str = "fake-agent"
    requests: list[ChatRequest] = field(default_factory=list, init=False)
    _queue: deque[Reply] = field(default_factory=deque, init=False, repr=False)
    _agent_queue: deque[Reply] = field(default_factory=deque, init=False, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, init=False, repr=False)
    _server: ThreadingHTTPServer | None = field(default=None, init=False, repr=False)

    def __post_init__(self) -> None:
        if self.model == self.agent_model:
            raise ValueError(
                f"FakeJudgeServer: model and agent_model are both {self.model!r}; give the agent's model "
                "another name (agent_model=...) so judge and agent requests can be told apart"
            )
        self._queue.extend(as_reply(r) for r in self.script)
        self._agent_queue.extend(as_reply(r) for r in self.agent_script)

    @property
    def url(self) -> str:
        if self._server is None:
            raise RuntimeError("the FakeJudgeServer is not started; use it as a context manager")
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}/v1"

    def push(self, *replies: ReplyLike) -> None:
        """Append replies to the script."""
        with self._lock:
            self._queue.extend(as_reply(r) for r in replies)

    def push_agent(self, *replies: ReplyLike) -> None:
        """Append replies to the agent's script."""
        with self._lock:
            self._agent_queue.extend(as_reply(r) for r in replies)

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
        is_agent = request.model == self.agent_model
        queue, responder = (
            (self._agent_queue, self.agent_responder) if is_agent else (self._queue, self.responder)
        )
        with self._lock:
            self.requests.append(request)
            if queue:
                return queue.popleft()
        if responder is None:
            left = "agent reply (agent_script, agent_responder)" if is_agent else "reply"
            return Reply.error(500, f"FakeJudgeServer: no scripted {left} left for this request")
        try:
            return as_reply(responder(request))
        # A bug in a test's responder: say so, where the client would only see a dropped connection.
        except Exception as exc:
            name = "agent_responder" if is_agent else "responder"
            return Reply.error(500, f"FakeJudgeServer: the {name} raised {type(exc).__name__}: {exc}")


class _Listener(ThreadingHTTPServer):
    """A thread a connection, and room for a burst of new ones: with ``socketserver``'s backlog of 5,
    32 clients connecting at once overflowed the accept queue, and the kernel's retries (a connection
    stalled for a second or more, or reset) showed up as judge latency."""

    daemon_threads = True
    request_queue_size = 1024


def _handler_for(fake: FakeJudgeServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        # The headers and the body go out in two writes: with Nagle's algorithm on, the body waited for
        # the client's delayed ACK of the headers on a kept-alive connection.
        disable_nagle_algorithm = True

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            try:
                body = json.loads(self.rfile.read(length) or b"{}")
            except json.JSONDecodeError:
                body = None
            if not isinstance(body, dict):
                self._send(400, json.dumps({"error": {"message": "request body is not a JSON object"}}))
                return
            path = self.path.rstrip("/")
            ollama = path.endswith(("/api/chat", "/api/generate"))
            if not (ollama or path.endswith("/chat/completions")):
                self._send(404, json.dumps({"error": {"message": f"no route {self.path}"}}))
                return
            headers = {name.lower(): value for name, value in self.headers.items()}
            request = ChatRequest(body=body, headers=headers)
            reply = fake._next_reply(request)
            if reply.delay:
                time.sleep(reply.delay)
            if reply.raw_body is not None:
                self._send(reply.status, reply.raw_body)
            elif ollama:
                self._send(reply.status, ollama_body(reply, self._model(request), chat=path.endswith("chat")))
            elif body.get("stream"):
                options = body.get("stream_options")
                usage = isinstance(options, dict) and bool(options.get("include_usage"))
                stream = event_stream(reply, self._model(request), include_usage=usage)
                self._send(reply.status, stream, "text/event-stream")
            else:
                self._send(reply.status, completion_body(reply, self._model(request)))

        def _model(self, request: ChatRequest) -> str:
            return request.model if request.model == fake.agent_model else fake.model

        def _send(self, status: int, payload: str, content_type: str = "application/json") -> None:
            data = payload.encode()
            try:
                self.send_response(status)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client gave up (e.g. its timeout fired): nothing to answer

        def log_message(self, format: str, *args: Any) -> None:
            return

    return Handler
