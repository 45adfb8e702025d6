"""Scorer steps: plain functions (sync or async) or prompt steps judged by an LLM."""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, TypeGuard

from pydantic import BaseModel

from agentevals._scoring._judge._judge import Judge

StepName = Literal["preprocess", "analyze", "generate_score", "generate_reason"]
STEP_ORDER: tuple[StepName, ...] = ("preprocess", "analyze", "generate_score", "generate_reason")


@dataclass(frozen=True)
class StepResults:
    """The results of the steps that ran so far, as seen by later steps."""

    preprocess_step_result: Any = None
    analyze_step_result: Any = None
    generate_score_step_result: Any = None


@dataclass(frozen=True)
class SkipJudge:
    """Return this from ``create_prompt`` to skip the judge call; ``value`` becomes the step's result.

    Useful when there is nothing to ask, e.g. a fixed reason for an empty output. For a
    ``generate_score`` step the value is the score itself (``calculate_score`` is not called).
    """

    value: Any


class ScoreOutput(BaseModel):
    """Default output schema of a prompt-mode ``generate_score`` step."""

    score: float


class Invoker:
    """Calls a user function with only the keyword arguments it accepts, awaiting it if needed.

    The accepted names are worked out once, so ``lambda run: ...``, ``lambda run, results, **_: ...``
    and ``def step(*, results): ...`` all work.
    """

    __slots__ = ("accepts_all", "fn", "is_async", "names")

    def __init__(self, fn: Callable[..., Any], what: str) -> None:
        if not callable(fn):
            raise TypeError(f"{what} must be callable, got {fn!r}")
        self.fn = fn
        call_method = None if inspect.isroutine(fn) else type(fn).__call__  # a callable object
        self.is_async = inspect.iscoroutinefunction(fn) or inspect.iscoroutinefunction(call_method)
        try:
            params = inspect.signature(fn).parameters.values()
        except (TypeError, ValueError):
            self.accepts_all, self.names = True, frozenset[str]()
            return
        self.accepts_all = any(p.kind is p.VAR_KEYWORD for p in params)
        self.names = frozenset(p.name for p in params if p.kind in (p.KEYWORD_ONLY, p.POSITIONAL_OR_KEYWORD))

    def call(self, kwargs: dict[str, Any]) -> Any:
        """Call the function with the accepted ``kwargs``; an async function's awaitable is returned."""
        if not self.accepts_all:
            kwargs = {k: v for k, v in kwargs.items() if k in self.names}
        return self.fn(**kwargs)

    async def __call__(self, **kwargs: Any) -> Any:
        value = self.call(kwargs)
        if type(value) not in PLAIN_VALUES and inspect.isawaitable(value):
            value = await value
        return value


#: Types whose values are never awaitable: the (slow) awaitable check is skipped for them.
PLAIN_VALUES = frozenset({float, int, bool, str, dict, list, tuple, type(None)})


@dataclass(frozen=True)
class PromptStep:
    """A step judged by an LLM: ``create_prompt`` builds the prompt from ``run`` and ``results``.

    ``output_schema`` (a pydantic model) is required for ``preprocess`` and ``analyze``; it may be a
    function of ``run`` and ``results`` returning the model for each call, e.g. one whose verdict list
    must hold as many items as the prompt lists.
    A ``generate_score`` prompt step defaults to ``{"score": float}`` and may map the judge's output to a
    number with ``calculate_score(run=, results=, output=)`` (the score must lie in the scorer's
    ``score_range``, [0, 1] by default: ask the judge for that scale, or declare the judge's scale with
    ``create_scorer(..., score_range=(0, 10))``); a ``generate_reason`` prompt step returns
    the judge's text. ``judge`` overrides the scorer's judge for this step.
    """

    description: str
    create_prompt: Callable[..., str | SkipJudge | Awaitable[str | SkipJudge]]
    output_schema: type[BaseModel] | Callable[..., type[BaseModel]] | None = None
    calculate_score: Callable[..., Any] | None = None
    judge: Judge | None = None
    _prompt: Invoker = field(init=False, repr=False, compare=False)
    _calculate: Invoker | None = field(init=False, repr=False, compare=False)
    _schema: Invoker | None = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "judge", Judge.of(self.judge))
        object.__setattr__(self, "_prompt", Invoker(self.create_prompt, "create_prompt"))
        calculate = self.calculate_score
        object.__setattr__(
            self, "_calculate", None if calculate is None else Invoker(calculate, "calculate_score")
        )
        schema = self.output_schema
        if schema is None or _is_model(schema):
            object.__setattr__(self, "_schema", None)
        elif callable(schema) and not isinstance(schema, type):
            object.__setattr__(self, "_schema", Invoker(schema, "output_schema"))
        else:
            raise TypeError(
                f"output_schema must be a pydantic BaseModel subclass, or a function returning one, got "
                f"{schema!r}"
            )

    async def schema_for(self, **kwargs: Any) -> type[BaseModel] | None:
        """The output schema of one call: ``output_schema``, or what it returns for this call."""
        schema = self.output_schema if self._schema is None else await self._schema(**kwargs)
        if schema is None or _is_model(schema):
            return schema
        raise TypeError(f"output_schema must return a pydantic BaseModel subclass, got {schema!r}")

    @classmethod
    def from_mapping(cls, spec: Mapping[str, Any]) -> PromptStep:
        """Build from a dict in Mastra's prompt-object shape (snake_case or camelCase keys)."""
        names = {
            "description": "description",
            "create_prompt": "create_prompt",
            "createPrompt": "create_prompt",
            "output_schema": "output_schema",
            "outputSchema": "output_schema",
            "calculate_score": "calculate_score",
            "calculateScore": "calculate_score",
            "judge": "judge",
        }
        unknown = sorted(set(spec) - set(names))
        if unknown:
            raise TypeError(f"unknown prompt step key(s) {unknown}; expected some of {sorted(names)}")
        if "description" not in spec or not ({"create_prompt", "createPrompt"} & set(spec)):
            raise TypeError("a prompt step needs `description` and `create_prompt`")
        return cls(**{names[k]: v for k, v in spec.items()})


def _is_model(value: object) -> TypeGuard[type[BaseModel]]:
    return isinstance(value, type) and issubclass(value, BaseModel)


@dataclass(frozen=True)
class Step:
    """One step of a scorer's pipeline."""

    name: StepName
    function: Invoker | None = None
    prompt: PromptStep | None = None
    description: str | None = None

    @property
    def kind(self) -> Literal["function", "prompt"]:
        return "prompt" if self.prompt is not None else "function"


def make_step(name: StepName, definition: Any) -> Step:
    """Validate a step definition (function, ``PromptStep`` or prompt dict) for step ``name``."""
    if isinstance(definition, Mapping):
        definition = PromptStep.from_mapping(definition)
    if isinstance(definition, PromptStep):
        if name in ("preprocess", "analyze") and definition.output_schema is None:
            raise TypeError(
                f"a prompt-mode {name} step needs output_schema=<pydantic model> describing the "
                "judge's JSON output"
            )
        if definition.calculate_score is not None and name != "generate_score":
            raise TypeError(f"calculate_score only applies to generate_score, not {name}")
        return Step(name=name, prompt=definition, description=definition.description)
    if callable(definition):
        doc = inspect.getdoc(definition)
        return Step(name=name, function=Invoker(definition, f"the {name} step"), description=doc)
    raise TypeError(
        f"the {name} step must be a function, a PromptStep, or a dict with description and "
        f"create_prompt; got {type(definition).__name__}"
    )
