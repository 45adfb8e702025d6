"""The options the SQL sinks share: which runs they store and what a re-sent score row does."""

from __future__ import annotations

from typing import Literal

#: Which runs a SQL sink stores in the runs table: each run a scorer sampled (the run of each record
#: written), every run a ``ScoringEngine`` accepted or sampled out ("all": the engine hands the
#: sampled-out ones to ``write_runs``), or none (scores only).
StoreRuns = Literal["sampled", "all", "none"]
#: What a SQL sink does with a score row whose id is stored already (the same run, scorer version and
#: evaluation): keep the stored row (a re-sent batch adds nothing), or replace it (re-scoring with
#: ``force``). Runs rows are always kept.
OnConflict = Literal["keep", "replace"]


def check_on_conflict(on_conflict: str) -> OnConflict:
    """``on_conflict`` if it is one of :data:`OnConflict`, else a ``ValueError`` saying what each means.

    >>> check_on_conflict("replace")
    'replace'
    """
    if on_conflict == "keep":
        return "keep"
    if on_conflict == "replace":
        return "replace"
    raise ValueError(
        f"on_conflict must be 'keep' (a re-sent record adds nothing) or 'replace' (it replaces the stored "
        f"row), not {on_conflict!r}"
    )


def check_store_runs(store_runs: str) -> StoreRuns:
    """``store_runs`` if it is one of :data:`StoreRuns`, else a ``ValueError`` saying what each means.

    >>> check_store_runs("all")
    'all'
    """
    if store_runs == "sampled":
        return "sampled"
    if store_runs == "all":
        return "all"
    if store_runs == "none":
        return "none"
    raise ValueError(
        f"store_runs must be 'sampled' (each scored run), 'all' (every run, scored or not) or 'none', "
        f"not {store_runs!r}"
    )
