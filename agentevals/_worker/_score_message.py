"""What a scoring worker does with one message: decode its runs (a batch), score each with the scorers
the message names for it, and store the records of all of them before it returns, so the message is acked
only then."""

from __future__ import annotations

import asyncio
import logging
from collections import Counter
from contextlib import AbstractAsyncContextManager, nullcontext
from dataclasses import dataclass
from typing import Any, Protocol

from agentevals._engine._config import ScorerEntry
from agentevals._engine._forward._codec import RemoteRun, runs_from_message
from agentevals._model._failure import failure_record
from agentevals._model._redact import Redactor
from agentevals._model._result import ScoreRecord
from agentevals._scoring._score_once import FailureLog, finalize, run_failed_record, score_once
from agentevals._scoring._scorer import Scorer
from agentevals._worker._group_write import GroupWriter

logger = logging.getLogger("agentevals.worker")


class BadMessage(Exception):
    """A message no worker can read (not a run message, or from a newer release): dead-lettered at once,
    never retried."""


class Gate(Protocol):
    def slot(self, scorer: Scorer, timeout: float | None) -> AbstractAsyncContextManager[None]: ...


@dataclass(frozen=True)
class _UnknownScorer:
    """The identity of a scorer a message names but the worker was not given (for its error record)."""

    id: str
    name: str
    version: str = ""


class MessageScorer:
    """Scores decoded messages with ``entries`` (the worker's scorer collection, as
    ``normalize_scorers`` gives it) and writes the records through ``writer``.

    A scorer that raises, times out or is unknown gives an error record (stored and acked like any
    other); only a sink failure raises (:class:`SinkUnavailable`, retried by the broker) and an
    unreadable message (:class:`BadMessage`, dead-lettered).
    """

    def __init__(
        self,
        entries: dict[str, ScorerEntry],
        writer: GroupWriter,
        *,
        scorer_timeout: float | None = None,
        gate: Gate | None = None,
        max_concurrency: int = 256,
        redact: Redactor | None = None,
    ) -> None:
        self.entries = entries
        self.writer = writer
        self.scorer_timeout = scorer_timeout
        self.gate = gate
        self.redact = redact  # applied to every record before the sinks, as ScoringEngine(redact=)
        self.failures = FailureLog(redact)
        self.counts: Counter[str] = Counter()
        self._concurrency = asyncio.Semaphore(max_concurrency)

    async def handle(self, payload: Any) -> list[ScoreRecord]:
        """Score and store every run ``payload`` carries; the records stored (all of them, or it raises)."""
        try:
            runs = runs_from_message(payload)
        except ValueError as err:
            self.counts["bad_messages"] += 1
            raise BadMessage(str(err)) from err
        records = list(
            await asyncio.gather(*(self._score(remote, key) for remote in runs for key in remote.scorer_keys))
        )
        if records:
            await self.writer.write(records)
        self.counts["messages"] += 1
        self.counts["runs"] += len(runs)
        self.counts.update(record.outcome for record in records)
        return records

    async def _score(self, message: RemoteRun, key: str) -> ScoreRecord:
        run, entity = message.run, message.run.entity or message.entity
        entry = self.entries.get(key)
        if entry is None:
            record: ScoreRecord = failure_record(
                scorer=_UnknownScorer(id=key, name=key),
                run=run,
                error=LookupError(
                    f"this worker has no scorer {key!r} (it has {sorted(self.entries)}): start the workers "
                    "with the same --scorers collection the agents' ScoringEngine uses"
                ),
                source="live",
            )
        elif run.error is not None and not entry.score_errors:
            record = run_failed_record(run, entry.scorer)  # the engine's skipped record, as in-process
        else:
            timeout = entry.timeout if entry.timeout is not None else self.scorer_timeout
            async with self.gate.slot(entry.scorer, timeout) if self.gate is not None else nullcontext():
                record = await score_once(run, entry.scorer, timeout, self._concurrency, self.failures)
        return finalize(record, entity, self.redact)
