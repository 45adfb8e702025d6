"""``create_scorer`` and ``Scorer``: a pipeline preprocess → analyze → generate_score → generate_reason."""

from __future__ import annotations

import contextvars
import inspect
import math
import numbers
import time
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any, Literal

from agentevals._model._errors import JudgeError, JudgeOutputError, ScorerError, ScorerSkipped, SkipRun
from agentevals._model._result import JudgeCall, ScoreResult, Source, run_fields
from agentevals._model._run import Run, coerce_run
from agentevals._model._version import canonical, config_digest, function_description
from agentevals._scoring._judge._input_flags import judge_input_flags
from agentevals._scoring._judge._judge import Judge, stored_reply
from agentevals._scoring._steps import (
    PLAIN_VALUES,
    STEP_ORDER,
    ScoreOutput,
    SkipJudge,
    Step,
    StepName,
    StepResults,
    make_step,
)
from agentevals._support._sync import run_sync

ScorerType = Literal["agent", "trajectory"]
ScoreRange = tuple[float, float]
UNIT_RANGE: ScoreRange = (0.0, 1.0)


class _Execution:
    """Mutable state of one ``Scorer.run`` call (never stored on the scorer)."""

    __slots__ = ("durations", "judge_calls", "prompts", "reason", "replies", "results", "score")

    def __init__(self) -> None:
        self.results = _NO_RESULTS
        self.score: float | None = None
        self.reason: str | None = None
        self.prompts: dict[str, str] = {}
        self.replies: dict[str, str] = {}  # each judged step's reply text, as stored
        self.durations: dict[str, float] = {}
        self.judge_calls: list[JudgeCall] = []


_NO_RESULTS = StepResults()
_current: contextvars.ContextVar[_Execution | None] = contextvars.ContextVar(
    "agentevals_scorer_execution", default=None
)


def is_scoring() -> bool:
    """True while a scorer runs in the current context (e.g. inside a step, or a judge call it makes).

    Integrations that score LLM traffic use it to skip the scorers' own calls (no feedback loop).
    """
    return _current.get() is not None


@dataclass(frozen=True)
class StepInfo:
    name: StepName
    type: Literal["function", "prompt"]
    description: str | None


class Scorer:
    """A configured, stateless scorer. Build one with :func:`create_scorer`.

    Each step method returns a new scorer with that step set (setting a step again replaces it), so a
    prebuilt scorer can be specialised without being changed. Steps run in the fixed order
    preprocess → analyze → generate_score → generate_reason; only ``generate_score`` is required.

    ``generate_score`` must return a number in ``score_range`` ([0, 1] unless declared otherwise):
    any other value fails the run (an error record naming the scorer, the value and the range). A
    scorer declaring another range has its scores rescaled to [0, 1] in the result, the value it
    returned kept as ``raw_score``; ``generate_reason`` is given that returned value.

    >>> scorer = create_scorer(id="short", description="Short answers").generate_score(
    ...     lambda run, **_: 1.0 if len(run.output_text) < 20 else 0.0)
    >>> scorer.run_sync(input="2+2?", output="4").score
    1.0
    """

    __slots__ = (
        "_digest",
        "_ordered",
        "_steps",
        "_version",
        "description",
        "id",
        "judge",
        "name",
        "score_range",
        "type",
    )

    def __init__(
        self,
        *,
        id: str,
        name: str | None = None,
        description: str = "",
        judge: Judge | Mapping[str, Any] | str | None = None,
        type: ScorerType | None = None,
        steps: Mapping[StepName, Step] | None = None,
        version: str | None = None,
        score_range: ScoreRange = UNIT_RANGE,
    ) -> None:
        if not isinstance(id, str) or not id.strip():
            raise ValueError("a scorer needs a non-empty string id, e.g. create_scorer(id='relevancy')")
        if type not in (None, "agent", "trajectory"):
            raise ValueError(f"type must be 'agent', 'trajectory' or None, not {type!r}")
        if version is not None and (not isinstance(version, str) or not version.strip()):
            raise ValueError(f"version must be a non-empty string (e.g. version='2'), not {version!r}")
        self._version = version  # the user's; copies keep it
        self._digest: str | None = None  # the computed one, cached
        self.id = id
        self.name = name or id
        self.description = description
        self.judge = Judge.of(judge)
        self.type = type
        self.score_range = _checked_range(score_range)
        self._steps: dict[StepName, Step] = dict(steps or {})
        self._ordered = tuple(s for name in STEP_ORDER if (s := self._steps.get(name)) is not None)

    # -- builder ----------------------------------------------------------------------------------

    def preprocess(self, step: Any) -> Scorer:
        """Set the preprocess step; its value becomes ``results.preprocess_step_result``."""
        return self._with_step("preprocess", step)

    def analyze(self, step: Any) -> Scorer:
        """Set the analyze step; its value becomes ``results.analyze_step_result``."""
        return self._with_step("analyze", step)

    def generate_score(self, step: Any) -> Scorer:
        """Set the required score step; it must produce a finite number."""
        return self._with_step("generate_score", step)

    def generate_reason(self, step: Any) -> Scorer:
        """Set the reason step; it is also given ``score=`` and must produce a string."""
        return self._with_step("generate_reason", step)

    def _with_step(self, name: StepName, definition: Any) -> Scorer:
        steps = {**self._steps, name: make_step(name, definition)}
        return Scorer(
            id=self.id,
            name=self.name,
            description=self.description,
            judge=self.judge,
            type=self.type,
            steps=steps,
            version=self._version,
            score_range=self.score_range,
        )

    def with_id(self, id: str, name: str | None = None) -> Scorer:
        """A copy under another id (and name), e.g. to attach two variants of one prebuilt scorer."""
        return Scorer(
            id=id,
            name=name or id,
            description=self.description,
            judge=self.judge,
            type=self.type,
            steps=self._steps,
            version=self._version,
            score_range=self.score_range,
        )

    @property
    def version(self) -> str:
        """The version stored with each record: the one given to :func:`create_scorer`, else 12 hex
        digits of a digest of the configuration (id, steps' functions and prompts, output schemas, the
        judge's model and instructions), the same in every process; it changes when any of them does.

        >>> a = create_scorer(id="len").generate_score(lambda run, **_: float(len(run.output_text)))
        >>> len(a.version), create_scorer(id="len", version="2").version
        (12, '2')
        """
        if self._version is not None:
            return self._version
        if self._digest is None:
            self._digest = config_digest(self._version_description())
        return self._digest

    def _version_description(self) -> tuple[Any, ...]:
        """What the computed version covers (never the judge's credentials)."""
        steps: list[tuple[Any, ...]] = []
        for step in self._ordered:
            if step.function is not None:
                steps.append((step.name, "function", function_description(step.function.fn)))
                continue
            prompt = step.prompt
            assert prompt is not None
            steps.append(
                (
                    step.name,
                    "prompt",
                    prompt.description,
                    canonical(prompt.output_schema),
                    function_description(prompt.create_prompt),
                    None if prompt.calculate_score is None else function_description(prompt.calculate_score),
                    _judge_description(prompt.judge),
                )
            )
        return ("scorer", self.id, self.type, self.score_range, tuple(steps), _judge_description(self.judge))

    @property
    def steps(self) -> list[StepInfo]:
        """The configured steps in execution order."""
        return [
            StepInfo(name=s.name, type=s.kind, description=s.description)
            for name in STEP_ORDER
            if (s := self._steps.get(name)) is not None
        ]

    @property
    def has_judge(self) -> bool:
        """Whether any step calls an LLM judge."""
        return any(s.prompt is not None for s in self._steps.values())

    def check(self) -> None:
        """Verify the configuration of every judge the prompt steps use (:meth:`Judge.check`), without
        calling a model; raises ``ValueError`` saying how to fix it."""
        judges = [s.prompt.judge or self.judge for s in self._ordered if s.prompt is not None]
        for judge in {id(j): j for j in judges if j is not None}.values():
            judge.check()

    @property
    def is_sync(self) -> bool:
        """Whether every step is a plain (non-``async``) function: the scorer never waits on I/O."""
        return all(s.function is not None and not s.function.is_async for s in self._steps.values())

    def __repr__(self) -> str:
        steps = ", ".join(f"{s.name}:{s.type}" for s in self.steps)
        return f"Scorer(id={self.id!r}, steps=[{steps}])"

    # -- running ----------------------------------------------------------------------------------

    async def run(self, run: Run | Mapping[str, Any] | None = None, /, **fields: Any) -> ScoreResult:
        """Score one run, given as a :class:`Run` or as its fields (``input=``, ``output=``, ...).

        Raises :class:`ScorerError` naming the failed step, with the original exception chained
        (:class:`~agentevals.errors.ScorerSkipped` when a step skipped the run: ``SkipRun``).
        """
        return await self.score(coerce_run(run, fields))

    async def score(self, run: Run, *, source: Source = "eval") -> ScoreResult:
        """Score ``run`` (a :class:`Run`), marking the result with ``source``; :meth:`run` for the rest."""
        if "generate_score" not in self._steps:
            raise ScorerError(
                self.id,
                "generate_score",
                "the scorer has no generate_score step; add one with .generate_score(...)",
            )
        execution = _Execution()
        parent = _current.get()
        token = _current.set(execution)
        started = time.perf_counter()
        try:
            for step in self._ordered:
                # Inlined (no coroutine per step): most steps are plain functions.
                step_started = time.perf_counter()
                try:
                    kwargs: dict[str, Any] = {"run": run, "results": execution.results}
                    if step.name == "generate_reason":
                        kwargs["score"] = execution.score
                    if step.function is not None:
                        value = step.function.call(kwargs)
                        if type(value) not in PLAIN_VALUES and inspect.isawaitable(value):
                            value = await value
                    else:
                        value = await self._prompt_value(step, run, execution, kwargs)
                    self._store(step.name, value, execution)
                except ScorerError:
                    raise
                except SkipRun as skip:
                    raise ScorerSkipped(
                        self.id,
                        step.name,
                        skip.message,
                        skip_reason=skip.reason,
                        completed=_completed(execution),
                        prompts=execution.prompts,
                        judge_calls=execution.judge_calls,
                        replies=execution.replies,
                        judge_input_flags=self._input_flags(run),
                    ) from skip
                except Exception as err:
                    raise self._step_error(step, err, execution, run) from err
                finally:
                    execution.durations[step.name] = (time.perf_counter() - step_started) * 1000
        finally:
            _current.reset(token)
            if parent is not None:
                parent.judge_calls.extend(execution.judge_calls)
        assert execution.score is not None
        results = execution.results
        low, high = self.score_range
        unit = self.score_range == UNIT_RANGE
        return ScoreResult(
            scorer_id=self.id,
            scorer_name=self.name,
            scorer_version=self.version,
            **run_fields(run),
            score=execution.score if unit else (execution.score - low) / (high - low),
            raw_score=None if unit else execution.score,
            reason=execution.reason,
            preprocess_step_result=results.preprocess_step_result,
            analyze_step_result=results.analyze_step_result,
            generate_score_step_result=results.generate_score_step_result,
            **{f"{name}_prompt": prompt for name, prompt in execution.prompts.items()},
            judge_replies=execution.replies,
            step_durations_ms=execution.durations,
            duration_ms=(time.perf_counter() - started) * 1000,
            judge_calls=execution.judge_calls,
            source=source,
            judge_input_flags=self._input_flags(run),
        )

    def run_sync(self, run: Run | Mapping[str, Any] | None = None, /, **fields: Any) -> ScoreResult:
        """Blocking :meth:`run`; works in plain scripts and inside a running event loop (Jupyter)."""
        return run_sync(self.run(run, **fields))

    def _input_flags(self, run: Run) -> tuple[str, ...]:
        """What ``run``'s output holds that tries to steer this scorer's judge (none without a judge)."""
        return judge_input_flags(run.output_text) if self.has_judge else ()

    def _step_error(self, step: Step, err: Exception, execution: _Execution, run: Run) -> ScorerError:
        """``err`` raised by ``step``, as the ``ScorerError`` that names the step and keeps the work done."""
        if isinstance(err, JudgeError) and err.call is not None:
            execution.judge_calls.append(err.call)
        if isinstance(err, JudgeOutputError) and err.raw_output:  # the reply that could not be parsed
            execution.replies[step.name] = stored_reply(err.raw_output)
        return ScorerError(
            self.id,
            step.name,
            f"{type(err).__name__}: {err}",
            completed=_completed(execution),
            prompts=execution.prompts,
            judge_calls=execution.judge_calls,
            replies=execution.replies,
            judge_input_flags=self._input_flags(run),
        )

    async def _prompt_value(self, step: Step, run: Run, execution: _Execution, kwargs: dict[str, Any]) -> Any:
        prompt_step = step.prompt
        assert prompt_step is not None
        judge = prompt_step.judge or self.judge
        if judge is None:
            raise ValueError(
                f"the {step.name} step is a prompt step but no judge is configured; pass "
                "judge=Judge(model=..., instructions=...) to create_scorer or to the PromptStep"
            )
        prompt = await prompt_step._prompt(**kwargs)
        if isinstance(prompt, SkipJudge):
            return prompt.value
        if not isinstance(prompt, str):
            raise TypeError(f"create_prompt must return a string, got {type(prompt).__name__}")
        execution.prompts[step.name] = prompt
        schema = await prompt_step.schema_for(**kwargs)
        if step.name == "generate_score" and schema is None:
            schema = ScoreOutput
        reply = await judge.complete(prompt, schema=schema, step=step.name)
        execution.judge_calls.append(reply.call)
        execution.replies[step.name] = reply.stored_text
        if step.name != "generate_score":
            return reply.value
        execution.results = replace(execution.results, generate_score_step_result=reply.value)
        if prompt_step._calculate is not None:
            return await prompt_step._calculate(run=run, results=execution.results, output=reply.value)
        return getattr(reply.value, "score", None)

    def _store(self, name: StepName, value: Any, execution: _Execution) -> None:
        results = execution.results
        if name == "preprocess":
            execution.results = StepResults(preprocess_step_result=value)
        elif name == "analyze":
            execution.results = StepResults(results.preprocess_step_result, analyze_step_result=value)
        elif name == "generate_score":
            execution.score = _in_range(self.id, _finite_score(value), self.score_range)
            if results.generate_score_step_result is None:
                execution.results = StepResults(
                    results.preprocess_step_result, results.analyze_step_result, value
                )
        else:
            if value is not None and not isinstance(value, str):
                raise TypeError(f"generate_reason must return a string, got {type(value).__name__}")
            execution.reason = value


def _judge_description(judge: Judge | None) -> tuple[Any, ...] | None:
    """What makes a judge another instrument: its model, instructions and the settings that shape its
    replies (credentials stay secrets, described by type only; timeouts and retries are left out)."""
    if judge is None:
        return None
    return (
        judge.model,
        judge.instructions,
        judge.temperature,
        judge.structured_output,
        judge.max_tokens,
        canonical(dict(judge.completion_kwargs)),
    )


def _finite_score(value: Any) -> float:
    if type(value) is float or type(value) is int or isinstance(value, numbers.Real):
        score = float(value)
        if math.isfinite(score):
            return score
    raise ValueError(f"generate_score must return a finite number, got {value!r}")


def _in_range(scorer_id: str, score: float, score_range: ScoreRange) -> float:
    low, high = score_range
    if low <= score <= high:
        return score
    raise ValueError(
        f"scorer {scorer_id!r} returned the score {score!r}, outside its score range [{low:g}, {high:g}]; "
        "return a score in that range, or declare the scorer's range with "
        "create_scorer(..., score_range=(low, high)) to have its scores rescaled to [0, 1]"
    )


def _checked_range(score_range: Any) -> ScoreRange:
    """``score_range`` as two floats, or a ``ValueError`` saying what a valid range is."""
    if isinstance(score_range, tuple | list) and len(score_range) == 2:
        low, high = score_range
        if all(isinstance(v, numbers.Real) and not isinstance(v, bool) for v in (low, high)):
            low, high = float(low), float(high)
            if math.isfinite(low) and math.isfinite(high) and low < high:
                return (low, high)
    raise ValueError(
        f"score_range must be (low, high), two finite numbers with low < high, e.g. score_range=(0, 10); "
        f"got {score_range!r}"
    )


def _completed(execution: _Execution) -> dict[str, Any]:
    done: dict[str, Any] = {}
    if execution.results.preprocess_step_result is not None:
        done["preprocess"] = execution.results.preprocess_step_result
    if execution.results.analyze_step_result is not None:
        done["analyze"] = execution.results.analyze_step_result
    if execution.score is not None:
        done["generate_score"] = execution.score
    return done


def create_scorer(
    *,
    id: str,
    name: str | None = None,
    description: str = "",
    judge: Judge | Mapping[str, Any] | str | None = None,
    type: ScorerType | None = None,
    version: str | None = None,
    score_range: ScoreRange = UNIT_RANGE,
) -> Scorer:
    """Start a scorer; chain ``.preprocess``, ``.analyze``, ``.generate_score``, ``.generate_reason``.

    >>> from agentevals import create_scorer
    >>> scorer = (
    ...     create_scorer(id="quality", description="Evaluates response quality")
    ...     .preprocess(lambda run, **_: {"word_count": len(run.output_text.split())})
    ...     .generate_score(lambda results, **_: float(results.preprocess_step_result["word_count"] > 3))
    ...     .generate_reason(lambda score, **_: f"Score: {score}.")
    ... )
    >>> scorer.run_sync(input="What is ML?", output="ML is a subset of AI.").reason
    'Score: 1.0.'

    ``version`` names this configuration in stored records (default: a digest of it, see
    :attr:`Scorer.version`); set it to keep one version across edits that do not change scores.

    ``score_range`` declares the scores ``generate_score`` returns (default ``(0, 1)``); a score outside
    it fails the run. Results are rescaled to [0, 1], the returned value kept as ``raw_score``:

    >>> stars = create_scorer(id="stars", score_range=(0, 5)).generate_score(lambda **_: 4)
    >>> result = stars.run_sync(input="Rate it", output="Good")
    >>> result.score, result.raw_score
    (0.8, 4.0)
    """
    return Scorer(
        id=id,
        name=name,
        description=description,
        judge=judge,
        type=type,
        version=version,
        score_range=score_range,
    )
