"""``LangfuseSink``: each record as a Langfuse score on the trace of the run it scored.

Langfuse (v3 and later) names traces by 32-hex W3C trace ids. A run traced with OpenTelemetry (which is
how Langfuse's own LangChain integration traces) carries its trace id in ``metadata["otel"]``; that is
the trace the score goes to. Otherwise the trace id is derived from our ``trace_id`` as Langfuse's
``create_trace_id(seed=...)`` does, its documented way of correlating an external id.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Collection, Mapping, Sequence
from typing import Any

from agentevals._model._result import ScoreRecord
from agentevals.sinks._errors import SinkConfigError
from agentevals.sinks._langsmith import feedback_id
from agentevals.sinks._otel import TRACE_KEY

_TRACE_ID = re.compile(r"^[0-9a-f]{32}$")
_FIX_KEYS = (
    "set LANGFUSE_PUBLIC_KEY and LANGFUSE_SECRET_KEY (or pass public_key= and secret_key=) to the keys of "
    "the project that holds the traces"
)


class LangfuseSink:
    """Send one Langfuse score per record through the official client's score API.

    Name = the scorer id; ``traceId`` = :func:`langfuse_trace_id`; ``comment`` = the reason; ``id`` =
    :func:`~agentevals.sinks._langsmith.feedback_id` (run, scorer, version) and ``timestamp`` = the
    record's ``created_at``, so a re-sent batch updates the scores it sent before (Langfuse updates a
    score sent again with the same id and timestamp). A scored record is a ``NUMERIC`` score, or a
    ``CATEGORICAL`` one whose value is the run metadata's ``label`` for the scorer ids in
    ``categorical``. A failed record is a ``CATEGORICAL`` score ``"error"`` (comment
    ``"ErrorType: message"``) and a skipped record a ``CATEGORICAL`` score ``"skipped"`` (comment: the
    reason): Langfuse keeps scores of one name and different types apart, so the numeric series of a
    scorer stays clean and its errors and skips are counted beside it. ``metadata`` holds our ids.

    A batch is one ``POST /api/public/scores`` through the client's async API, so the write has
    happened when ``write`` returns. The client's ``create_score`` is not used: it queues the score for a
    background thread that logs errors instead of raising them (the engine could neither retry nor
    dead-letter), and the ``Langfuse`` object registers a global OpenTelemetry tracer provider when
    there is none, which a sink must not do. Errors: 401/403, 400, 404 (a server without the endpoint)
    and rejected scores (207) are permanent (:class:`~agentevals.sinks.SinkConfigError`); 429, 5xx
    and connection errors are transient and raised as they are.

    Keys and host come from the arguments or ``LANGFUSE_PUBLIC_KEY`` / ``LANGFUSE_SECRET_KEY`` /
    ``LANGFUSE_BASE_URL`` (``LANGFUSE_HOST``). Needs ``pip install 'agentevals-core[langfuse]'``.

    >>> sink = LangfuseSink(public_key="pk-lf-1", secret_key="sk-lf-1", base_url="http://127.0.0.1:3000")
    >>> sink.base_url
    'http://127.0.0.1:3000'
    """

    name = "langfuse"

    def __init__(
        self,
        *,
        public_key: str | None = None,
        secret_key: str | None = None,
        base_url: str | None = None,
        environment: str | None = None,
        categorical: Collection[str] = (),
        timeout: float = 10.0,
    ) -> None:
        if not timeout > 0:
            raise ValueError(f"timeout must be a positive number of seconds (e.g. 10.0), got {timeout!r}")
        if isinstance(categorical, str):
            raise ValueError(f"categorical is a collection of scorer ids, e.g. [{categorical!r}]")
        self.public_key = public_key or os.environ.get("LANGFUSE_PUBLIC_KEY")
        self._secret_key = secret_key or os.environ.get("LANGFUSE_SECRET_KEY")
        self.base_url = (
            base_url
            or os.environ.get("LANGFUSE_BASE_URL")
            or os.environ.get("LANGFUSE_HOST")
            or "https://cloud.langfuse.com"
        )
        self.environment = environment
        self.categorical = frozenset(categorical)
        self.timeout = timeout
        self._api: Any = None
        self._http: Any = None

    def check(self) -> None:
        """Verify that the client is installed, both keys are set and the server accepts them (``GET
        /api/public/projects``); raises :class:`~agentevals.sinks.SinkConfigError` saying how to fix it
        (``transient`` when the server cannot be reached right now)."""
        import httpx

        options = self._api_options()
        with httpx.Client(timeout=self.timeout) as http:
            try:
                projects = _client_module().LangfuseAPI(**options, httpx_client=http).projects.get()
            except Exception as err:
                problem = map_error(err)
                if isinstance(problem, SinkConfigError):
                    raise problem from err
                raise SinkConfigError(
                    f"LangfuseSink cannot use {self.base_url}: {err} (is the URL right, is the server up?)",
                    transient=_is_transient(err),
                ) from err
        if not projects.data:
            raise SinkConfigError(f"LangfuseSink: the keys give access to no project: {_FIX_KEYS}")

    async def write(self, records: Sequence[ScoreRecord]) -> None:
        if not records:
            return
        from langfuse.api.scores.types.create_score_batch_results import CreateScoreBatchResults

        if self._api is None:  # made on the engine's loop, where it is used
            import httpx

            options = self._api_options()
            self._http = httpx.AsyncClient(timeout=self.timeout)
            self._api = _client_module().AsyncLangfuseAPI(**options, httpx_client=self._http)
        scores = [score_body(r, categorical=self.categorical, environment=self.environment) for r in records]
        try:
            response = await self._api.scores.create(request=scores, request_options={"max_retries": 0})
        except Exception as err:
            problem = map_error(err)
            if problem is err:
                raise
            raise problem from err
        if isinstance(response, CreateScoreBatchResults) and response.rejected:
            messages = "; ".join(e.message for e in response.errors)
            raise SinkConfigError(
                f"LangfuseSink: Langfuse rejected {response.rejected} of {len(scores)} scores: {messages}"
            )

    async def close(self) -> None:
        if self._http is not None:
            http, self._http, self._api = self._http, None, None
            await http.aclose()

    def _api_options(self) -> dict[str, Any]:
        if not self.public_key or not self._secret_key:
            raise SinkConfigError(f"LangfuseSink has no keys: {_FIX_KEYS}")
        from langfuse._version import get_langfuse_version

        return {
            "base_url": self.base_url,
            "username": self.public_key,
            "password": self._secret_key,
            "x_langfuse_sdk_name": "python",
            "x_langfuse_sdk_version": get_langfuse_version(),
            "x_langfuse_public_key": self.public_key,
            "timeout": self.timeout,
        }


def langfuse_trace_id(record: ScoreRecord) -> str:
    """The Langfuse trace of a record: the OpenTelemetry trace id captured with the run when there is
    one, our ``trace_id`` when it already is a 32-hex id, else one derived from it (or from the run id)
    as ``Langfuse.create_trace_id(seed=...)`` does.

    >>> from agentevals.results import ScoreResult
    >>> langfuse_trace_id(ScoreResult(scorer_id="s", scorer_name="s", run_id="r", trace_id="t", score=1))
    'e3b98a4da31a127d4bde6e43033f66ba'
    """
    metadata = record.metadata if isinstance(record.metadata, Mapping) else {}
    captured = metadata.get(TRACE_KEY)
    if isinstance(captured, Mapping):
        otel_id = str(captured.get("trace_id", "")).lower()
        if _TRACE_ID.match(otel_id) and otel_id != "0" * 32:
            return otel_id
    seed = record.trace_id or record.run_id
    if _TRACE_ID.match(seed):
        return seed
    return hashlib.sha256(seed.encode("utf-8")).digest()[:16].hex()


def score_body(
    record: ScoreRecord, *, categorical: Collection[str] = (), environment: str | None = None
) -> dict[str, Any]:
    """The JSON body of one record's score (the API's field names), as ``POST /api/public/scores`` takes."""
    metadata = record.metadata if isinstance(record.metadata, Mapping) else {}
    extra: dict[str, Any] = {"agentevals_run_id": record.run_id, "outcome": record.outcome}
    version = getattr(record, "scorer_version", None)
    if version is not None:
        extra["scorer_version"] = version
    value: float | str
    if record.outcome == "failed":
        value, data_type = "error", "CATEGORICAL"
        comment: str | None = f"{record.error_type}: {record.error_message}"
        extra["error_type"] = record.error_type
    elif record.outcome == "skipped":
        value, data_type, comment = "skipped", "CATEGORICAL", record.reason
        extra["skip_reason"] = record.skip_reason
    elif record.scorer_id in categorical and metadata.get("label") is not None:
        value, data_type, comment = str(metadata["label"]), "CATEGORICAL", record.reason
        extra["score"] = record.score
    else:
        value, data_type, comment = float(record.score), "NUMERIC", record.reason
    body: dict[str, Any] = {
        "id": str(feedback_id(record)),
        "traceId": langfuse_trace_id(record),
        "name": record.scorer_id,
        "value": value,
        "dataType": data_type,
        "comment": comment,
        "metadata": extra,
        "environment": environment,
        "timestamp": record.created_at.isoformat(),
    }
    return {key: field for key, field in body.items() if field is not None}


def map_error(error: BaseException) -> BaseException:
    """A :class:`SinkConfigError` for what no retry fixes (refused keys, a rejected request, a server
    without the endpoint), else ``error`` (429, 5xx, connection errors: transient)."""
    status = getattr(error, "status_code", None)
    if status in (401, 403):
        return SinkConfigError(f"LangfuseSink: the server refused the keys ({status}): {_FIX_KEYS}")
    if status == 404:
        return SinkConfigError(
            "LangfuseSink: the server has no POST /api/public/scores (404): check base_url, or upgrade a "
            "self-hosted Langfuse"
        )
    if status in (400, 405, 413, 422):
        return SinkConfigError(f"LangfuseSink: the server rejected the scores ({status}): {error}")
    return error


def _is_transient(error: BaseException) -> bool:
    import httpx

    status = getattr(error, "status_code", None)
    return isinstance(error, httpx.TransportError) or (
        isinstance(status, int) and (status >= 500 or status == 429)
    )


def _client_module() -> Any:
    try:
        from langfuse.api import client
    except ImportError as err:
        raise ImportError(
            "LangfuseSink needs the langfuse client: pip install 'agentevals-core[langfuse]'"
        ) from err
    return client
