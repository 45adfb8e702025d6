"""Deterministic output-vs-expected scorers: exact match, substring, regex, Levenshtein, JSON.

The output is the run's assistant text (or the plain output); the expected value is ``ground_truth``.
Two strings are compared as they are; when either side is structured (a dict, list, number, ...),
both are compared as canonical JSON (sorted keys, a JSON string parsed first), so ``{"a": 1}``
matches ``{"a": 1}`` and ``'{"a": 1}'`` (see :mod:`agentevals.scorers._canonical`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

from rapidfuzz.distance import Levenshtein

from agentevals._model._errors import SkipRun
from agentevals._model._run import Run
from agentevals._scoring._scorer import Scorer, create_scorer
from agentevals.scorers._canonical import canonical_text, comparable, output_value
from agentevals.scorers._text.bounded import bounded_distance

_SHOWN = 200  # characters of a JSON value quoted in a reason


def _texts(run: Run, scorer: str) -> tuple[str, str]:
    """``(output, expected)`` in one canonical form."""
    if run.ground_truth is None:
        raise SkipRun(
            f"{scorer} compares the output with ground_truth, but the run has none", reason="no_ground_truth"
        )
    return comparable(output_value(run, scorer), run.ground_truth)


def _exact(run: Run) -> dict[str, Any]:
    output, expected = _texts(run, "exact_match")
    return {"expected": expected, "output": output, "match": output == expected}


def _binary(
    id: str,
    description: str,
    analyze: Callable[..., dict[str, Any]],
    flag: str,
    explain: Callable[[dict[str, Any]], str],
) -> Scorer:
    """A 0/1 scorer: ``analyze``'s ``flag`` decides the score; ``explain`` gives the reason for a 0."""
    return (
        create_scorer(id=id, description=description)
        .analyze(analyze)
        .generate_score(lambda results, **_: 1.0 if results.analyze_step_result[flag] else 0.0)
        .generate_reason(
            lambda results, **_: (
                None if results.analyze_step_result[flag] else explain(results.analyze_step_result)
            )
        )
    )


def create_exact_match_scorer() -> Scorer:
    """1 when the output equals ``ground_truth`` exactly, else 0 (id ``exact_match``).

    Structured values compare as canonical JSON: key order does not matter.

    >>> create_exact_match_scorer().run_sync(input="2+2?", output="4", ground_truth="4").score
    1.0
    """
    return _binary(
        "exact_match",
        "1 when the output equals the expected value exactly",
        _exact,
        "match",
        lambda found: f"Expected {found['expected']!r}, got {found['output']!r}",
    )


def _includes(run: Run) -> dict[str, Any]:
    output, expected = _texts(run, "includes")
    return {"expected": expected, "found": expected in output}


def create_includes_scorer() -> Scorer:
    """1 when the output contains ``ground_truth`` (structured values as canonical JSON), else 0.

    The id is ``includes``.

    >>> create_includes_scorer().run_sync(input="Capital?", output="It is Paris.", ground_truth="Paris").score
    1.0
    """
    return _binary(
        "includes",
        "1 when the output contains the expected value",
        _includes,
        "found",
        lambda found: f"Output does not contain {found['expected']!r}",
    )


def create_regex_scorer(pattern: str | re.Pattern[str], *, id: str = "regex") -> Scorer:
    """1 when ``pattern`` matches somewhere in the output (``re.search``), else 0.

    A structured output is searched as canonical JSON text (sorted keys), as the other matching
    scorers see it.

    >>> create_regex_scorer(r"^[a-z0-9._%+-]+@[a-z0-9.-]+\\.[a-z]{2,}$").run_sync(
    ...     input="Extract the email", output="ada@example.com").score
    1.0
    """
    compiled = re.compile(pattern) if isinstance(pattern, str) else pattern
    if not isinstance(compiled, re.Pattern):
        raise TypeError(
            f"create_regex_scorer() needs a pattern string or a compiled re.Pattern, got {pattern!r}"
        )
    return _binary(
        id,
        f"1 when the output matches /{compiled.pattern}/",
        lambda run, **_: {"matched": compiled.search(_regex_text(run, id)) is not None},
        "matched",
        lambda found: f"Output does not match /{compiled.pattern}/",
    )


def _regex_text(run: Run, scorer: str) -> str:
    value = output_value(run, scorer)
    return value if isinstance(value, str) else canonical_text(value)


def _levenshtein(run: Run) -> dict[str, Any]:
    output, expected = _texts(run, "levenshtein")
    if output == expected:
        return {"distance": 0, "similarity": 1.0}
    distance, exact = bounded_distance(Levenshtein.distance, output, expected)
    found = {
        "distance": distance,
        # rapidfuzz's normalized similarity: 1 - distance / length of the longer string
        "similarity": 1.0 - distance / max(len(output), len(expected)),
    }
    return found if exact else {**found, "approximate": True}


def create_levenshtein_scorer() -> Scorer:
    """Normalised Levenshtein similarity of output and ``ground_truth`` (id ``levenshtein``).

    1 for equal strings (both empty too), else ``1 - edit distance / length of the longer string``.
    Beyond two ~100 kB texts that differ a lot, the distance is a bounded-cost upper bound (so the
    score a lower bound) and the step result has ``approximate: True``.

    >>> create_levenshtein_scorer().run_sync(input="Say hi", output="hello", ground_truth="hallo").score
    0.8
    """
    return (
        create_scorer(id="levenshtein", description="1 - edit distance / length of the longer string")
        .analyze(_levenshtein)
        .generate_score(lambda results, **_: results.analyze_step_result["similarity"])
        .generate_reason(
            lambda results, **_: (
                f"Edit distance {results.analyze_step_result['distance']}, "
                f"similarity {results.analyze_step_result['similarity']:.2f}"
                + (
                    " (estimated: texts too large and too different for an exact distance)"
                    if results.analyze_step_result.get("approximate")
                    else ""
                )
            )
        )
    )


def _json_match(run: Run) -> dict[str, Any]:
    if run.ground_truth is None:
        raise SkipRun(
            "json_match compares the output with ground_truth, but the run has none", reason="no_ground_truth"
        )
    actual = output_value(run, "json_match")
    if isinstance(actual, str):
        try:
            actual = json.loads(actual)
        except json.JSONDecodeError as err:
            return {"valid": False, "equal": False, "error": f"output is not valid JSON: {err}"}
    else:
        actual = json.loads(canonical_text(actual))  # tuples, models, 1.0 → plain JSON values
    expected = run.ground_truth
    if not isinstance(expected, str):
        expected = json.loads(canonical_text(expected))
    else:
        try:
            expected = json.loads(expected)
        except json.JSONDecodeError as err:
            return {"valid": False, "equal": False, "error": f"expected is not valid JSON: {err}"}
    difference = _difference(actual, expected, "$")
    error = None if difference is None else f"JSON structures differ: {difference}"
    return {"valid": True, "equal": difference is None, "error": error}


def _difference(actual: Any, expected: Any, path: str) -> str | None:
    """Where ``actual`` first differs from ``expected`` (``None``: deeply equal). Object key order is
    ignored, array order kept, ``1 == 1.0`` but ``True != 1``."""
    if isinstance(actual, dict) and isinstance(expected, dict):
        if actual.keys() != expected.keys():
            missing, extra = sorted(expected.keys() - actual.keys()), sorted(actual.keys() - expected.keys())
            parts = [
                f"missing keys {missing}" if missing else "",
                f"unexpected keys {extra}" if extra else "",
            ]
            return f"{path} has " + " and ".join(p for p in parts if p)
        return next((d for k in actual if (d := _difference(actual[k], expected[k], f"{path}.{k}"))), None)
    if isinstance(actual, list) and isinstance(expected, list):
        if len(actual) != len(expected):
            return f"{path} has {len(actual)} items, expected {len(expected)}"
        pairs = enumerate(zip(actual, expected, strict=True))
        return next((d for i, (a, e) in pairs if (d := _difference(a, e, f"{path}[{i}]"))), None)
    if _same_value(actual, expected):
        return None
    return f"{path} is {json.dumps(actual)[:_SHOWN]}, expected {json.dumps(expected)[:_SHOWN]}"


def _same_value(a: Any, b: Any) -> bool:
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b
    if isinstance(a, int | float) and isinstance(b, int | float):
        return a == b
    return type(a) is type(b) and bool(a == b)


def create_json_match_scorer() -> Scorer:
    """1 when the output JSON deeply equals ``ground_truth`` (a JSON string or a Python object).

    Object key order is ignored, array order kept (id ``json_match``).

    >>> scorer = create_json_match_scorer()
    >>> scorer.run_sync(input="q", output='{"b": 2, "a": 1}', ground_truth={"a": 1, "b": 2}).score
    1.0
    """
    return (
        create_scorer(id="json_match", description="1 when the output JSON deeply equals the expected")
        .analyze(_json_match)
        .generate_score(lambda results, **_: 1.0 if results.analyze_step_result["equal"] else 0.0)
        .generate_reason(lambda results, **_: results.analyze_step_result["error"])
    )
