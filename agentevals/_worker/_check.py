"""The one check ``agentevals worker`` makes before it starts its processes: everything a worker is
built from, tried once, with an error that says what to fix."""

from __future__ import annotations

from agentevals._scoring._limits._gate import EngineLimits
from agentevals._worker._limits import engine_limits, load_redactor
from agentevals._worker._setup import (
    WorkerConfig,
    check_broker_url,
    load_scorers,
    open_sinks,
    ping_broker,
)


def check_config(config: WorkerConfig) -> EngineLimits | None:
    """Everything a worker needs, tried once: the scorers import, the budgets, ``--limits`` and
    ``--redact`` are valid, the broker and the rate-limit Redis answer, the sinks can be written. A
    ``ValueError`` saying what to fix otherwise. Returns the budgets and breaker a process gets."""
    from agentevals.sinks import SinkConfigError

    try:
        import dramatiq  # noqa: F401
    except ImportError as err:
        raise ValueError(
            f'agentevals worker needs Dramatiq ({err}): pip install "agentevals-core[workers]"'
        ) from err
    check_broker_url(config.broker)
    entries = load_scorers(config.scorers)
    limits = engine_limits(config, entries)
    load_redactor(config.redact)
    ping_broker(config.broker)
    if config.rate_limit_backend is not None:
        if not config.rate_limit_backend.startswith(("redis://", "rediss://", "unix://")):
            raise ValueError(f"--rate-limit-backend takes a redis:// URL, got {config.rate_limit_backend!r}")
        ping_broker(config.rate_limit_backend)
    for sink in open_sinks(config.sinks):
        try:
            sink.check()
        except SinkConfigError as err:
            raise ValueError(str(err)) from err
    return limits
