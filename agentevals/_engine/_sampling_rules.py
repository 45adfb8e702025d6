"""Rule sampling: ordered rules, each a predicate and a rate; the first rule whose predicate holds decides.

A rule is declared as data (from a JSON/YAML file) or with a callable ``(run) -> bool``:

    {"when": {"error": true}, "rate": 1.0}
    {"when": {"metadata.feedback": "negative"}, "rate": 1.0, "name": "complaints"}
    {"when": {"entity": "checkout", "latency_ms": {"gt": 2000}}, "rate": 0.2}
    {"rate": 0.01}                                   # no "when": every run (the catch-all)

The keys of one ``when`` must all hold. Keys: ``error`` and ``tool_failed`` (``true``/``false``);
``entity``, ``model`` and ``metadata.<dotted.path>`` (a value: equal; a list: one of; or operators
``eq``, ``ne``, ``in``, ``contains``, ``exists``, ``gt``, ``gte``, ``lt``, ``lte``); ``latency_ms``,
``tokens``, ``input_tokens``, ``output_tokens`` (thresholds ``gt``, ``gte``, ``lt``, ``lte``); ``any``
(a list of ``when`` mappings, one of which must hold). A value the run does not carry (no token usage,
no model, no such metadata key) makes its predicate false; only ``{"exists": false}`` holds then.

The rules are compiled to closures once, at construction; a bad rule is a ``ValueError`` naming the rule
and the key.
"""

from __future__ import annotations

import json
import math
import operator
from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar

from agentevals._model._messages import Message
from agentevals._model._run import Run

Predicate = Callable[[Run], bool]
_T = TypeVar("_T")
ValueTest = Callable[[Any], bool]

MISSING: Any = object()  # a value the run does not carry (distinct from a stored null)

_THRESHOLDS: dict[str, Callable[[Any, Any], bool]] = {
    "gt": operator.gt,
    "gte": operator.ge,
    "lt": operator.lt,
    "lte": operator.le,
}
_SYMBOLS = {"eq": "=", "ne": "!=", "gt": ">", "gte": ">=", "lt": "<", "lte": "<="}
_VALUE_OPERATORS = ("eq", "ne", "in", "contains", "exists", *_THRESHOLDS)
_FLAGS = ("error", "tool_failed")
_VALUES = ("entity", "model")
_NUMBERS = ("latency_ms", "tokens", "input_tokens", "output_tokens")
KEYS = (*_FLAGS, *_VALUES, *_NUMBERS, "any", "metadata.<path>")
_RULE_KEYS = frozenset({"when", "rate", "name"})


def check_rate(rate: Any, what: str = "a sampling rate") -> float:
    """``rate`` when it is a number in [0, 1], else a ``ValueError`` saying so."""
    if isinstance(rate, bool) or not isinstance(rate, int | float):
        raise ValueError(f"{what} must be a number in [0, 1], got {rate!r}")
    if not (math.isfinite(rate) and 0.0 <= rate <= 1.0):
        raise ValueError(f"{what} must be in [0, 1], got {rate!r}; use 0.25 for 25% of runs")
    return float(rate)


@dataclass(frozen=True, kw_only=True)
class Rule:
    """One sampling rule: runs for which ``when`` holds are sampled at ``rate`` (deterministically by
    ``trace_id or run_id``, as ratio sampling). ``when`` is a mapping of predicates (see the module),
    a callable ``(run) -> bool``, or ``None`` for every run; ``name`` labels the rule in
    ``stats().sampled_by_rule`` (by default a short description of ``when``).

    >>> Rule(when={"metadata.feedback": "negative"}, rate=1.0).label
    'metadata.feedback=negative'
    >>> Rule(rate=0.01).label
    'otherwise'
    """

    rate: float
    when: Mapping[str, Any] | Predicate | None = None
    name: str | None = None
    test: Predicate | None = field(default=None, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        check_rate(self.rate, "a rule's rate")
        if self.name is not None and (not isinstance(self.name, str) or not self.name):
            raise ValueError(f"a rule's name must be a non-empty string, got {self.name!r}")
        object.__setattr__(self, "test", compile_when(self.when))

    @property
    def label(self) -> str:
        """The rule's name, or a short description of its predicate."""
        if self.name is not None:
            return self.name
        if self.when is None or (isinstance(self.when, Mapping) and not self.when):
            return "otherwise"
        if isinstance(self.when, Mapping):
            return _describe(self.when)
        return str(getattr(self.when, "__name__", "predicate"))

    @classmethod
    def of(cls, value: Rule | Mapping[str, Any]) -> Rule:
        """A ``Rule``, or one from its data form ``{"when": {...}, "rate": 0.2, "name": "..."}``."""
        if isinstance(value, Rule):
            return value
        if not isinstance(value, Mapping):
            raise ValueError(f'expected {{"when": {{...}}, "rate": 0.2}} or a Rule, got {value!r}')
        unknown = sorted(str(k) for k in set(value) - _RULE_KEYS)
        if unknown:
            raise ValueError(
                f"unknown key(s) {unknown}; a rule has 'when', 'rate' and optionally 'name' "
                '(predicates go inside "when": {"when": {"error": true}, "rate": 1.0})'
            )
        if "rate" not in value:
            raise ValueError('a rule needs a rate, e.g. {"when": {"error": true}, "rate": 1.0}')
        return cls(rate=value["rate"], when=value.get("when"), name=value.get("name"))


class RuleSet:
    """Ordered rules, first match wins; compiled once. :meth:`verdict` is the engine's hot path.

    >>> rules = RuleSet([{"when": {"error": True}, "rate": 1.0}, {"rate": 0.0}])
    >>> rules.names
    ('error', 'otherwise')
    >>> rules.verdict(Run(output="x", error="boom"), 0.5), rules.verdict(Run(output="x"), 0.5)
    (1, 2)
    """

    __slots__ = ("_checks", "names", "rules")

    def __init__(self, rules: Iterable[Rule | Mapping[str, Any]]) -> None:
        if isinstance(rules, Mapping | str) or not isinstance(rules, Iterable):
            raise ValueError(
                'rule sampling takes a list of rules, e.g. [{"when": {"error": true}, "rate": 1.0}, '
                f'{{"rate": 0.01}}], got {rules!r}'
            )
        built: list[Rule] = []
        for number, value in enumerate(rules, start=1):
            if built and built[-1].test is None:
                raise ValueError(
                    f"sampling rule {number} comes after rule {number - 1} ({built[-1].label!r}), which "
                    "matches every run, so it would never apply; put the catch-all rule last"
                )
            try:
                built.append(Rule.of(value))
            except ValueError as err:
                raise ValueError(f"sampling rule {number}: {err}") from None
        if not built:
            raise ValueError('rule sampling needs at least one rule, e.g. [{"rate": 0.01}]')
        names = [rule.label for rule in built]
        for number, name in enumerate(names, start=1):
            if names.index(name) != number - 1:
                raise ValueError(
                    f"sampling rules {names.index(name) + 1} and {number} are both named {name!r}; "
                    'give one of them a "name"'
                )
        self.rules = tuple(built)
        self.names = tuple(names)
        # (predicate or None for every run, rate, 2 * index): tuples made once, unpacked per run.
        self._checks = tuple((rule.test, rule.rate, 2 * i) for i, rule in enumerate(built))

    def verdict(self, run: Run, point: float) -> int:
        """``-1`` when no rule matches ``run``, else ``2 * index`` of the first matching rule, plus 1
        when that rule samples it (``point``: the run's :func:`~agentevals._engine._sampling.sample_point`).
        A raising callable predicate propagates (the engine counts the run as not sampled)."""
        for test, rate, code in self._checks:
            if test is None or test(run):
                return code + 1 if point < rate else code
        return -1

    def __eq__(self, other: object) -> bool:
        return isinstance(other, RuleSet) and other.rules == self.rules

    def __hash__(self) -> int:
        return hash(self.names)

    def __repr__(self) -> str:
        return f"RuleSet({list(self.rules)!r})"


# -- compiling predicates ---------------------------------------------------------------------------


def compile_when(when: Mapping[str, Any] | Predicate | None) -> Predicate | None:
    """The predicate of a rule's ``when`` (``None``: every run)."""
    if when is None:
        return None
    if isinstance(when, Mapping):
        if not when:
            return None
        return _all_of([_compile_key(key, spec) for key, spec in when.items()])
    if callable(when):
        return when
    raise ValueError(f"'when' must be a mapping of predicates or a callable (run) -> bool, got {when!r}")


def _all_of(tests: list[Callable[[_T], bool]]) -> Callable[[_T], bool]:
    """One test true when every one of ``tests`` is (the test itself when there is one)."""
    if len(tests) == 1:
        return tests[0]

    def every(value: _T) -> bool:
        for test in tests:  # noqa: SIM110  (a loop: all() would make a generator per run)
            if not test(value):
                return False
        return True

    return every


def _compile_key(key: Any, spec: Any) -> Predicate:
    if not isinstance(key, str):
        raise ValueError(f"predicate keys are strings, got {key!r}")
    if key in _FLAGS:
        if not isinstance(spec, bool):
            raise ValueError(f"{key!r} takes true or false, got {spec!r}")
        return _flag(_errored if key == "error" else _tool_failed, spec)
    if key == "any":
        return _any_of(spec)
    if key in _NUMBERS:
        if not isinstance(spec, Mapping):
            raise ValueError(f"{key!r} takes thresholds, e.g. {{{key!r}: {{'gt': 2000}}}}, got {spec!r}")
        return _field(_NUMBER_FIELDS[key], _value_test(key, spec, tuple(_THRESHOLDS)))
    plain = spec is not None and not isinstance(spec, Mapping | list | tuple | set | frozenset)  # equality
    if key == "entity":
        if plain:
            return lambda run: run.entity == spec  # one call per run (an absent entity is None)
        return _field(_entity, _value_test(key, spec, _VALUE_OPERATORS))
    if key == "model":
        return _any_model(_value_test(key, spec, _VALUE_OPERATORS))
    if key.startswith("metadata.") and all(key.split(".")[1:]):
        path = key.split(".")[1:]
        if plain and len(path) == 1:
            (only,) = path
            return lambda run: run.metadata.get(only, MISSING) == spec
        return _field(_metadata_path(path), _value_test(key, spec, _VALUE_OPERATORS))
    raise ValueError(f"unknown predicate {key!r}; expected one of {list(KEYS)}")


def _flag(holds: Predicate, wanted: bool) -> Predicate:
    if wanted:
        return holds
    return lambda run: not holds(run)


def _errored(run: Run) -> bool:
    return run.error is not None


def _tool_failed(run: Run) -> bool:
    output = run.output
    if not isinstance(output, list):
        return False
    for message in output:
        if isinstance(message, Message):
            for call in message.tool_invocations:
                if call.failed:
                    return True
    return False


def _any_of(spec: Any) -> Predicate:
    if isinstance(spec, Mapping | str) or not isinstance(spec, list | tuple) or not spec:
        raise ValueError(f"'any' takes a non-empty list of predicate mappings, got {spec!r}")
    tests = []
    for option in spec:
        if not isinstance(option, Mapping) or not option:
            raise ValueError(f"each option of 'any' is a non-empty mapping of predicates, got {option!r}")
        tests.append(_all_of([_compile_key(k, v) for k, v in option.items()]))

    def one(run: Run) -> bool:
        for test in tests:  # noqa: SIM110  (a loop: any() would make a generator per run)
            if test(run):
                return True
        return False

    return one


def _field(get: Callable[[Run], Any], test: ValueTest) -> Predicate:
    return lambda run: test(get(run))


def _any_model(test: ValueTest) -> Predicate:
    def holds(run: Run) -> bool:
        models = _models(run)
        return any(test(model) for model in models) if models else test(MISSING)

    return holds


# -- what a run carries -------------------------------------------------------------------------------


def _entity(run: Run) -> Any:
    return MISSING if run.entity is None else run.entity


def _models(run: Run) -> list[Any]:
    """The models the run called: ``metadata["models"]`` (LangChain) or ``metadata["model"]`` (LiteLLM)."""
    models = run.metadata.get("models")
    if isinstance(models, list | tuple):
        return list(models)
    model = run.metadata.get("model")
    return [] if model is None else [model]


def _latency(run: Run) -> Any:
    return MISSING if run.duration_ms is None else run.duration_ms


def _usage(run: Run, *keys: str) -> Any:
    usage = run.metadata.get("usage")
    if isinstance(usage, dict):
        for key in keys:
            value = usage.get(key)
            if _is_number(value):
                return value
    return MISSING


def _input_tokens(run: Run) -> Any:
    return _usage(run, "input_tokens", "prompt_tokens")


def _output_tokens(run: Run) -> Any:
    return _usage(run, "output_tokens", "completion_tokens")


def _tokens(run: Run) -> Any:
    """``usage.total_tokens``, else input + output tokens (either alone when only one is reported)."""
    total = _usage(run, "total_tokens")
    if total is not MISSING:
        return total
    parts = [n for n in (_input_tokens(run), _output_tokens(run)) if n is not MISSING]
    return sum(parts) if parts else MISSING


_NUMBER_FIELDS: dict[str, Callable[[Run], Any]] = {
    "latency_ms": _latency,
    "tokens": _tokens,
    "input_tokens": _input_tokens,
    "output_tokens": _output_tokens,
}


def _metadata_path(parts: list[str]) -> Callable[[Run], Any]:
    if len(parts) == 1:
        (only,) = parts
        return lambda run: run.metadata.get(only, MISSING)

    def get(run: Run) -> Any:
        value: Any = run.metadata
        for part in parts:
            if not isinstance(value, dict):
                return MISSING
            value = value.get(part, MISSING)
        return value

    return get


# -- tests on one value -------------------------------------------------------------------------------


def _value_test(key: str, spec: Any, allowed: tuple[str, ...]) -> ValueTest:
    if isinstance(spec, Mapping):
        if not spec:
            raise ValueError(f"{key!r}: no operator given; use one of {list(allowed)}")
        tests = []
        for name, operand in spec.items():
            if name not in allowed:
                raise ValueError(f"{key!r}: unknown operator {name!r}; use one of {list(allowed)}")
            tests.append(_operator(key, name, operand))
        return _all_of(tests)
    if isinstance(spec, list | tuple | set | frozenset):
        return _operator(key, "in", spec)
    return _operator(key, "eq", spec)


def _operator(key: str, name: str, operand: Any) -> ValueTest:
    if name in _THRESHOLDS:
        if not _is_number(operand):
            raise ValueError(f"{key!r}: {name!r} takes a number, got {operand!r}")
        compare = _THRESHOLDS[name]
        return lambda value: _is_number(value) and compare(value, operand)
    if name == "exists":
        if not isinstance(operand, bool):
            raise ValueError(f"{key!r}: 'exists' takes true or false, got {operand!r}")
        return lambda value: (value is not MISSING and value is not None) is operand
    if name == "in":
        if isinstance(operand, Mapping | str) or not isinstance(operand, list | tuple | set | frozenset):
            raise ValueError(f"{key!r}: 'in' takes a list of values, got {operand!r}")
        choices = tuple(operand)
        return lambda value: value is not MISSING and value in choices
    if name == "contains":
        return lambda value: _contains(value, operand)
    if name == "ne":
        return lambda value: value is not MISSING and value != operand
    return lambda value: value is not MISSING and value == operand


def _contains(value: Any, item: Any) -> bool:
    if value is MISSING or not isinstance(value, Collection):
        return False
    try:
        return item in value
    except TypeError:  # e.g. a number looked up in a string
        return False


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


# -- labels -------------------------------------------------------------------------------------------


def _describe(when: Mapping[str, Any]) -> str:
    return ", ".join(_describe_key(str(key), spec) for key, spec in when.items())


def _describe_key(key: str, spec: Any) -> str:
    if isinstance(spec, bool) and key in _FLAGS:
        return key if spec else f"not {key}"
    if key == "any" and isinstance(spec, list | tuple):
        return "any(" + " | ".join(_describe(o) if isinstance(o, Mapping) else "?" for o in spec) + ")"
    if isinstance(spec, Mapping):
        return ", ".join(_describe_operator(key, str(name), operand) for name, operand in spec.items())
    return _describe_operator(key, "in" if isinstance(spec, list | tuple) else "eq", spec)


def _describe_operator(key: str, name: str, operand: Any) -> str:
    if name in _SYMBOLS:
        return f"{key}{_SYMBOLS[name]}{_text(operand)}"
    if name == "exists":
        return f"{key} exists" if operand else f"no {key}"
    if name == "in":
        return f"{key} in [{', '.join(_text(o) for o in operand)}]"
    return f"{key} {name} {_text(operand)}"


def _text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, default=str)
