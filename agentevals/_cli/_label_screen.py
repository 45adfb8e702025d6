"""What a labelling session shows of one run: the progress, the transcript as the viewer shows it (the
messages with their tool calls, the retrieved context, the ground truth), the judge's score, verdict,
threshold and reason, and the keys.

Stored text is shown as text, never read as rich markup.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from rich.console import Console
from rich.rule import Rule
from rich.text import Text

from agentevals._cli._label_pick import Candidate
from agentevals._model._thresholds import Threshold
from agentevals._view._transcript import Entry, context, pretty, transcript

#: Characters of one message, tool result or passage shown before it is cut.
SHOWN_CHARACTERS = 1500
KEYS = (("p", "pass"), ("f", "fail"), ("s", "score 0..1"), ("n", "note"), ("k", "skip"), ("q", "quit"))
ROLE_STYLES = {
    "user": "bold cyan",
    "assistant": "bold green",
    "system": "bold magenta",
    "tool": "bold yellow",
}


@dataclass(frozen=True)
class Progress:
    """Where the session is: the run shown is ``position`` of ``total``."""

    position: int
    total: int
    labelled: int
    skipped: int


def show_run(
    console: Console,
    *,
    scorer: str,
    labeller: str,
    candidate: Candidate,
    run: Mapping[str, Any] | None,
    record: Mapping[str, Any] | None,
    threshold: Threshold,
    progress: Progress,
) -> None:
    """Print the run ``candidate`` names (``run``: its runs row, ``None`` when not stored) and the
    latest ``record`` of ``scorer`` on it."""
    if console.is_terminal:
        console.clear()
    who = f" · labeller {labeller}" if labeller else ""
    console.print(
        Rule(
            f"run {progress.position} of {progress.total} · {scorer}{who} · "
            f"{progress.labelled} labelled, {progress.skipped} skipped",
            style="dim",
        )
    )
    console.print(Text(f"run {candidate.run_id}", style="bold"))
    if run is None:
        console.print(Text("the transcript of this run is not in the store (only its scores)", style="dim"))
    else:
        _show_transcript(console, run)
    console.print(Rule("the judge", style="dim"))
    _show_record(console, record, threshold)
    if candidate.others:
        others = ", ".join(
            f"{o.scorer} {o.score:.2f} {'pass' if o.passed else 'fail'}" for o in candidate.others
        )
        console.print(Text(f"other scorers: {others}", style="dim"))


def show_keys(console: Console, note: str | None) -> None:
    """The keys, and the note the next label will carry."""
    if note:
        console.print(Text(f"note for this label: {note}", style="italic"))
    line = Text()
    for key, action in KEYS:
        line.append(f"[{key}]", style="bold")
        line.append(f" {action}  ")
    console.print(line)


def _show_transcript(console: Console, run: Mapping[str, Any]) -> None:
    entries = transcript(run)
    if not entries:
        console.print(Text("no messages", style="dim"))
    for entry in entries:
        _show_entry(console, entry)
    for number, passage in enumerate(context(run), 1):
        console.print(Text(f"context [{number}]", style="bold blue"))
        console.print(Text(_cut(passage)))
    truth = pretty(run.get("ground_truth"))
    if truth:
        console.print(Text("ground truth", style="bold blue"))
        console.print(Text(_cut(truth)))


def _show_entry(console: Console, entry: Entry) -> None:
    head = Text(entry.role, style=ROLE_STYLES.get(entry.role, "bold"))
    if entry.name:
        head.append(f" · {entry.name}", style="dim")
    console.print(head)
    if entry.content:
        console.print(Text(_cut(entry.content)))
    if entry.reasoning:
        console.print(Text(f"reasoning: {_cut(entry.reasoning)}", style="dim"))
    for call in entry.tool_calls:
        line = Text("  tool call ", style="yellow")
        line.append(call.name, style="bold yellow")
        line.append(f" {_cut(call.args)}")
        console.print(line)
        if call.result is not None:
            console.print(Text(f"    result: {_cut(call.result)}"))
        if call.error:
            console.print(Text(f"    error: {_cut(call.error)}", style="red"))


def _show_record(console: Console, record: Mapping[str, Any] | None, threshold: Threshold) -> None:
    if record is None:
        console.print(Text("no record of this scorer on this run", style="dim"))
        return
    line = Text()
    if record["outcome"] == "scored" and record["score"] is not None:
        score = float(record["score"])
        passed = threshold.check(score)
        line.append(f"score {score:.3f}", style="bold")
        line.append(f" (threshold {threshold}: ")
        line.append("pass" if passed else "fail", style="bold green" if passed else "bold red")
        line.append(")")
    else:
        line.append(str(record["outcome"]), style="bold red")
    line.append(f"  version {record['scorer_version']} · {record['source']}", style="dim")
    console.print(line)
    if record["reason"]:
        console.print(Text(f"reason: {_cut(str(record['reason']))}"))


def _cut(text: str) -> str:
    if len(text) <= SHOWN_CHARACTERS:
        return text
    return f"{text[:SHOWN_CHARACTERS]}… ({len(text) - SHOWN_CHARACTERS} more characters)"
