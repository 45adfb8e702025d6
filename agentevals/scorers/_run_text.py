"""The texts the code-based scorers compare, read from a :class:`~agentevals.Run`.

The *input text* is the text of every input message, and the *output text* the text of every
output message, each joined with ``", "``. Messages without text (e.g. an assistant turn that
only called a tool) and ``tool``-role messages (tool results, not the agent's words) are
skipped, so no empty part leaves a stray ``", "``; a missing input or output raises a clear
error instead of being read as an empty text.
"""

from __future__ import annotations

from agentevals._model._errors import SkipRun
from agentevals._model._run import Run

_SEPARATOR = ", "


def input_text(run: Run, scorer_id: str) -> str:
    """The joined input text; raises ``SkipRun`` (reason ``no_input``) when the run has no input."""
    if run.input is None:
        raise SkipRun(
            f"{scorer_id} compares the output with the input, but run.input is None; "
            "pass input= (an empty string is scored as an empty text)",
            reason="no_input",
        )
    return _SEPARATOR.join(m.content for m in run.input_messages if m.content)


def output_text(run: Run, scorer_id: str) -> str:
    """The joined output text; raises ``SkipRun`` (reason ``no_output``) when the run has no output."""
    if run.output is None:
        raise SkipRun(
            f"{scorer_id} needs the agent's output, but run.output is None; "
            "pass output= (an empty string is scored as an empty text)",
            reason="no_output",
        )
    return _SEPARATOR.join(m.content for m in run.output_messages if m.role != "tool" and m.content)


def assistant_text(run: Run, separator: str) -> str:
    """The text of the output's assistant messages joined with ``separator`` (quick checks)."""
    if run.output is None:
        raise SkipRun(
            "this check reads the agent's output, but run.output is None; pass output=", reason="no_output"
        )
    return separator.join(m.content for m in run.output_messages if m.role == "assistant")
