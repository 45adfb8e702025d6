"""Pure trajectory measures: accuracy against an expectation, efficiency, blacklist, tool failures.

Scores are in [0, 1], rounded to two decimals. The matches are exact, not greedy:

* ``relaxed`` ordering finds the longest in-order match (a longest common subsequence), so
  expected ``[X, A, B]`` against actual ``[A, B, X]`` scores 2/3.
* ``unordered``/``superset``/``subset`` pair expected and actual steps with a maximum
  matching; greedy pairing can miss pairs when one expected step is more specific than another.
* Step data (``tool_args``, ``status``, ...) set on an expected step is always compared, not
  only when the expected step also names a ``step_type``; objects are compared regardless
  of key order.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from agentevals.scorers._args_match import (
    ToolArgsMatch,
    json_equal,
    match_args,
    resolve_tool_args_match,
)
from agentevals.scorers.trajectory._model import (
    DATA_FIELDS,
    ExpectedStep,
    Ordering,
    Trajectory,
    TrajectoryStep,
)
from agentevals.scorers.utils import round_to_two_decimals

_DATA_FIELDS = frozenset(DATA_FIELDS)


def _clamp(score: float) -> float:
    return round_to_two_decimals(max(0.0, min(1.0, score)))


def step_matches(
    actual: TrajectoryStep, expected: ExpectedStep, tool_args_match: ToolArgsMatch = "exact"
) -> bool:
    """Same name, same ``step_type`` if the expectation names one, and every data field it sets."""
    if actual.name != expected.name:
        return False
    if expected.step_type is not None and actual.step_type != expected.step_type:
        return False
    for field in expected.model_fields_set & _DATA_FIELDS:
        wanted = getattr(expected, field)
        if wanted is None:
            continue
        got = getattr(actual, field)
        if got is None:
            return False
        same = match_args(wanted, got, tool_args_match) if field == "tool_args" else json_equal(wanted, got)
        if not same:
            return False
    return True


@dataclass(frozen=True, slots=True)
class TrajectoryComparison:
    score: float
    matched_steps: int
    total_expected_steps: int
    total_actual_steps: int
    missing_steps: list[str]
    extra_steps: list[str]
    out_of_order_steps: list[str]
    repeated_steps: list[str]


def _in_order(
    actual: Sequence[TrajectoryStep], expected: Sequence[ExpectedStep], args: ToolArgsMatch
) -> set[int]:
    """Indices of expected steps in a longest in-order match (LCS with the step predicate)."""
    rows, cols = len(expected), len(actual)
    table = [[0] * (cols + 1) for _ in range(rows + 1)]
    for i in range(rows - 1, -1, -1):
        for j in range(cols - 1, -1, -1):
            if step_matches(actual[j], expected[i], args):
                table[i][j] = table[i + 1][j + 1] + 1
            else:
                table[i][j] = max(table[i + 1][j], table[i][j + 1])
    matched: set[int] = set()
    i = j = 0
    while i < rows and j < cols:
        if step_matches(actual[j], expected[i], args) and table[i][j] == table[i + 1][j + 1] + 1:
            matched.add(i)
            i, j = i + 1, j + 1
        elif table[i][j + 1] >= table[i + 1][j]:
            # On a tie keep the earlier expected step in the match and skip the actual step, so
            # the step reported out of order is the first one out of place in the actual run:
            # expected [a, b, c], actual [a, c, b] reports c, the step a reader looks at first.
            j += 1
        else:
            i += 1
    return matched


def _paired(
    actual: Sequence[TrajectoryStep], expected: Sequence[ExpectedStep], args: ToolArgsMatch
) -> dict[int, int]:
    """A maximum one-to-one pairing expected index → actual index (augmenting paths)."""
    options = [[j for j, step in enumerate(actual) if step_matches(step, want, args)] for want in expected]
    owner: dict[int, int] = {}

    def augment(i: int, seen: set[int]) -> bool:
        for j in options[i]:
            if j not in seen:
                seen.add(j)
                if j not in owner or augment(owner[j], seen):
                    owner[j] = i
                    return True
        return False

    for i in range(len(expected)):
        augment(i, set())
    return {i: j for j, i in owner.items()}


def _parallel_spans(steps: Sequence[TrajectoryStep], grouped: bool) -> list[tuple[int, int]]:
    """``[start, end)`` runs of consecutive steps made by one message (single steps when not grouped)."""
    spans: list[tuple[int, int]] = []
    start = 0
    for i in range(1, len(steps) + 1):
        if (
            i == len(steps)
            or not grouped
            or steps[i].message_index is None
            or steps[i].message_index != steps[start].message_index
        ):
            spans.append((start, i))
            start = i
    return spans


def _strict(
    steps: Sequence[TrajectoryStep], expected: Sequence[ExpectedStep], args: ToolArgsMatch, grouped: bool
) -> tuple[set[int], list[str]]:
    """Matched expected indices and out-of-order names, position by position (parallel runs as sets)."""
    hits: set[int] = set()
    out_of_order: list[str] = []
    expected_set = {s.name for s in expected}
    for start, end in _parallel_spans(steps, grouped):
        stop = min(end, len(expected))
        pairs = _paired(steps[start:end], expected[start:stop], args) if start < stop else {}
        hits.update(start + i for i in pairs)
        window = Counter(s.name for s in expected[start:stop])
        for step in steps[start:end]:
            if step.name not in expected_set:
                continue
            if window[step.name] > 0:
                window[step.name] -= 1
            else:
                out_of_order.append(step.name)
    return hits, out_of_order


def compare_trajectories(
    actual: Trajectory,
    expected: Sequence[ExpectedStep],
    *,
    ordering: Ordering = "relaxed",
    allow_repeated_steps: bool = True,
    tool_args_match: ToolArgsMatch | None = None,
    unordered_parallel_calls: bool = True,
) -> TrajectoryComparison:
    """Compare the top-level steps of ``actual`` with ``expected``.

    * ``strict``: position by position; ``matched / expected``, minus half the relative number of
      extra steps. Calls made in one assistant message (parallel calls, sharing a
      ``message_index``) may match the expected steps at their positions in any order, unless
      ``unordered_parallel_calls=False``.
    * ``relaxed``: expected steps in order, others allowed in between; ``matched / expected``.
    * ``unordered`` (alias ``superset``): every expected step present, any order, extras allowed.
    * ``subset``: every actual step must be an expected one; ``matched / actual`` (1 if no steps).

    With ``allow_repeated_steps=False`` each step name used more than once costs 0.1. No expected
    steps scores 1 only if there are no actual steps either. ``tool_args_match`` compares the
    ``tool_args`` set on expected steps (``"exact"`` by default, ``"ignore"``, ``"subset"``,
    ``"superset"`` or a callable).
    """
    args_mode = resolve_tool_args_match(tool_args_match)
    steps = actual.steps
    actual_names = [s.name for s in steps]
    expected_names = [s.name for s in expected]
    repeated = [name for name, count in Counter(actual_names).items() if count > 1]
    expected_set = set(expected_names)
    extra = [name for name in actual_names if name not in expected_set]
    out_of_order: list[str] = []
    if not expected:
        score = 1.0 if not steps else 0.0
        return TrajectoryComparison(score, 0, 0, len(steps), [], actual_names, [], repeated)
    if ordering == "strict":
        hits, out_of_order = _strict(steps, expected, args_mode, unordered_parallel_calls)
        score = len(hits) / len(expected)
        if len(steps) > len(expected):
            score -= 0.5 * (len(steps) - len(expected)) / len(expected)
    elif ordering == "relaxed":
        hits = _in_order(steps, expected, args_mode)
        present = set(actual_names)
        out_of_order = [name for i, name in enumerate(expected_names) if i not in hits and name in present]
        score = len(hits) / len(expected)
    else:
        hits = set(_paired(steps, expected, args_mode))
        if ordering == "subset":
            score = len(hits) / len(steps) if steps else 1.0
        else:
            score = len(hits) / len(expected)
    if not allow_repeated_steps:
        score -= 0.1 * len(repeated)
    missing = [name for i, name in enumerate(expected_names) if i not in hits]
    return TrajectoryComparison(
        _clamp(score), len(hits), len(expected), len(steps), missing, extra, out_of_order, repeated
    )
