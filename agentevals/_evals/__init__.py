"""Batch evaluation: ``run_evals`` over a dataset, its results, and the stored-results report.

The public names are in :mod:`agentevals.evals`.
"""
