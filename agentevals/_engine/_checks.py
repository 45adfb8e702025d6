"""What the engine verifies at construction (scorers' judges, sinks) and its default, visible sink."""

from __future__ import annotations

import logging
import sys
from collections.abc import Callable, Mapping, Sequence
from functools import partial

from agentevals._engine._config import ScorerEntry
from agentevals._scoring._judge._litellm import deferred_checks, warm_up_in_background
from agentevals.sinks._logging import LoggingSink
from agentevals.sinks._protocol import Sink, sink_name

logger = logging.getLogger("agentevals.engine")

_SKIP_HINT = "pass check=False to ScoringEngine to skip this check (e.g. when keys are set later)"
_RESULTS_LOGGER = "agentevals.results"
_warned_no_sinks = False


def check_scorers(entries: Mapping[str, ScorerEntry]) -> None:
    """Each scorer's :meth:`~agentevals.Scorer.check` (its judges' configuration, no model call); the
    first problem as a ``ValueError`` naming the scorer.

    LiteLLM is not imported on the caller's thread: the keys of the common providers are looked up
    directly, and when a scorer calls a judge, a thread of its own imports LiteLLM (judged scorers wait
    for it before their timeouts start), then checks the models of the other providers and logs their
    problems (their runs get error records)."""
    later: list[tuple[str, Callable[[], None]]] = []
    for key, entry in entries.items():
        with deferred_checks() as checks:
            try:
                entry.scorer.check()
            except ValueError as err:
                raise ValueError(f"scorer {key!r} cannot score: {err} ({_SKIP_HINT})") from err
        later += [(key, check) for check in checks]
    if any(entry.scorer.has_judge for entry in entries.values()):
        warm_up_in_background(partial(_check_later, later) if later else None)


def _check_later(checks: Sequence[tuple[str, Callable[[], None]]]) -> None:
    for key, check in checks:
        try:
            check()
        except ValueError as err:
            logger.error("agentevals: scorer %r cannot score: %s (its runs get error records)", key, err)


def check_sinks(sinks: Sequence[Sink]) -> None:
    """Each sink's ``check()``, when it has one; a problem as a ``ValueError`` naming the sink. One that
    may fix itself (a server not reachable right now) is only logged: writes retry it."""
    for sink in sinks:
        check = getattr(sink, "check", None)
        if not callable(check):
            continue
        try:
            check()
        except Exception as err:
            if getattr(err, "transient", False):
                logger.warning(
                    "agentevals: sink %s is not ready: %s (writes will retry)", sink_name(sink), err
                )
                continue
            raise ValueError(f"sink {sink_name(sink)!r} cannot store records: {err} ({_SKIP_HINT})") from err


def default_sink() -> LoggingSink:
    """The sink of an engine given no ``sinks=``: a :class:`LoggingSink` on ``agentevals.results`` that
    prints to stderr while the application has configured no logging (else results would vanish:
    Python shows only warnings without a configuration). Warns once per process that nothing is kept."""
    global _warned_no_sinks
    results = logging.getLogger(_RESULTS_LOGGER)
    if not results.hasHandlers():  # no logging configured (Python's last resort shows warnings only)
        results.addHandler(_UntilConfigured())
        if results.level == logging.NOTSET:
            results.setLevel(logging.INFO)
    if not _warned_no_sinks:
        _warned_no_sinks = True
        logger.warning(
            "agentevals: ScoringEngine has no sinks, so results only go to the %r logger (printed to stderr "
            "until logging is configured) and are not kept; store them with "
            "sinks=[SQLiteSink('agentevals.db')] (from agentevals.sinks import SQLiteSink)",
            _RESULTS_LOGGER,
        )
    return LoggingSink()


class _UntilConfigured(logging.StreamHandler):  # type: ignore[type-arg]
    """Prints to the current ``sys.stderr`` while the root logger has no handler; once the application
    configures logging, its handlers show the records and this one steps aside (nothing printed twice)."""

    def __init__(self) -> None:
        super().__init__(sys.stderr)
        self.setFormatter(logging.Formatter("agentevals.results %(levelname)s %(message)s"))

    def emit(self, record: logging.LogRecord) -> None:
        if logging.getLogger().handlers:
            return
        self.stream = sys.stderr
        super().emit(record)
