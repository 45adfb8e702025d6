"""What every live integration shares: the engine it feeds, its wiring, and submits that never raise."""

from __future__ import annotations

import inspect
import logging
import sys
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, ClassVar, Protocol, runtime_checkable

from agentevals._engine._engine import ScoringEngine
from agentevals._model._messages import AgentInput
from agentevals._model._run import Run, looks_like_agent_input
from agentevals._scoring._scorer import Scorer

if TYPE_CHECKING:
    from agentevals._engine import EngineStats, FlushReport

log = logging.getLogger("agentevals.capture")


@runtime_checkable
class Engine(Protocol):
    """What an integration needs of a scoring engine; :class:`~agentevals.ScoringEngine` is one.

    ``submit`` and ``submit_lazy`` run on the agent's thread and never raise into the agent: they
    return ``True`` when the run was accepted and ``False`` (logged or counted) when it was not.
    :class:`LiveScoring` holds any other engine to that promise: a submit of such an engine that raises
    is logged and returns ``False``. ``submit_lazy`` builds the run (``build()``) only once a scorer
    has sampled it; an engine that samples nothing may simply submit ``build()``. ``flush`` and
    ``shutdown`` return something truthy when every submitted run was scored and stored; ``stats``
    counts what happened to the runs and records.
    """

    def submit(self, run: Run) -> bool: ...

    def submit_lazy(self, build: Callable[[], Run], *, run_id: str, trace_id: str | None = None) -> bool: ...

    def flush(self, timeout: float = 30.0) -> FlushReport: ...

    async def aflush(self, timeout: float = 30.0) -> FlushReport: ...

    def shutdown(self, timeout: float = 30.0) -> FlushReport: ...

    def stats(self) -> EngineStats: ...


class LazySubmit(Protocol):
    """The type of :attr:`LiveScoring.submit_lazy` (an engine's ``submit_lazy``)."""

    def __call__(self, build: Callable[[], Run], *, run_id: str, trace_id: str | None = None) -> bool: ...


def scorer_specs(scorers: Any, sampling: Any = None, score_errors: bool | None = None) -> Any:
    """The engine's ``scorers=`` with a default ``sampling`` and ``score_errors`` applied to every entry
    that sets none.

    ``sampling`` is anything the engine accepts (a rate such as ``0.5``, ``{"type": "ratio", "rate": 0.5}``,
    a callable ``(run) -> bool``); entries given as ``ScorerEntry`` objects keep their own.
    """
    given = (("sampling", sampling), ("score_errors", score_errors))
    defaults = {key: value for key, value in given if value is not None}
    if not defaults:
        return scorers

    def with_default(value: Any) -> Any:
        if isinstance(value, Scorer):
            return {"scorer": value, **defaults}
        if isinstance(value, Mapping):
            return {**defaults, **value}
        return value

    if isinstance(scorers, Scorer):
        return [with_default(scorers)]
    if isinstance(scorers, Mapping):
        return {key: with_default(value) for key, value in scorers.items()}
    if isinstance(scorers, Sequence) and not isinstance(scorers, str):
        return [with_default(value) for value in scorers]
    return scorers


def build_engine(
    *,
    engine: Engine | None = None,
    scorers: Any = None,
    sinks: Sequence[Any] | None = None,
    sampling: Any = None,
    owner: str = "this integration",
    score_errors: bool | None = None,
    **engine_options: Any,
) -> Engine:
    """Return ``engine`` as given, or a new ``ScoringEngine`` for ``scorers`` and ``sinks`` with
    ``engine_options`` (any other ``ScoringEngine`` keyword: ``broker=``, ``redact=``, ``queue=``...)."""
    if engine is not None:
        wiring = {"scorers": scorers, "sinks": sinks, "sampling": sampling, "score_errors": score_errors}
        given = [name for name, value in wiring.items() if value is not None] + sorted(engine_options)
        if given:
            raise ValueError(
                f"{owner}: pass either engine= or {'/'.join(f'{name}=' for name in given)}, not both "
                "(configure scorers, sinks and options on the engine instead: ScorerEntry(score_errors=True) "
                "scores failed runs)"
            )
        if not isinstance(engine, Engine):
            raise TypeError(
                f"{owner}: engine= must be an agentevals.live.Engine (submit, submit_lazy, flush, aflush, "
                f"shutdown and stats), such as a ScoringEngine; got {engine!r}"
            )
        return engine
    if scorers is None:
        raise ValueError(f"{owner} needs scorers={{...}} (and usually sinks=[...]) or a ready engine=")
    check_engine_options(owner, engine_options, ScoringEngine)
    # sinks=None keeps the engine's default; sinks=[] means "no sinks" and is passed as such.
    return ScoringEngine(scorer_specs(scorers, sampling, score_errors), sinks=sinks, **engine_options)


def check_engine_options(owner: str, options: Mapping[str, Any], engine_type: type) -> None:
    """Refuse, naming the accepted ones, options that ``engine_type``'s constructor does not take."""
    accepted = [
        name
        for name, parameter in inspect.signature(engine_type).parameters.items()
        if parameter.kind is parameter.KEYWORD_ONLY and name != "sinks"
    ]
    unknown = sorted(set(options) - set(accepted))
    if unknown:
        raise TypeError(
            f"{owner} got unknown option {', '.join(f'{name}=' for name in unknown)}: it takes scorers=, "
            f"sinks=, sampling=, score_errors= and the {engine_type.__name__} options "
            f"({', '.join(f'{name}=' for name in accepted)}), or a ready engine="
        )


class NeverRaising:
    """The submits of any engine but a ``ScoringEngine`` (a user's own), held to the :class:`Engine`
    promise: a submit that raises is logged and returns ``False``."""

    __slots__ = ("_engine",)

    def __init__(self, engine: Engine) -> None:
        self._engine = engine

    def submit(self, run: Run) -> bool:
        try:
            return bool(self._engine.submit(run))
        except Exception:
            log.exception("agentevals: could not submit run %s for scoring", getattr(run, "run_id", None))
            return False

    def submit_lazy(self, build: Callable[[], Run], *, run_id: str, trace_id: str | None = None) -> bool:
        try:
            return bool(self._engine.submit_lazy(build, run_id=run_id, trace_id=trace_id))
        except Exception:
            log.exception("agentevals: could not submit run %s for scoring", run_id)
            return False


class LiveScoring:
    """The base of every live integration: it owns the engine and hands it runs without ever raising.

    Give it either a ready ``engine=`` (shared by several integrations) or ``scorers=`` and ``sinks=``
    (plus a default ``sampling=`` and ``score_errors=`` for entries that set none, and any other
    ``ScoringEngine`` keyword such as ``broker=`` or ``redact=``) and it builds a
    :class:`~agentevals.ScoringEngine`. Submit failed runs too (``Run.error`` set): each scorer scores
    them only with ``score_errors=True``, and otherwise writes a skipped record (``run_failed``).
    Subclasses capture runs and call :attr:`submit` or
    :attr:`submit_lazy`; users call :meth:`flush` before reading results and :meth:`shutdown` at exit.

    >>> from agentevals import Run, create_scorer
    >>> from agentevals.live import LiveScoring
    >>> from agentevals.sinks import MemorySink
    >>> class Echo(LiveScoring):
    ...     def capture(self, prompt: str, reply: str) -> None:
    ...         self.submit(Run(input=prompt, output=reply))
    >>> memory = MemorySink()
    >>> short = create_scorer(id="short").generate_score(lambda run, **_: float(len(run.output_text) < 9))
    >>> echo = Echo(scorers=[short], sinks=[memory])
    >>> echo.capture("hi", "hello")
    >>> bool(echo.flush()), memory.records[0].score
    (True, 1.0)
    """

    engine: Engine
    submit: Callable[[Run], bool]
    """Hand the engine a finished run; ``True`` when accepted. Never raises (see :class:`Engine`)."""
    submit_lazy: LazySubmit
    """Hand the engine a run by its ids, built (``build()``) only if a scorer samples it; ``True`` when
    accepted. Never raises."""
    #: How error messages about this integration's arguments name it (default: the class name).
    label: ClassVar[str | None] = None

    def __init__(
        self,
        *,
        scorers: Mapping[str, Any] | Sequence[Scorer] | Scorer | None = None,
        sinks: Sequence[Any] | None = None,
        engine: Engine | None = None,
        sampling: float | Mapping[str, Any] | Callable[[Run], bool] | None = None,
        score_errors: bool | None = None,
        **engine_options: Any,
    ) -> None:
        self.engine = build_engine(
            engine=engine,
            scorers=scorers,
            sinks=sinks,
            sampling=sampling,
            owner=self.label or type(self).__name__,
            score_errors=score_errors,
            **engine_options,
        )
        # Bound once: a submit on the agent's thread calls the ScoringEngine's own method, no wrapper.
        submits = self.engine if type(self.engine) is ScoringEngine else NeverRaising(self.engine)
        self.submit = submits.submit
        self.submit_lazy = submits.submit_lazy

    def flush(self, timeout: float = 30.0) -> FlushReport:
        """Wait until every submitted run is scored and written to the sinks; the report is truthy when
        everything settled and nothing was dead-lettered, lost or abandoned."""
        return self.engine.flush(timeout)

    async def aflush(self, timeout: float = 30.0) -> FlushReport:
        """:meth:`flush` for async code."""
        return await self.engine.aflush(timeout)

    def shutdown(self, timeout: float = 30.0) -> FlushReport:
        """Flush and stop the engine."""
        return self.engine.shutdown(timeout)


def as_agent_input(value: Any) -> AgentInput | None:
    """``value`` as an :class:`~agentevals.AgentInput` when it is one or a mapping of its fields, else
    ``None`` (a mapping that is some graph's own state)."""
    if isinstance(value, AgentInput):
        return value
    if isinstance(value, Mapping) and looks_like_agent_input(value):
        return AgentInput.model_validate(value)
    return None


def current_trace_context() -> dict[str, Any] | None:
    """The active OpenTelemetry span's ids (``trace_id``, ``span_id`` as hex, ``trace_flags``), or
    ``None`` when OpenTelemetry is not in use or no span is active. Integrations call it when a run
    starts and keep it in the run's ``metadata["otel"]``, so that evaluation events land on that span
    although scoring happens later. Costs a dictionary lookup when the application never imported
    OpenTelemetry."""
    trace = sys.modules.get("opentelemetry.trace")
    if trace is None:
        return None
    context = trace.get_current_span().get_span_context()
    if not context.is_valid:
        return None
    return {
        "trace_id": format(context.trace_id, "032x"),
        "span_id": format(context.span_id, "016x"),
        "trace_flags": int(context.trace_flags),
    }
