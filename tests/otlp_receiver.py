"""An OTLP/HTTP receiver on a free loopback port, for the tests of what reaches a collector."""

from __future__ import annotations

import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class OtlpReceiver:
    """Keeps the body of every request POSTed to ``endpoint`` (``http://127.0.0.1:PORT/v1/{signal}``) in
    :attr:`bodies`; the port is chosen at once, the server runs from :meth:`start` to :meth:`stop`."""

    def __init__(self, signal: str) -> None:
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            self.port: int = probe.getsockname()[1]
        self.endpoint = f"http://127.0.0.1:{self.port}/v1/{signal}"
        self.bodies: list[bytes] = []
        self._server: ThreadingHTTPServer | None = None

    def start(self) -> None:
        bodies = self.bodies

        class Receive(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                bodies.append(self.rfile.read(int(self.headers.get("Content-Length", 0))))
                self.send_response(200)
                self.send_header("Content-Type", "application/x-protobuf")
                self.end_headers()

            def log_message(self, *args: Any) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", self.port), Receive)
        threading.Thread(target=self._server.serve_forever, daemon=True).start()

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
