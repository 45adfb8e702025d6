"""A fake HTTP server on 127.0.0.1 for the platform sinks' tests: records each request (method, path,
headers, JSON body) and answers from a table of routes, or with a forced status."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlsplit


@dataclass
class Request:
    method: str
    path: str
    query: str
    headers: dict[str, str]
    body: Any


@dataclass
class FakeServer:
    url: str = ""
    routes: dict[tuple[str, str], tuple[int, Any]] = field(default_factory=dict)
    requests: list[Request] = field(default_factory=list)
    #: When set, every request (but ``GET /info``) gets this status.
    status: int | None = None
    #: Statuses for the next requests (but ``GET /info``), in order, before ``status`` and the routes.
    script: list[int] = field(default_factory=list)

    def sent(self, method: str, path: str) -> list[Any]:
        return [r.body for r in self.requests if r.method == method and r.path == path]


@contextmanager
def fake_server(routes: dict[tuple[str, str], tuple[int, Any]]) -> Iterator[FakeServer]:
    state = FakeServer(routes=dict(routes))

    class Handler(BaseHTTPRequestHandler):
        def _handle(self) -> None:
            parts = urlsplit(self.path)
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            body = json.loads(raw) if raw else None
            state.requests.append(Request(self.command, parts.path, parts.query, dict(self.headers), body))
            status, answer = state.routes.get((self.command, parts.path), (404, {"detail": "not found"}))
            forced = state.script.pop(0) if state.script and parts.path != "/info" else state.status
            if forced is not None and parts.path != "/info":
                status, answer = forced, {"detail": f"forced {forced}"}
            data = json.dumps(answer).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        do_GET = do_POST = do_PATCH = _handle

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    state.url = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield state
    finally:
        server.shutdown()
        server.server_close()
