"""Batch evaluation: ``run_evals`` over a dataset and its results; ``rescore`` over stored runs; people's
``Labels`` of stored runs and a scorer's ``agreement`` with them.

>>> from agentevals.evals import EvalItem, run_evals
"""

from agentevals._evals._data import EvalItem, load_items
from agentevals._evals._rescore import RescoreSummary, arescore, rescore
from agentevals._evals._run_evals import arun_evals, run_evals
from agentevals._evals._summary import EvalResult, EvalSummary, ItemResult, ScorerStats
from agentevals._model._thresholds import Threshold
from agentevals._trust._agreement import Agreement, agreement
from agentevals._trust._labels import Label, Labels

__all__ = [
    "Agreement",
    "EvalItem",
    "EvalResult",
    "EvalSummary",
    "ItemResult",
    "Label",
    "Labels",
    "RescoreSummary",
    "ScorerStats",
    "Threshold",
    "agreement",
    "arescore",
    "arun_evals",
    "load_items",
    "rescore",
    "run_evals",
]
