"""What a worker is built from, each checked with an error that says how to fix it: the scorer
collection (``module:attribute``), the broker URL and the sinks' addresses."""

from __future__ import annotations

import importlib
import json
import os
import sys
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from agentevals._engine._config import ScorerEntry, normalize_scorers
from agentevals._engine._forward._codec import QUEUE
from agentevals._store._store import display_address, is_postgres_address

BROKER_SCHEMES = ("amqp://", "amqps://", "redis://", "rediss://", "unix://")
#: Redis broker maintenance (requeueing dead workers' messages) per million commands.
REDIS_MAINTENANCE_CHANCE = 100_000


#: The environment variable that hands a worker's settings to the processes Dramatiq starts.
CONFIG_ENV = "AGENTEVALS_WORKER_CONFIG"


@dataclass(frozen=True)
class WorkerConfig:
    """What ``agentevals worker`` was told: the broker, the scorer collection (``module:attribute``),
    the sinks (SQLite paths or ``postgresql://`` URLs), the queue, retries, the judge caps and rates,
    the budgets (``--budget`` texts), the ``--limits`` and ``--redact`` objects (``module:attribute``)
    and whether the circuit breaker is on."""

    broker: str
    scorers: str
    sinks: tuple[str, ...]
    queue: str = QUEUE
    max_retries: int = 10
    min_backoff_ms: int = 1_000
    max_backoff_ms: int = 60_000
    scorer_timeout: float | None = 60.0
    judge_concurrency: int | None = None
    model_concurrency: dict[str, int] = field(default_factory=dict)
    model_rates: dict[str, tuple[int, float]] = field(default_factory=dict)  # model: (requests, seconds)
    rate_limit_backend: str | None = None
    heartbeat_timeout_ms: int | None = None
    budgets: tuple[str, ...] = ()
    limits: str | None = None
    breaker: bool = True
    redact: str | None = None

    def to_env(self) -> str:
        return json.dumps(asdict(self))

    @classmethod
    def from_env(cls, text: str) -> WorkerConfig:
        data = json.loads(text)
        data["sinks"] = tuple(data["sinks"])
        data["budgets"] = tuple(data["budgets"])
        rates = data["model_rates"].items()
        data["model_rates"] = {model: (int(n), float(seconds)) for model, (n, seconds) in rates}
        return cls(**data)


def import_attribute(spec: str, option: str) -> Any:
    """The object ``module:attribute`` names (for ``option``, in error messages). The current directory
    is importable, as for ``python -m``."""
    module_name, _, attribute = spec.partition(":")
    if not module_name or not attribute:
        raise ValueError(f"{option} takes module:attribute (e.g. my_app.scoring:SCORERS), got {spec!r}")
    if os.getcwd() not in sys.path and "" not in sys.path:
        sys.path.insert(0, os.getcwd())
    try:
        module = importlib.import_module(module_name)
    except Exception as err:
        raise ValueError(
            f"{option} {spec}: cannot import {module_name!r} ({type(err).__name__}: {err}); run the worker "
            "where that module is importable (its directory, or PYTHONPATH)"
        ) from err
    try:
        return getattr(module, attribute)
    except AttributeError:
        raise ValueError(f"{option} {spec}: module {module_name!r} has no attribute {attribute!r}") from None


def load_scorers(spec: str) -> dict[str, ScorerEntry]:
    """The scorer collection ``module:attribute`` names (a mapping, a list or one scorer: what a
    ``ScoringEngine`` takes), keyed as the engine keys them."""
    collection = import_attribute(spec, "--scorers")
    try:
        return normalize_scorers(collection)
    except (TypeError, ValueError) as err:
        raise ValueError(f"--scorers {spec}: {err}") from err


def check_broker_url(url: str) -> str:
    if not url.startswith(BROKER_SCHEMES):
        raise ValueError(
            f"--broker {display_address(url)!r} is not a broker URL: give amqp://user:password@host:5672/ "
            "(RabbitMQ) or redis://host:6379/0 (Redis)"
        )
    return url


def make_broker(url: str, *, heartbeat_timeout_ms: int | None = None) -> Any:
    """A Dramatiq broker for ``url``: RabbitMQ for ``amqp://``/``amqps://``, Redis otherwise."""
    check_broker_url(url)
    if url.startswith(("amqp://", "amqps://")):
        from dramatiq.brokers.rabbitmq import RabbitmqBroker

        # Confirms: a retry (re-enqueued before the original is acked) is on the broker, not in flight.
        return RabbitmqBroker(url=url, confirm_delivery=True)
    from dramatiq.brokers.redis import RedisBroker

    # Dramatiq hands a dead worker's messages to another during "maintenance", run on 1 in 1,000 broker
    # commands by default: an idle queue (a fetch a second) could leave them for many minutes. 1 in 10
    # brings them back within seconds of the heartbeat timeout; the check is one cheap script call.
    options: dict[str, Any] = {"maintenance_chance": REDIS_MAINTENANCE_CHANCE}
    if heartbeat_timeout_ms is not None:
        options["heartbeat_timeout"] = heartbeat_timeout_ms
    return RedisBroker(url=url, **options)  # type: ignore[no-untyped-call]


def ping_broker(url: str, timeout: float = 5.0) -> None:
    """Connect to the broker once; a ``ValueError`` naming it (without its password) if that fails."""
    check_broker_url(url)
    try:
        if url.startswith(("amqp://", "amqps://")):
            import pika  # type: ignore[import-untyped]

            parameters = pika.URLParameters(url)
            parameters.socket_timeout = timeout
            parameters.blocked_connection_timeout = timeout
            pika.BlockingConnection(parameters).close()
        else:
            import redis

            redis.Redis.from_url(url, socket_connect_timeout=timeout).ping()
    except Exception as err:
        raise ValueError(
            f"cannot reach the broker at {display_address(url)} ({type(err).__name__}: {err}); is it "
            "running, and are the host, port and credentials right?"
        ) from err


def open_sinks(addresses: Sequence[str]) -> list[Any]:
    """A ``SQLiteSink`` (a file path) or ``PostgresSink`` (a ``postgresql://`` URL) per address, writing
    records and their runs (the stored-runs schema)."""
    from agentevals.sinks import PostgresSink, SQLiteSink

    if not addresses:
        raise ValueError("a worker needs a --sink: a SQLite path (scores.db) or a postgresql:// URL")
    return [PostgresSink(a) if is_postgres_address(a) else SQLiteSink(a) for a in addresses]
