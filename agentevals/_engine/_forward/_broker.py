"""The Dramatiq side of publishing runs: a broker client for a URL, and a message put on a queue for the
workers' actor (the forwarder and ``agentevals replay --broker`` both publish through these)."""

from __future__ import annotations

import uuid
from typing import Any
from urllib.parse import urlsplit

from agentevals._engine._forward._codec import ACTOR
from agentevals._engine._forward._options import check_url
from agentevals._store._store import display_address


def make_broker(url: str) -> Any:
    """A Dramatiq broker for ``url`` (``amqp://`` or ``amqps://``: RabbitMQ with publisher confirms;
    ``redis://``, ``rediss://`` or ``unix://``: Redis). Nothing connects yet. A ``ValueError`` when the
    URL cannot be used or Dramatiq is not installed."""
    scheme = urlsplit(check_url(url)).scheme.lower()
    try:
        import dramatiq  # noqa: F401
    except ImportError as err:
        raise ValueError(
            'scoring on workers (broker=...) needs Dramatiq: pip install "agentevals-core[workers]"'
        ) from err
    try:
        if scheme.startswith("amqp"):
            from dramatiq.brokers.rabbitmq import RabbitmqBroker

            return RabbitmqBroker(url=_unblocking(url), confirm_delivery=True, middleware=[])
        import redis
        from dramatiq.brokers.redis import RedisBroker

        client = redis.Redis.from_url(url, socket_connect_timeout=5.0, socket_timeout=10.0)
        return RedisBroker(client=client, middleware=[])  # type: ignore[no-untyped-call]
    except (ValueError, TypeError, KeyError) as err:
        raise ValueError(f"broker URL {display_address(url)!r} cannot be read: {err}") from err


def _unblocking(url: str) -> str:
    """``url`` with ``blocked_connection_timeout=30`` unless it sets one: a RabbitMQ that blocks
    publishers (a memory or disk alarm) then fails the publish, retried later, instead of holding the
    forwarder's thread forever."""
    if ";" in url:  # several nodes, tried in turn
        return ";".join(_unblocking(part) for part in url.split(";"))
    if "blocked_connection_timeout=" in url:
        return url
    return f"{url}{'&' if urlsplit(url).query else '?'}blocked_connection_timeout=30"


def enqueue(broker: Any, queue: str, text: str) -> None:
    """Put the message text ``text`` (a batch, packed or not) on ``queue`` for the workers' actor."""
    import dramatiq

    message: dramatiq.Message[Any] = dramatiq.Message(
        queue_name=queue, actor_name=ACTOR, args=(text,), kwargs={}, options={}, message_id=uuid.uuid4().hex
    )
    broker.enqueue(message)
