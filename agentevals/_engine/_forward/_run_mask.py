"""Masking a run before it leaves the agent's process (``ScoringEngine(broker=..., redact=mask(...))``):
every text the run carries is masked by the engine's :class:`~agentevals.redaction.Masker` on the
forwarder's thread, before the run is encoded, so neither the spool nor the broker ever holds it
unmasked."""

from __future__ import annotations

from typing import Any

from agentevals._model._redact import Masker
from agentevals._model._run import Run

#: The run's fields that hold what the agent saw and said (ids, the entity, times are not text).
_TEXT_FIELDS = (
    "input",
    "output",
    "ground_truth",
    "request_context",
    "context",
    "expected_trajectory",
    "error",
)
#: The metadata key integrations keep the OpenTelemetry span's ids under: hex ids, kept as they are so
#: that evaluation events still land on that span.
_SPAN_KEY = "otel"


def masked_run(masker: Masker, run: Run) -> Run:
    """``run`` with every match of ``masker`` replaced in its messages (contents, tool arguments and
    results), input and output, ground truth, request context, context, error and metadata (keys and
    values, deeply); ``run`` itself when nothing matched."""
    update: dict[str, Any] = {}
    for name in _TEXT_FIELDS:
        value = getattr(run, name)
        masked = masker.value(value)
        if masked is not value:
            update[name] = masked
    metadata = run.metadata
    rest = {key: value for key, value in metadata.items() if key != _SPAN_KEY}
    masked_rest = masker.value(rest)
    if masked_rest is not rest:
        update["metadata"] = {
            **masked_rest,
            **({_SPAN_KEY: metadata[_SPAN_KEY]} if _SPAN_KEY in metadata else {}),
        }
    return run.model_copy(update=update) if update else run
