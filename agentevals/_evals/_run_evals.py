"""``run_evals`` / ``arun_evals``: run a target over a dataset and score every item, concurrently."""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import logging
import os
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import Executor, ThreadPoolExecutor
from typing import Any, Protocol
from uuid import UUID

from agentevals._evals._config import ScorerPlan, ScorerSpec, build_plan
from agentevals._evals._data import EvalItem, load_items
from agentevals._evals._progress import ProgressBar
from agentevals._evals._summary import EvalResult, ItemResult, item_passed, summarize
from agentevals._evals._targets import StepCapture, TargetOutput, call_target, check_target, target_name
from agentevals._model._failure import error_record, failure_record
from agentevals._model._result import ScoreRecord, utc_now
from agentevals._model._run import Run, new_run_id
from agentevals._store._catalog_tables import ScorerInfo
from agentevals._support._sync import background_loop, run_soon

logger = logging.getLogger("agentevals.evals")


class _Sink(Protocol):
    async def write(self, records: Sequence[ScoreRecord]) -> None: ...


Data = Iterable[Mapping[str, Any]] | str | os.PathLike[str]


async def arun_evals(
    data: Data,
    scorers: Any,
    target: Any,
    *,
    concurrency: int = 4,
    on_item_complete: Callable[..., Any] | None = None,
    repeats: int = 1,
    thresholds: Mapping[str, Any] | None = None,
    gates: Sequence[Any] | None = None,
    sinks: Sequence[_Sink | Callable[..., Any]] | None = None,
    progress: bool = True,
    stop: asyncio.Event | None = None,
    name: str | None = None,
    check: bool = True,
) -> EvalResult:
    """Run ``target`` on every item of ``data`` and score each result; never aborts on an item's error.

    ``data``: items ``{"input", "ground_truth", "request_context", "expected_trajectory"}`` (camelCase
    accepted) or a ``.jsonl``/``.json``/``.csv``/``.yaml`` path. ``scorers``: a list of scorers (or
    ``{"scorer": s, "threshold": 0.7}`` entries), or ``{"workflow": [...], "steps": {"node": [...]}}``
    to also score each LangGraph node's input and output. ``target``: a LangChain Runnable, a
    ``create_agent`` agent, a LangGraph graph, or a sync/async callable taking the item's input.
    ``thresholds`` maps scorer ids to a minimum (or ``{"min": .., "max": ..}``); ``gates`` are scorers
    that must score 1.0 on every item. Every record also goes to ``sinks`` (``source="eval"``); the
    sinks are not closed. Sinks that keep scorers (the SQL sinks' ``agentevals_scorers`` table) first
    get each scorer's name, version and threshold, under this evaluation's id.
    ``on_item_complete(item=, target_result=, scorer_results=)`` may be async.
    Setting ``stop`` (an ``asyncio.Event`` of the running loop) ends the run early: items under way are
    cancelled and the result covers the items done, with ``interrupted=True``. ``name`` is the entity
    the records carry (default: the target's own name; a LangGraph graph compiled without ``name=`` is
    called ``"LangGraph"``). Every scorer's judges are checked first (``Scorer.check()``: a missing API
    key fails at once with a ``ValueError`` saying how to fix it, not once per item); ``check=False``
    skips that.

    >>> import asyncio
    >>> from agentevals.scorers import create_exact_match_scorer
    >>> result = asyncio.run(arun_evals(data=[{"input": "hi", "ground_truth": "HI"}],
    ...     scorers=[create_exact_match_scorer()], target=str.upper, progress=False))
    >>> result.scores, result.summary.total_items
    ({'exact_match': 1.0}, 1)
    """
    if isinstance(concurrency, bool) or not isinstance(concurrency, int) or concurrency < 1:
        raise ValueError(f"concurrency must be a positive integer, got {concurrency!r}")
    if isinstance(repeats, bool) or not isinstance(repeats, int) or repeats < 1:
        raise ValueError(f"repeats must be a positive integer, got {repeats!r}")
    items = load_items(data)
    plan = build_plan(scorers, thresholds, gates)
    if check:
        _check_scorers(plan)
    check_target(target)
    runner = _Runner(plan, target, _as_sinks(sinks), on_item_complete, name or target_name(target))
    await runner.store_scorers()
    # Sync targets run in threads: a pool as large as `concurrency`, so that items really overlap.
    executor = ThreadPoolExecutor(max_workers=concurrency, thread_name_prefix="agentevals-target")
    runner.executor = executor
    started = time.perf_counter()
    limit = asyncio.Semaphore(concurrency)
    # Never waits for a sync target still running in a thread (an interrupted run leaves it behind).
    with _shut_down_without_waiting(executor), ProgressBar(len(items) * repeats, enabled=progress) as bar:

        async def one(item: EvalItem, repeat: int) -> ItemResult:
            async with limit:
                result = await runner.evaluate(item, repeat)
            await runner.finish(result)
            bar.advance(failed=not result.passed)
            return result

        tasks = [asyncio.ensure_future(one(item, r)) for item in items for r in range(repeats)]
        interrupted = False
        try:
            interrupted = await _until_done_or_stopped(tasks, stop)
        except BaseException:  # only the user's callback can raise here: stop the other items, re-raise
            await _cancel_all(tasks)
            raise
        if interrupted:
            await _cancel_all(tasks)
    done = [t.result() for t in tasks if t.done() and not t.cancelled() and t.exception() is None]
    results = sorted(done, key=lambda r: (r.index, r.repeat))
    return summarize(
        results,
        plan,
        total_items=len(items),
        duration_ms=(time.perf_counter() - started) * 1000,
        sink_errors=runner.sink_errors,
        eval_id=runner.eval_id,
        interrupted=interrupted,
    )


def _check_scorers(plan: ScorerPlan) -> None:
    """Each scorer's judge configuration (no model call), as the CLI and ``ScoringEngine`` check it."""
    for scorer in {id(spec.scorer): spec.scorer for spec in plan.specs}.values():
        try:
            scorer.check()
        except ValueError as err:
            raise ValueError(
                f"scorer {scorer.id!r} cannot score: {err} (pass check=False to run_evals to skip this "
                "check, e.g. when the key is set later)"
            ) from err


async def _until_done_or_stopped(
    tasks: Sequence[asyncio.Task[ItemResult]], stop: asyncio.Event | None
) -> bool:
    """Wait for every item (raising the first error); ``True`` when ``stop`` was set first."""
    everything: asyncio.Future[Any] = asyncio.gather(*tasks)
    if stop is None:
        await everything
        return False
    stopped: asyncio.Future[Any] = asyncio.ensure_future(stop.wait())
    try:
        await asyncio.wait([everything, stopped], return_when=asyncio.FIRST_COMPLETED)
    finally:
        stopped.cancel()
    if everything.done():
        everything.result()  # re-raises a callback's error
        return False
    everything.add_done_callback(lambda gathered: gathered.cancelled() or gathered.exception())
    everything.cancel()
    return True


@contextlib.contextmanager
def _shut_down_without_waiting(executor: ThreadPoolExecutor) -> Iterator[None]:
    try:
        yield
    finally:
        executor.shutdown(wait=False, cancel_futures=True)


async def _cancel_all(tasks: Sequence[asyncio.Task[ItemResult]]) -> None:
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)


def run_evals(
    data: Data,
    scorers: Any,
    target: Any,
    *,
    concurrency: int = 4,
    on_item_complete: Callable[..., Any] | None = None,
    repeats: int = 1,
    thresholds: Mapping[str, Any] | None = None,
    gates: Sequence[Any] | None = None,
    sinks: Sequence[_Sink | Callable[..., Any]] | None = None,
    progress: bool = True,
    name: str | None = None,
    check: bool = True,
) -> EvalResult:
    """Blocking :func:`arun_evals`; works in scripts and inside a running event loop (Jupyter).

    Ctrl-C (``KeyboardInterrupt``) stops the run quietly: items under way are cancelled and the result
    covers the items done, with ``interrupted=True``. A second Ctrl-C while it winds down is raised.

    >>> from agentevals.scorers import create_exact_match_scorer
    >>> run_evals(data=[{"input": "a", "ground_truth": "A"}, {"input": "b", "ground_truth": "b"}],
    ...           scorers=[create_exact_match_scorer()], target=str.upper, progress=False).scores
    {'exact_match': 0.5}
    """
    loop = background_loop()
    stop = asyncio.Event()  # only touched on the loop's thread (set through call_soon_threadsafe)
    evaluation = arun_evals(
        data,
        scorers,
        target,
        concurrency=concurrency,
        on_item_complete=on_item_complete,
        repeats=repeats,
        thresholds=thresholds,
        gates=gates,
        sinks=sinks,
        progress=progress,
        stop=stop,
        name=name,
        check=check,
    )
    future = run_soon(evaluation)
    try:
        return future.result()
    except KeyboardInterrupt:
        loop.call_soon_threadsafe(stop.set)
        return future.result()


class _Runner:
    """Per-run state shared by the item tasks (the plan, the target, sinks and the callback)."""

    def __init__(
        self,
        plan: ScorerPlan,
        target: Any,
        sinks: list[_Sink],
        callback: Callable[..., Any] | None,
        entity: str,
    ) -> None:
        self.plan = plan
        self.target = target
        self.entity = entity
        self.sinks = sinks
        self.callback = callback
        self.callback_kwargs = _accepted_kwargs(callback) if callback is not None else set()
        self.sink_errors = 0
        self.executor: Executor | None = None
        self.eval_id = new_run_id()  # tags every record of this evaluation (eval_id, metadata["eval_id"])

    async def store_scorers(self) -> None:
        """Give the sinks that keep scorers each scorer of the plan, with its threshold (a failure is
        counted in ``sink_errors`` and logged, as a failed record write is)."""
        scorers = [
            ScorerInfo(
                scorer_id=spec.scorer.id,
                scorer_name=spec.scorer.name,
                scorer_version=spec.scorer.version,
                source="eval",
                eval_id=self.eval_id,
                step=spec.step,
                threshold_min=None if spec.threshold is None else spec.threshold.min,
                threshold_max=None if spec.threshold is None else spec.threshold.max,
            )
            for spec in self.plan.specs
        ]
        for sink in self.sinks:
            write = getattr(sink, "write_scorers", None)
            if not callable(write):
                continue
            try:
                await write(scorers)
            except Exception:  # a broken sink must not stop the evaluation
                self.sink_errors += 1
                logger.warning("agentevals: sink %r failed to store the scorers", sink, exc_info=True)

    async def evaluate(self, item: EvalItem, repeat: int) -> ItemResult:
        run_id = new_run_id()
        started_at, started = utc_now(), time.perf_counter()
        out = await call_target(self.target, item, run_id=UUID(run_id), executor=self.executor)
        duration_ms = (time.perf_counter() - started) * 1000
        error = _target_error(out, item)
        run = _build_run(out, item, run_id=run_id, entity=self.entity, error=error)
        error = run.error
        run = run.model_copy(update={"started_at": started_at, "duration_ms": duration_ms})
        meta = {**item.metadata, "eval_id": self.eval_id, "eval_item": item.index, "repeat": repeat}
        jobs = [self._score(spec, run, out.error, meta) for spec in self.plan.top]
        for spec in self.plan.steps:
            capture = out.steps.get(spec.step or "")
            if capture is not None and capture.done:
                step_run = _step_run(capture, item, run, entity=f"{self.entity}/{capture.name}")
                jobs.append(self._score(spec, step_run, capture.error, {**meta, "step": capture.name}))
        records = await asyncio.gather(*jobs)
        results = {spec_key: record for spec_key, record in records}
        return ItemResult(
            item=item,
            repeat=repeat,
            run=run,
            target_result=out.raw,
            results=results,
            error=error,
            passed=item_passed(results, self.plan, error),
            nested=self.plan.nested,
            steps=tuple(out.steps),
            step_keys={s.key: (s.step, s.scorer.id) for s in self.plan.steps if s.step is not None},
        )

    async def _score(
        self, spec: ScorerSpec, run: Run, target_error: BaseException | None, meta: dict[str, Any]
    ) -> tuple[str, ScoreRecord]:
        scorer = spec.scorer
        started = time.perf_counter()
        record: ScoreRecord
        if target_error is not None:
            record = failure_record(
                scorer=scorer,
                run=run,
                error=target_error,
                source="eval",
            ).model_copy(update={"failed_step": "target"})
        else:
            try:
                record = await scorer.run(run)
            except Exception as err:  # a skip (``SkipRun``) becomes a skipped record, the rest errors
                duration_ms = (time.perf_counter() - started) * 1000
                record = error_record(
                    scorer=scorer,
                    run=run,
                    error=err,
                    duration_ms=duration_ms,
                )
        update = {"metadata": {**record.metadata, **meta}, "eval_id": self.eval_id}
        return spec.key, record.model_copy(update=update)

    async def finish(self, result: ItemResult) -> None:
        records = list(result.results.values())
        for sink in self.sinks:
            try:
                await sink.write(records)
            except Exception:  # a broken sink must not stop the evaluation
                self.sink_errors += 1
                logger.warning(
                    "agentevals: sink %r failed to write %d records", sink, len(records), exc_info=True
                )
        if self.callback is not None:
            kwargs = {
                "item": result.item,
                "target_result": result.target_result,
                "scorer_results": result.scorer_results,
                "result": result,
            }
            value = self.callback(**{k: v for k, v in kwargs.items() if k in self.callback_kwargs})
            if inspect.isawaitable(value):
                await value


def _as_sinks(sinks: Sequence[Any] | None) -> list[_Sink]:
    if not sinks:
        return []
    from agentevals.sinks import as_sink

    return [as_sink(s) for s in sinks]


def _accepted_kwargs(fn: Callable[..., Any]) -> set[str]:
    names = {"item", "target_result", "scorer_results", "result"}
    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return names
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params):
        return names
    return {p.name for p in params if p.name in names}


def _build_run(out: TargetOutput, item: EvalItem, *, run_id: str, entity: str, error: str | None) -> Run:
    common: dict[str, Any] = {
        "run_id": run_id,
        "ground_truth": item.ground_truth,
        "request_context": item.request_context,
        "expected_trajectory": item.expected_trajectory,
        "entity": entity,
        "error": error,
        "metadata": {**item.metadata, "eval_item": item.index, **_turn_counts(out, item)},
    }
    try:
        if out.messages is not None:
            return Run.from_messages(out.messages, **common)
        return Run(input=out.input, output=out.output, **common)
    except Exception as err:  # an output we cannot represent becomes a target error, not a crash
        out.error = out.error or err
        common["error"] = error or f"{type(err).__name__}: {err}"
        return Run(input=None, output=None, **common)


def _target_error(out: TargetOutput, item: EvalItem) -> str | None:
    """The target's error as text; for a multi-turn item, prefixed with the turn that failed."""
    if out.error is None:
        return None
    error = f"{type(out.error).__name__}: {out.error}"
    done = out.turns_completed
    if item.turns is not None and done is not None and done < len(item.turns):
        error = f"turn {done + 1} of {len(item.turns)}: {error}"
    return error


def _turn_counts(out: TargetOutput, item: EvalItem) -> dict[str, int]:
    """Run metadata of a multi-turn item: its turns and the turns the target answered."""
    if item.turns is None:
        return {}
    return {"turns": len(item.turns), "turns_completed": out.turns_completed or 0}


def _step_run(capture: StepCapture, item: EvalItem, run: Run, *, entity: str) -> Run:
    fields: dict[str, Any] = {
        "ground_truth": item.ground_truth,
        "request_context": item.request_context,
        "trace_id": run.run_id,
        "entity": entity,
        "metadata": {**item.metadata, "eval_item": item.index, "step": capture.name},
    }
    try:
        return Run(
            input=_chat_view(capture.input, "input"), output=_chat_view(capture.output, "output"), **fields
        )
    except Exception:  # a node state our Run model cannot coerce is scored as its text
        return Run(input=repr(capture.input), output=repr(capture.output), **fields)


def _chat_view(state: Any, side: str) -> Any:
    """A chat node's ``{"messages": [...]}`` state as canonical messages; any other state unchanged.

    The input becomes the conversation up to the last user message (an ``AgentInput``), the output the
    node's new messages.
    """
    if not (
        isinstance(state, Mapping) and set(state) == {"messages"} and isinstance(state["messages"], list)
    ):
        return state
    from agentevals._model._convert import split_conversation, to_messages

    messages = to_messages(state["messages"])
    return messages if side == "output" else split_conversation(messages)[0]
