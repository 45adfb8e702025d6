"""``LangSmithSink``: each record as LangSmith feedback on the LangChain run it scored.

A run captured by the LangChain integration has ``run_id`` = the id LangSmith gives the traced run (the
root LangChain run's for the callback handler, the agent's run for the middleware), so the feedback
lands on the trace a team already looks at. Each feedback has a deterministic id (:func:`feedback_id`),
so a re-sent batch updates the feedback it sent before instead of adding a second one.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Sequence
from typing import Any

from agentevals._model._result import ScoreRecord
from agentevals.sinks._errors import PartialWriteError, SinkConfigError

#: The namespace of the deterministic feedback and score ids (uuid5 of run, scorer and scorer version).
ID_NAMESPACE = uuid.UUID("5b0d3c1e-7f0a-4c59-9a59-6a1f0e2f3b7d")
_FIX_KEY = "set LANGSMITH_API_KEY (or pass api_key=) to an API key of the workspace that holds the runs"


class LangSmithSink:
    """Send one LangSmith feedback per score record through the official client (``create_feedback``).

    Key = the scorer id; ``score`` = the score; ``comment`` = the reason; ``run_id`` = the record's
    ``run_id`` (the root LangChain run id for runs captured by the LangChain integration, so it must be a
    UUID); ``extra`` holds the outcome, the scorer version and the skip reason or error type. A failed
    record is feedback with ``error=True``, no score and ``"ErrorType: message"`` as its comment. A
    skipped record is feedback with no score and ``"skipped (code): reason"`` as its comment, so the
    trace shows why it was not scored. The feedback id is :func:`feedback_id` (run, scorer, version):
    a re-sent feedback that the server already has (409) is updated in place.

    Each feedback is one synchronous ``POST /feedback`` (in a worker thread): the client has no batch
    feedback method (checked up to langsmith 0.15). It batches feedback only through its background
    queue when given a ``trace_id``, and that queue logs errors instead of raising them, so the engine
    could neither retry nor dead-letter; this sink does not pass one. The client's own retries are
    turned off: the engine retries. Errors: 401/403 and a record whose run id is not a UUID are
    permanent (:class:`~agentevals.sinks.SinkConfigError`); 404 (the run not ingested yet), 408, 429,
    5xx and connection errors are transient and raised as they are.

    ``project_id`` is the LangSmith project (session) id of the runs: the client warns when run feedback
    has none. A ``client`` given is used as is (and never closed); otherwise one is made from
    ``api_url`` / ``api_key`` (or ``LANGSMITH_ENDPOINT`` / ``LANGSMITH_API_KEY``) without background
    tracing. Needs ``pip install 'agentevals-core[langsmith]'``.

    Example (needs a LangSmith server and key)::

        sink = LangSmithSink(api_url="http://127.0.0.1:1984", api_key="lsv2-test")
        engine = ScoringEngine(scorers, sinks=[sink])
    """

    name = "langsmith"

    def __init__(
        self,
        *,
        api_url: str | None = None,
        api_key: str | None = None,
        project_id: str | None = None,
        client: Any = None,
        timeout: float = 10.0,
    ) -> None:
        if not timeout > 0:
            raise ValueError(f"timeout must be a positive number of seconds (e.g. 10.0), got {timeout!r}")
        self.api_url = api_url
        self.project_id = project_id
        self.timeout = timeout
        self._api_key = api_key
        self._client = client

    def check(self) -> None:
        """Verify that the client is installed, has an API key and that the server accepts it
        (``GET /sessions?limit=1``); raises :class:`~agentevals.sinks.SinkConfigError` saying how to fix
        it (``transient`` when the server cannot be reached right now)."""
        client = self._get_client()
        if not getattr(client, "api_key", None):
            raise SinkConfigError(f"LangSmithSink has no API key: {_FIX_KEY}")
        try:
            client.request_with_retries("GET", "/sessions", params={"limit": 1})
        except Exception as err:
            problem = map_error(err)
            if isinstance(problem, SinkConfigError):
                raise problem from err
            raise SinkConfigError(
                f"LangSmithSink cannot reach {client.api_url}: {err} (is the URL right, is the server up?)",
                transient=True,
            ) from err

    async def write(self, records: Sequence[ScoreRecord]) -> None:
        if records:
            await asyncio.to_thread(self._write_sync, records)

    def _write_sync(self, records: Sequence[ScoreRecord]) -> None:
        client = self._get_client()
        good = [r for r in records if _as_uuid(r.run_id) is not None]
        bad = [r for r in records if _as_uuid(r.run_id) is None]
        for done, record in enumerate(good):
            try:
                self._send(client, record)
            except Exception as err:
                problem = map_error(err)
                if done == 0 and not bad:  # nothing written: the batch failed as a whole
                    if problem is err:
                        raise
                    raise problem from err
                raise PartialWriteError(bad + good[done:], problem) from err
        if bad:
            raise PartialWriteError(
                bad,
                SinkConfigError(
                    f"LangSmithSink: run id {bad[0].run_id!r} is not a LangSmith run id (a UUID); only runs "
                    "captured by the LangChain integration can carry LangSmith feedback"
                ),
            )

    def _send(self, client: Any, record: ScoreRecord) -> None:
        from langsmith.utils import LangSmithConflictError

        fields = feedback_fields(record)
        try:
            client.create_feedback(**fields, session_id=self.project_id, stop_after_attempt=1)
        except LangSmithConflictError:  # sent before (a re-sent batch): update it in place
            client.update_feedback(fields["feedback_id"], score=fields["score"], comment=fields["comment"])

    async def close(self) -> None:
        """Nothing to close: each write is finished when it returns, and a given client is the caller's."""

    def _get_client(self) -> Any:
        if self._client is None:
            try:
                from langsmith import Client
                from urllib3.util.retry import Retry
            except ImportError as err:
                raise ImportError(
                    "LangSmithSink needs the langsmith client: pip install 'agentevals-core[langsmith]'"
                ) from err
            self._client = Client(
                api_url=self.api_url,
                api_key=self._api_key,
                auto_batch_tracing=False,  # no background thread: this client only writes feedback
                retry_config=Retry(total=0, raise_on_status=False, raise_on_redirect=False),
                timeout_ms=int(self.timeout * 1000),
            )
        return self._client


def feedback_id(record: ScoreRecord) -> uuid.UUID:
    """The deterministic id of a record's feedback (and Langfuse score): uuid5 of run, scorer, version.

    >>> from agentevals.results import ScoreResult
    >>> r = ScoreResult(scorer_id="exact", scorer_name="exact", run_id="r1", score=1.0)
    >>> feedback_id(r) == feedback_id(r.model_copy(update={"score": 0.0}))
    True
    """
    version = getattr(record, "scorer_version", None) or ""
    return uuid.uuid5(ID_NAMESPACE, "\x1f".join((record.run_id, record.scorer_id, version)))


def feedback_fields(record: ScoreRecord) -> dict[str, Any]:
    """The ``create_feedback`` arguments of one record (without the client's own options)."""
    extra: dict[str, Any] = {"outcome": record.outcome, "agentevals_run_id": record.run_id}
    version = getattr(record, "scorer_version", None)
    if version is not None:
        extra["scorer_version"] = version
    comment: str | None = record.reason
    error = None
    if record.outcome == "failed":
        comment = f"{record.error_type}: {record.error_message}"
        extra["error_type"] = record.error_type
        error = True
    elif record.outcome == "skipped":
        comment = f"skipped ({record.skip_reason}): {record.reason}"
        extra["skip_reason"] = record.skip_reason
    return {
        "run_id": _as_uuid(record.run_id),
        "key": record.scorer_id,
        "score": record.score,
        "comment": comment,
        "feedback_id": feedback_id(record),
        "extra": extra,
        "error": error,
    }


def map_error(error: BaseException) -> BaseException:
    """A :class:`SinkConfigError` for what no retry fixes (401/403, a refused request), else ``error``."""
    status = _status(error)
    if status in (401, 403):
        return SinkConfigError(
            f"LangSmithSink: the server refused the API key ({status}): {_FIX_KEY} (with write access)"
        )
    if status in (400, 405, 413, 422):
        return SinkConfigError(f"LangSmithSink: the server rejected the feedback ({status}): {error}")
    return error


def _status(error: BaseException) -> int | None:
    """The HTTP status behind a client error: the client raises its own errors from ``requests``'s."""
    seen: BaseException | None = error
    for _ in range(5):
        if seen is None:
            break
        response = getattr(seen, "response", None)
        status = getattr(response, "status_code", None)
        if isinstance(status, int):
            return status
        seen = seen.__cause__ or seen.__context__
    from langsmith import utils

    if isinstance(error, utils.LangSmithAuthError):
        return 401
    if isinstance(error, utils.LangSmithNotFoundError):
        return 404
    if isinstance(error, utils.LangSmithRateLimitError):
        return 429
    return None


def _as_uuid(value: str) -> uuid.UUID | None:
    try:
        return uuid.UUID(value)
    except (ValueError, TypeError, AttributeError):
        return None
