"""Deterministic output-vs-expected scorers: exact match, substring, regex, Levenshtein, JSON.

The output is the run's assistant text (or the plain output); the expected value is ``ground_truth``.
"""

from __future__ import annotations

import json
import re
from typing import Any

from rapidfuzz.distance import Levenshtein

from agentevals._run import Run
from agentevals._scorer import Scorer, create_scorer


def _expected(run: Run, scorer: str) -> str:
    if run.ground_truth is None:
        raise ValueError(f"{scorer} compares the output with ground_truth, but the run has none")
    return run.ground_truth if isinstance(run.ground_truth, str) else str(run.ground_truth)


def _exact(run: Run) -> dict[str, Any]:
    expected, output = _expected(run, "exact_match"), run.output_text
    return {"expected": expected, "output": output, "match": output == expected}


def create_exact_match_scorer() -> Scorer:
    """1 when the output equals ``str(ground_truth)`` exactly, else 0 (id ``exact_match``).

    >>> create_exact_match_scorer().run_sync(input="2+2?", output="4", ground_truth="4").score
    1.0
    """
    return (
        create_scorer(id="exact_match", description="1 when the output equals the expected value exactly")
        .analyze(_exact)
        .generate_score(lambda results, **_: 1.0 if results.analyze_step_result["match"] else 0.0)
        .generate_reason(
            lambda results, **_: (
                None
                if results.analyze_step_result["match"]
                else f"Expected {results.analyze_step_result['expected']!r}, "
                f"got {results.analyze_step_result['output']!r}"
            )
        )
    )


def _includes(run: Run) -> dict[str, Any]:
    expected = _expected(run, "includes")
    return {"expected": expected, "found": expected in run.output_text}


def create_includes_scorer() -> Scorer:
    """1 when the output contains ``str(ground_truth)``, else 0 (id ``includes``).

    >>> create_includes_scorer().run_sync(input="Capital?", output="It is Paris.", ground_truth="Paris").score
    1.0
    """
    return (
        create_scorer(id="includes", description="1 when the output contains the expected value")
        .analyze(_includes)
        .generate_score(lambda results, **_: 1.0 if results.analyze_step_result["found"] else 0.0)
        .generate_reason(
            lambda results, **_: (
                None
                if results.analyze_step_result["found"]
                else f"Output does not contain {results.analyze_step_result['expected']!r}"
            )
        )
    )


def create_regex_scorer(pattern: str | re.Pattern[str], *, id: str = "regex") -> Scorer:
    """1 when ``pattern`` matches somewhere in the output (``re.search``), else 0.

    >>> create_regex_scorer(r"^[a-z0-9._%+-]+@[a-z0-9.-]+\\.[a-z]{2,}$").run_sync(
    ...     input="Extract the email", output="ada@example.com").score
    1.0
    """
    compiled = re.compile(pattern) if isinstance(pattern, str) else pattern
    if not isinstance(compiled, re.Pattern):
        raise TypeError(
            f"create_regex_scorer() needs a pattern string or a compiled re.Pattern, got {pattern!r}"
        )
    return (
        create_scorer(id=id, description=f"1 when the output matches /{compiled.pattern}/")
        .analyze(lambda run, **_: {"matched": compiled.search(run.output_text) is not None})
        .generate_score(lambda results, **_: 1.0 if results.analyze_step_result["matched"] else 0.0)
        .generate_reason(
            lambda results, **_: (
                None
                if results.analyze_step_result["matched"]
                else f"Output does not match /{compiled.pattern}/"
            )
        )
    )


def _levenshtein(run: Run) -> dict[str, Any]:
    expected, output = _expected(run, "levenshtein"), run.output_text
    return {
        "distance": Levenshtein.distance(output, expected),
        "similarity": 1.0 if output == expected else Levenshtein.normalized_similarity(output, expected),
    }


def create_levenshtein_scorer() -> Scorer:
    """Normalised Levenshtein similarity of output and ``ground_truth`` (id ``levenshtein``).

    1 for equal strings (both empty too), else ``1 - edit distance / length of the longer string``.

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
            )
        )
    )


def _json_match(run: Run) -> dict[str, Any]:
    if run.ground_truth is None:
        raise ValueError("json_match compares the output with ground_truth, but the run has none")
    try:
        actual = json.loads(run.output_text)
    except json.JSONDecodeError as err:
        return {"valid": False, "equal": False, "error": f"output is not valid JSON: {err}"}
    expected = run.ground_truth
    if isinstance(expected, str):
        try:
            expected = json.loads(expected)
        except json.JSONDecodeError as err:
            return {"valid": False, "equal": False, "error": f"expected is not valid JSON: {err}"}
    equal = _json_equal(actual, expected)
    return {"valid": True, "equal": equal, "error": None if equal else "JSON structures differ"}


def _json_equal(a: Any, b: Any) -> bool:
    """Deep equality: object key order ignored, array order kept, 1 == 1.0 but True != 1."""
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_json_equal(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_json_equal(x, y) for x, y in zip(a, b, strict=True))
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
