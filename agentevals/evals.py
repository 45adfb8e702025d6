"""Batch evaluation: ``run_evals`` over a dataset and its results.

>>> from agentevals.evals import EvalItem, run_evals
"""

from agentevals._evals import (
    EvalItem,
    EvalResult,
    EvalSummary,
    ItemResult,
    ScorerStats,
    Threshold,
    arun_evals,
    load_items,
    run_evals,
)

__all__ = [
    "EvalItem",
    "EvalResult",
    "EvalSummary",
    "ItemResult",
    "ScorerStats",
    "Threshold",
    "arun_evals",
    "load_items",
    "run_evals",
]
