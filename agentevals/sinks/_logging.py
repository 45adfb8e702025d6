"""``LoggingSink``: one structured log line per record through stdlib ``logging``."""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence

from agentevals._model._result import ScoreFailure, ScoreRecord

_FIELDS = ("scorer_id", "run_id", "trace_id", "entity", "source", "score", "reason", "duration_ms")


class LoggingSink:
    """Logs each record as ``score {json}`` (or ``score-error {json}``) at ``level``.

    The record itself is attached as ``extra={"agentevals_record": record}`` for structured handlers.

    >>> sink = LoggingSink(level=logging.DEBUG, logger="myapp.scores")
    >>> sink.logger.name
    'myapp.scores'
    """

    name = "logging"

    def __init__(
        self, level: int = logging.INFO, logger: str | logging.Logger = "agentevals.results"
    ) -> None:
        self.level = level
        self.logger = logger if isinstance(logger, logging.Logger) else logging.getLogger(logger)

    def check(self) -> None:
        """Nothing to verify: this sink has no driver, connection or path (``check()`` is there so that
        every sink can be checked the same way)."""

    async def write(self, records: Sequence[ScoreRecord]) -> None:
        if not self.logger.isEnabledFor(self.level):
            return
        for record in records:
            fields = {name: getattr(record, name) for name in _FIELDS}
            kind = "score"
            if isinstance(record, ScoreFailure):
                kind = "score-error"
                fields.update(error_type=record.error_type, error_message=record.error_message)
            if record.judge_model:
                fields.update(judge_model=record.judge_model, cost_usd=record.cost_usd)
            line = json.dumps(fields, ensure_ascii=False, default=str)
            self.logger.log(self.level, "%s %s", kind, line, extra={"agentevals_record": record})

    async def close(self) -> None:
        return None
