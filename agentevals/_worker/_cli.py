"""``agentevals worker``: its options, and the checks that turn a bad one into a usage error before any
worker process starts (Dramatiq itself is imported only once they pass)."""

from __future__ import annotations

import argparse
import os
import sys

from agentevals._engine._forward._codec import QUEUE
from agentevals._scoring._judge._quiet import DEBUG_ENV
from agentevals._worker._check import check_config
from agentevals._worker._setup import WorkerConfig


def add_worker_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--broker", required=True, help="amqp://user:pass@host:5672/ or redis://host:6379/0")
    parser.add_argument(
        "--scorers",
        required=True,
        metavar="MODULE:ATTR",
        help="the scorers the agents' ScoringEngine uses (a ScorerEntry's max_concurrency holds per "
        "worker process)",
    )
    parser.add_argument(
        "--sink", action="append", required=True, help="a SQLite path or postgresql:// URL; repeatable"
    )
    parser.add_argument("--queue", default=QUEUE, help=f"the queue to consume (default {QUEUE})")
    parser.add_argument("--processes", type=int, default=1, help="worker processes (default 1)")
    parser.add_argument("--threads", type=int, default=8, help="runs scored at once per process (default 8)")
    parser.add_argument("--max-retries", type=int, default=10, help="tries after a sink outage (default 10)")
    parser.add_argument("--min-backoff", type=float, default=1.0, metavar="SECONDS", help="first retry delay")
    parser.add_argument("--max-backoff", type=float, default=60.0, metavar="SECONDS", help="longest delay")
    parser.add_argument(
        "--scorer-timeout", type=float, default=60.0, metavar="SECONDS", help="per scorer call (default 60)"
    )
    parser.add_argument(
        "--judge-concurrency",
        type=int,
        metavar="N",
        help="judge requests under way at once, across all workers of the queue (needs Redis)",
    )
    parser.add_argument(
        "--model-concurrency",
        action="append",
        default=[],
        metavar="MODEL=N",
        help="judge requests at once to one model, across all workers (needs Redis); repeatable",
    )
    parser.add_argument(
        "--model-rate",
        action="append",
        default=[],
        metavar="MODEL=N/WINDOW",
        help="at most N judge requests to one model per second, minute, hour or day, across all workers "
        "(needs Redis), e.g. openai/gpt-4o-mini=500/minute; retries count; repeatable",
    )
    parser.add_argument(
        "--budget",
        action="append",
        default=[],
        metavar="KIND=AMOUNT/WINDOW[,scorer=KEY]",
        help="a judge spend limit, e.g. usd=5/day, tokens=200000/hour, calls=1000/day,scorer=faithfulness; "
        "repeatable. Runs over it get skipped records (skip_reason='budget'). Shared by all workers of "
        "the queue when they have Redis (a redis:// broker or --rate-limit-backend); otherwise each "
        "worker process counts its own (N processes may spend N times the budget)",
    )
    parser.add_argument(
        "--limits",
        metavar="MODULE:ATTR",
        help="a dict {'budgets': [Budget(...)], 'breaker': Breaker(...) or None}, as ScoringEngine's "
        "budgets= and breaker= options (added to --budget)",
    )
    parser.add_argument(
        "--no-breaker",
        dest="breaker",
        action="store_false",
        help="turn off the circuit breaker per judge model (on by default, per worker process: open after "
        "5 consecutive transient failures, runs skipped with skip_reason='judge_unavailable' for 30 s)",
    )
    parser.add_argument(
        "--redact",
        metavar="MODULE:ATTR",
        help="a redactor applied to every record before the sinks, e.g. mask([EMAIL]) from "
        "agentevals.redaction (as ScoringEngine(redact=...))",
    )
    parser.add_argument(
        "--rate-limit-backend",
        metavar="REDIS_URL",
        help="Redis shared by the judge caps and budgets (default: a redis:// broker)",
    )
    parser.add_argument(
        "--heartbeat-timeout",
        type=float,
        metavar="SECONDS",
        help="Redis: redeliver a dead worker's runs after",
    )
    parser.add_argument(
        "--verbose",
        action="store_true",
        help=f"keep LiteLLM's own INFO lines for each judge call, left out by default (as {DEBUG_ENV}=1)",
    )


def run_worker(args: argparse.Namespace) -> int:
    """Check the options (``ValueError`` saying what is wrong), then run the workers until stopped."""
    config = worker_config(args)
    for name in ("processes", "threads"):
        _positive(getattr(args, name), f"--{name}")
    limits = check_config(config)
    if args.processes > 1 and config.rate_limit_backend is None and limits is not None and limits.budgets():
        print(
            f"agentevals worker: budgets are counted per worker process (no Redis): {args.processes} "
            "processes may together spend up to that many times each budget; give --rate-limit-backend "
            "redis://host:6379/0 to share them",
            file=sys.stderr,
        )
    keep_litellm_info(args.verbose)
    from agentevals._worker._actor import run_workers  # imports Dramatiq

    return run_workers(config, processes=args.processes, threads=args.threads)


def keep_litellm_info(verbose: bool) -> None:
    """``--verbose``: the worker processes, which inherit this environment, keep LiteLLM's INFO lines."""
    if verbose:
        os.environ[DEBUG_ENV] = "1"


def worker_config(args: argparse.Namespace) -> WorkerConfig:
    models = {}
    for item in args.model_concurrency:
        model, _, n = item.rpartition("=")
        if not model or not n.isdigit() or int(n) < 1:
            raise ValueError(
                f"--model-concurrency takes MODEL=N with N >= 1 (e.g. openai/gpt-4o=16), got {item!r}"
            )
        models[model] = int(n)
    rates = dict(model_rate(item) for item in args.model_rate)
    if args.judge_concurrency is not None:
        _positive(args.judge_concurrency, "--judge-concurrency")
    backend = args.rate_limit_backend
    if backend is None and args.broker.startswith(("redis://", "rediss://")):
        backend = args.broker
    if backend is None and (args.judge_concurrency is not None or models or rates):
        raise ValueError(
            "--judge-concurrency, --model-concurrency and --model-rate need a Redis every worker shares: "
            "add --rate-limit-backend redis://host:6379/0"
        )
    if args.max_retries < 0:
        raise ValueError(f"--max-retries must be >= 0, got {args.max_retries}")
    if not 0 < args.min_backoff <= args.max_backoff:
        raise ValueError("--min-backoff and --max-backoff must be seconds with 0 < min <= max")
    if args.scorer_timeout <= 0:
        raise ValueError(f"--scorer-timeout must be a positive number of seconds, got {args.scorer_timeout}")
    if args.heartbeat_timeout is not None and args.heartbeat_timeout <= 0:
        raise ValueError(
            f"--heartbeat-timeout must be a positive number of seconds, got {args.heartbeat_timeout}"
        )
    return WorkerConfig(
        broker=args.broker,
        scorers=args.scorers,
        sinks=tuple(args.sink),
        queue=args.queue,
        max_retries=args.max_retries,
        min_backoff_ms=round(args.min_backoff * 1000),
        max_backoff_ms=round(args.max_backoff * 1000),
        scorer_timeout=args.scorer_timeout,
        judge_concurrency=args.judge_concurrency,
        model_concurrency=models,
        model_rates=rates,
        rate_limit_backend=backend,
        heartbeat_timeout_ms=None if args.heartbeat_timeout is None else round(args.heartbeat_timeout * 1000),
        budgets=tuple(args.budget),
        limits=args.limits,
        breaker=args.breaker,
        redact=args.redact,
    )


_RATE_WINDOWS = {"second": 1.0, "minute": 60.0, "hour": 3600.0, "day": 86_400.0}


def model_rate(text: str) -> tuple[str, tuple[int, float]]:
    """``MODEL=N/WINDOW`` as ``(model, (N, seconds))``; a ``ValueError`` showing the form.

    >>> model_rate("openai/gpt-4o-mini=500/minute")
    ('openai/gpt-4o-mini', (500, 60.0))
    """
    model, _, rate = text.rpartition("=")
    count, _, window = rate.partition("/")
    if not model or not count.isdigit() or int(count) < 1 or window not in _RATE_WINDOWS:
        raise ValueError(
            f"--model-rate takes MODEL=N/WINDOW with N >= 1 and WINDOW one of {', '.join(_RATE_WINDOWS)} "
            f"(e.g. openai/gpt-4o-mini=500/minute), got {text!r}"
        )
    return model, (int(count), _RATE_WINDOWS[window])


def _positive(value: int, name: str) -> None:
    if value < 1:
        raise ValueError(f"{name} must be a whole number >= 1, got {value}")
