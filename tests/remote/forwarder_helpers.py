"""What the agent-side remote tests share: the real brokers (a test skips with the reason when one is
absent, and fails under CI=true), reading back what a queue holds, and a TCP proxy that plays a broker
going down and up. The fixtures are in ``conftest.py``."""

from __future__ import annotations

import contextlib
import json
import os
import socket
import threading
from typing import Any

import pytest

RABBITMQ = ("amqp://guest:guest@127.0.0.1:5672/", 5672, "RabbitMQ")
REDIS = ("redis://127.0.0.1:6379/0", 6379, "Redis")
BROKERS = {"rabbitmq": RABBITMQ, "redis": REDIS}


def _reachable(url: str, port: int, name: str) -> str:
    try:
        socket.create_connection(("127.0.0.1", port), timeout=2).close()
    except OSError as err:
        reason = f"no {name} on 127.0.0.1:{port} ({err}); start it to run the remote scoring tests"
        if os.environ.get("CI"):
            pytest.fail(reason)
        pytest.skip(reason)
    return url


class Broker:
    """One real broker: its URL and port, and what a test queue on it holds."""

    def __init__(self, kind: str) -> None:
        self.kind = kind
        url, self.port, name = BROKERS[kind]
        self.url = _reachable(url, self.port, name)

    def url_via(self, port: int) -> str:
        """This broker's URL with another port (a proxy's, or one where nothing listens)."""
        return self.url.replace(f":{self.port}/", f":{port}/")

    def drain(self, queue: str) -> list[dict[str, Any]]:
        """Take every message from ``queue``: the Dramatiq messages as JSON data, in queue order."""
        return [json.loads(body) for body in self.drain_bodies(queue)]

    def drain_bodies(self, queue: str) -> list[bytes]:
        """Take every message from ``queue``: each body as the broker holds it, in queue order."""
        if self.kind == "rabbitmq":
            import pika

            conn = pika.BlockingConnection(pika.URLParameters(self.url))
            try:
                channel = conn.channel()
                found = []
                while True:
                    _method, _properties, body = channel.basic_get(queue, auto_ack=True)
                    if body is None:
                        return found
                    found.append(bytes(body))
            finally:
                conn.close()
        import redis

        client = redis.Redis.from_url(self.url)
        try:
            ids = client.lrange(f"dramatiq:{queue}", 0, -1)
            bodies = client.hgetall(f"dramatiq:{queue}.msgs")
            assert len(bodies) == len(ids), "the queue's list and its messages disagree"
            client.delete(f"dramatiq:{queue}", f"dramatiq:{queue}.msgs")
            return [bytes(bodies[i]) for i in ids]
        finally:
            client.close()

    def drain_runs(self, queue: str) -> list[Any]:
        """Take every message from ``queue``: the runs they carry (``RemoteRun``), in order."""
        from agentevals._engine._forward._codec import runs_from_message

        return [remote for message in self.drain(queue) for remote in runs_from_message(message["args"][0])]

    def delete(self, queue: str) -> None:
        """Remove ``queue`` and the delay and dead-letter queues Dramatiq declares beside it."""
        if self.kind == "rabbitmq":
            import pika

            conn = pika.BlockingConnection(pika.URLParameters(self.url))
            try:
                channel = conn.channel()
                for name in (queue, f"{queue}.DQ", f"{queue}.XQ"):
                    channel.queue_delete(name)
            finally:
                conn.close()
            return
        import redis

        client = redis.Redis.from_url(self.url)
        try:
            keys = client.keys(f"dramatiq:{queue}*")
            if keys:
                client.delete(*keys)
        finally:
            client.close()


def free_port() -> int:
    """A loopback port where nothing listens (right now)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


class TcpProxy:
    """Forwards 127.0.0.1:``port`` to 127.0.0.1:``target`` while started: a broker that comes and goes."""

    def __init__(self, port: int, target: int) -> None:
        self.port = port
        self.target = target
        self._listener: socket.socket | None = None
        self._sockets: list[socket.socket] = []
        self._lock = threading.Lock()

    def start(self) -> None:
        listener = socket.socket()
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", self.port))
        listener.listen(16)
        self._listener = listener
        threading.Thread(target=self._accept, args=(listener,), daemon=True).start()

    def stop(self) -> None:
        """Stop listening and cut every open connection."""
        if self._listener is not None:
            self._listener.close()
            self._listener = None
        with self._lock:
            for sock in self._sockets:
                with contextlib.suppress(OSError):
                    sock.shutdown(socket.SHUT_RDWR)
                sock.close()
            self._sockets.clear()

    def _accept(self, listener: socket.socket) -> None:
        while True:
            try:
                client, _ = listener.accept()
            except OSError:
                return
            try:
                upstream = socket.create_connection(("127.0.0.1", self.target))
            except OSError:
                client.close()
                continue
            for sock in (client, upstream):  # no Nagle delay: one confirmation at a time goes through
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            with self._lock:
                self._sockets += [client, upstream]
            for src, dst in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pump, args=(src, dst), daemon=True).start()

    @staticmethod
    def _pump(src: socket.socket, dst: socket.socket) -> None:
        try:
            while data := src.recv(65536):
                dst.sendall(data)
        except OSError:
            pass
        finally:
            with contextlib.suppress(OSError):
                dst.shutdown(socket.SHUT_WR)
