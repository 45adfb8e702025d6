"""Shared plumbing of the LLM-judged scorers: options merging, judge setup, judge output types, text and
context helpers."""

from __future__ import annotations

import dataclasses
import inspect
import json
import math
import re
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Annotated, Any, TypeVar

from pydantic import BaseModel, Field
from pydantic.config import JsonDict

from agentevals._model._run import Run
from agentevals._scoring._item_counts import Count
from agentevals._scoring._judge._judge import Judge
from agentevals._scoring._steps import Invoker, PromptStep, SkipJudge, StepResults
from agentevals.scorers.utils import extract_tool_results, round_to_two_decimals

OptionsT = TypeVar("OptionsT")
T = TypeVar("T")

NO_CONTEXT_HINT = (
    "pass context=[...] (or get_context=lambda run: [...]) to the factory, or score runs that carry "
    "retrieved documents in run.context or tool results in their output"
)

RENAMED_OPTIONS: Mapping[str, str] = {"context_extractor": "get_context", "source_extractor": "get_source"}
"""Renamed options and their names (a static value is ``x``, a per-run function ``get_x``): passing one
is an error that names the new one."""


# -- judge output -------------------------------------------------------------------------------------


UnitScore = Annotated[float, Field(ge=0.0, le=1.0)]
"""A judge's score between 0 and 1: the bounds are in the JSON schema the judge is sent, so a server that
enforces the schema keeps the judge within them, and a reply outside them is invalid (retried)."""

#: The most entries a judge lists where the number is its own judgement (missing pieces, major issues,
#: requirements): enough to explain a score, and a bound a small model cannot loop past.
MAX_LISTED = 10


def listed(at_most: int = MAX_LISTED, at_least: int = 0) -> Any:
    """A list field whose JSON schema says how many items it holds (``minItems``, ``maxItems``); replies
    with another count are accepted: the bounds guide a server that enforces the schema, and are no
    validation rule."""
    extra: JsonDict = {"minItems": at_least, "maxItems": at_most} if at_least else {"maxItems": at_most}
    return Field(json_schema_extra=extra)


class Claims(BaseModel):
    """Preprocess output shared by the claim-checking scorers."""

    claims: list[str]


def normalized_label(value: object) -> object:
    """A judge's label as the schema spells it (``"Yes"``, ``" YES "`` -> ``"yes"``); other values as given.

    A verdict model reads its label fields with it: ``_label = field_validator("verdict",
    mode="before")(normalized_label)``; the JSON schema sent to the judge still lists the lowercase
    values. (Not an ``Annotated`` alias: typing caches it per set of values, so two models listing the
    same values in another order would share one order.)

    >>> normalized_label(" Unsure "), normalized_label(3)
    ('unsure', 3)
    """
    return value.strip().lower() if isinstance(value, str) else value


def most_items(text: str) -> int:
    """The most items a list extracted from ``text`` can hold: one per two characters (an item takes at
    least a character and a separator). A bound no extraction reaches, that a small model looping in a
    list does.

    >>> most_items("1, 2, 3"), most_items("")
    (4, 0)
    """
    return -(-len(text.strip()) // 2)


def extraction_count(text: str) -> Count:
    """The item count of a list the judge extracts from ``text``: at least one from a non-empty text (a
    judge that finds nothing there would make the score meaningless), none from an empty one, and at most
    :func:`most_items`.

    >>> extraction_count("Paris is in France."), extraction_count("  ")
    ((1, 10), (0, 0))
    """
    most = most_items(text)
    return (min(1, most), most)


# -- options -----------------------------------------------------------------------------------------


def snake_case(name: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


def merge_options(
    cls: type[OptionsT], options: OptionsT | Mapping[str, Any] | None, overrides: Mapping[str, Any]
) -> OptionsT:
    """Build ``cls`` from defaults, then ``options``, then keyword overrides, merged key by key.

    Unknown keys and invalid values raise ``ValueError`` naming the valid options (and, for a renamed
    or camelCase key, the name to write).
    """
    assert dataclasses.is_dataclass(cls)
    names = [f.name for f in dataclasses.fields(cls)]
    if options is None:
        base: dict[str, Any] = {}
    elif isinstance(options, cls):
        base = {name: getattr(options, name) for name in names}
    elif isinstance(options, Mapping):
        base = dict(options)
    else:
        raise ValueError(f"options must be a {cls.__name__}, a dict or None, not {type(options).__name__}")
    merged: dict[str, Any] = {}
    for key, value in {**base, **overrides}.items():
        if key not in names:
            raise ValueError(_unknown_option(str(key), cls.__name__, names))
        merged[key] = value
    return cls(**merged)


def _unknown_option(key: str, owner: str, names: Sequence[str]) -> str:
    """The error for an unknown option, naming the valid one a renamed or camelCase key stands for."""
    name = snake_case(key)
    name = RENAMED_OPTIONS.get(name, name)
    hint = f"; it was renamed {name!r}" if name in names else ""
    return f"unknown option {key!r} for {owner}{hint}; valid options: {', '.join(names)}"


def check_number(
    owner: str,
    name: str,
    value: Any,
    *,
    low: float | None = None,
    high: float | None = None,
    open_low: bool = False,
) -> None:
    """Raise ``ValueError`` unless ``value`` is a finite number within the bounds."""
    ok = isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)
    if ok and low is not None:
        ok = value > low if open_low else value >= low
    if ok and high is not None:
        ok = value <= high
    if not ok:
        bound = f"{'>' if open_low else '>='} {low}" if low is not None else ""
        bound += f"{' and ' if bound else ''}<= {high}" if high is not None else ""
        raise ValueError(f"{owner}: option {name} must be a finite number {bound}, got {value!r}")


def check_scale(owner: str, scale: Any) -> None:
    check_number(owner, "scale", scale, low=0.0, open_low=True)


def scaled(fraction: float, scale: float) -> float:
    """``fraction × scale`` rounded half-up to two decimals."""
    return round_to_two_decimals(fraction * scale)


# -- judge --------------------------------------------------------------------------------------------


def make_judge(model: str | Judge, instructions: str) -> Judge:
    """A model string becomes a judge with ``instructions``; a ``Judge`` keeps its own if it has some."""
    if isinstance(model, Judge):
        return model if model.instructions else dataclasses.replace(model, instructions=instructions)
    if isinstance(model, str):
        return Judge(model=model, instructions=instructions)
    raise TypeError(f"model must be a LiteLLM model string or a Judge, not {type(model).__name__}")


PromptBuilder = Callable[[Run, StepResults, float], str | Awaitable[str]]
FixedReason = Callable[[Run, StepResults, float], str | None]


def reason_step(judge: Judge, prompt: PromptBuilder, fixed: FixedReason | None = None) -> PromptStep:
    """A generate_reason prompt step: a fixed sentence (no judge call) when ``fixed`` gives one, else the
    judge's text."""

    async def create_prompt(run: Run, results: StepResults, score: float) -> str | SkipJudge:
        if fixed is not None:
            sentence = fixed(run, results, score)
            if sentence is not None:
                return SkipJudge(sentence)
        text = prompt(run, results, score)
        return await text if inspect.isawaitable(text) else text

    return PromptStep(description="Explain the score", create_prompt=create_prompt, judge=judge)


# -- text -------------------------------------------------------------------------------------------


def query_text(run: Run) -> str:
    """The user's input for this run (all input messages)."""
    return run.input_text.strip()


def response_text(run: Run) -> str:
    """The agent's answer (all assistant text of the output)."""
    return run.output_text.strip()


def history_text(run: Run) -> str:
    """Earlier turns recalled from memory, one ``role: text`` line each ('' when none)."""
    return "\n".join(f"{m.role}: {m.content}" for m in run.remembered_messages if m.content)


def numbered(items: Sequence[str], start: int = 1) -> str:
    """Items as a numbered list, or ``(none)``."""
    if not items:
        return "(none)"
    return "\n".join(f"{i}. {item}" for i, item in enumerate(items, start))


def as_text(value: Any) -> str:
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, default=str)


def expect_count(items: Sequence[T], expected: int, *, what: str, per: str) -> list[T]:
    """The judge's first ``expected`` items; ``ValueError`` when it returned fewer.

    Extra items beyond the ones asked for are ignored: a judge that repeats
    or appends a verdict still answered every item. Fewer cannot be scored.
    """
    if len(items) < expected:
        raise ValueError(
            f"the judge returned {len(items)} {what} for {expected} {per}; each of the {per} needs exactly "
            "one (a judge that skips or merges items cannot be scored: retry, or use a stronger judge model)"
        )
    return list(items[:expected])


# -- context ----------------------------------------------------------------------------------------


def tool_result_context(run: Run) -> list[str]:
    """Each tool result of the run as a JSON line ``{"tool": name, "result": ...}``."""
    return [
        json.dumps({"tool": t.tool_name, "result": t.result}, ensure_ascii=False, default=str)
        for t in extract_tool_results(run)
    ]


def run_context(run: Run) -> list[str]:
    """Context captured on the run: ``run.context`` if any, else the tool results."""
    return [c for c in run.context if c.strip()] or tool_result_context(run)


def run_hook(fn: Callable[..., Any] | None, what: str) -> Invoker | None:
    """Wrap a ``get_*`` option; it may take ``run`` and/or ``input``, ``output`` (sync or async)."""
    return None if fn is None else Invoker(fn, what)


def static_context(owner: str, context: Any) -> tuple[str, ...] | None:
    """Validate a static context option: ``None`` or a non-empty sequence of strings."""
    if context is None:
        return None
    if isinstance(context, str) or not isinstance(context, Sequence):
        raise ValueError(f"{owner}: context must be a list of strings, got {type(context).__name__}")
    if not context:
        raise ValueError(f"{owner}: context cannot be empty if provided; omit it to use the run's context")
    if not all(isinstance(c, str) for c in context):
        raise ValueError(f"{owner}: every context item must be a string")
    return tuple(context)


async def resolve_context(
    run: Run, *, extractor: Invoker | None, static: Sequence[str] | None, **hook_args: Any
) -> list[str]:
    """Context for a run: ``get_context``'s (wins), else the static option, else the run's own."""
    if extractor is not None:
        value = await extractor(run=run, input=run.input, output=run.output, **hook_args)
        if value is None:
            return []
        if isinstance(value, str):
            return [value]
        return [as_text(v) for v in value]
    if static is not None:
        return list(static)
    return run_context(run)
