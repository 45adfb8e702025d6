"""``assert_scores``: gate a pytest (CI) test on a ``run_evals`` result, with a readable failure message."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from agentevals._evals._summary import EvalResult, ItemResult
from agentevals._model._result import ScoreFailure


def assert_scores(
    result: EvalResult,
    min_score: Mapping[str, float] | None = None,
    max_score: Mapping[str, float] | None = None,
    *,
    per_item: bool = False,
    allow_errors: bool = False,
    max_items_shown: int = 10,
) -> None:
    """Raise ``AssertionError`` unless the scores meet the bounds, listing the failing items.

    ``min_score``/``max_score`` map scorer ids (``"node/scorer_id"`` for step scorers) to bounds on
    the mean score, or on every item's score with ``per_item=True``. Without bounds, the run's own
    verdict must be ``"passed"`` (its thresholds and gates). Errored items fail unless ``allow_errors``.

    >>> from agentevals import run_evals
    >>> from agentevals.scorers import create_exact_match_scorer
    >>> data = [{"input": "a", "ground_truth": "A"}]
    >>> result = run_evals(data, [create_exact_match_scorer()], str.upper, progress=False)
    >>> assert_scores(result, min_score={"exact_match": 1.0})
    """
    bounds: dict[str, tuple[float | None, float | None]] = {
        k: (v, None) for k, v in (min_score or {}).items()
    }
    for key, maximum in (max_score or {}).items():
        bounds[key] = (bounds.get(key, (None, None))[0], maximum)
    unknown = sorted(k for k in bounds if k not in result.summary.scorers)
    if unknown:
        raise ValueError(
            f"assert_scores: unknown scorer id(s) {unknown}; the result has {sorted(result.summary.scorers)}"
        )
    problems: list[str] = []
    bad_items: dict[tuple[int, int], ItemResult] = {}
    for key, (low, high) in bounds.items():
        stats = result.summary.scorers[key]
        wanted = _bound_text(low, high)
        if not per_item and not _within(stats.mean, low, high):
            problems.append(f"{key}: mean {_fmt(stats.mean)} is not {wanted}")
        for item in result.items:
            record = item.results.get(key)
            if record is not None and record.score is not None and not _within(record.score, low, high):
                bad_items[(item.index, item.repeat)] = item
        if per_item:
            failing = sum(
                1
                for i in result.items
                if (r := i.results.get(key)) is not None
                and r.score is not None
                and not _within(r.score, low, high)
            )
            if failing:
                problems.append(f"{key}: {failing} item(s) scored outside {wanted}")
    if not bounds and not result.passed:
        problems += [f"{s.key}: mean {_fmt(s.mean)} is not {s.threshold}" for s in result.failed_thresholds]
        bad_items.update({(i.index, i.repeat): i for i in result.items if not i.passed})
    errored = [i for i in result.items if i.error is not None or i.failures]
    if errored and not allow_errors:
        problems.append(f"{len(errored)} item run(s) errored")
        bad_items.update({(i.index, i.repeat): i for i in errored})
    if not problems:
        return
    lines = ["scores below expectations:", *(f"  - {p}" for p in problems)]
    if bad_items:
        lines.append("failing items:")
        ordered = [bad_items[k] for k in sorted(bad_items)]
        lines += [_describe(item) for item in ordered[:max_items_shown]]
        if len(ordered) > max_items_shown:
            lines.append(f"  ... and {len(ordered) - max_items_shown} more")
    raise AssertionError("\n".join(lines))


def _within(score: float | None, low: float | None, high: float | None) -> bool:
    if score is None:
        return False
    return (low is None or score >= low) and (high is None or score <= high)


def _bound_text(low: float | None, high: float | None) -> str:
    if high is None:
        return f">= {low:g}"
    if low is None:
        return f"<= {high:g}"
    return f"in [{low:g}, {high:g}]"


def _fmt(value: float | None) -> str:
    return "n/a (no scores)" if value is None else f"{value:.3f}"


def _describe(item: ItemResult) -> str:
    head = (
        f"  [{item.index}"
        + (f", repeat {item.repeat}]" if item.repeat else "]")
        + f" input={_short(item.input)}"
    )
    if item.error is not None:
        return f"{head}\n      target error: {item.error}"
    parts = []
    for key, record in item.results.items():
        if isinstance(record, ScoreFailure):
            parts.append(f"      {key}: error {record.error_type}: {record.error_message}")
        elif record.score is None:  # skipped
            parts.append(f"      {key}: skipped ({record.reason})")
        else:
            reason = f" - {record.reason}" if record.reason else ""
            parts.append(f"      {key}: {record.score:.3f}{reason}")
    return "\n".join([f"{head} output={_short(item.run.output_text or item.output)}", *parts])


def _short(value: Any, limit: int = 100) -> str:
    text = value if isinstance(value, str) else repr(value)
    text = text.replace("\n", " ")
    return repr(text if len(text) <= limit else text[: limit - 1] + "…")
