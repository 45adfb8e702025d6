"""One labelling sitting: the runs in the order picked, each shown, a label stored as its key is
pressed (see ``agentevals._cli._label``)."""

from __future__ import annotations

from collections import Counter

from rich.console import Console
from rich.text import Text

from agentevals._cli._keys import Keys
from agentevals._cli._label_pick import Candidate
from agentevals._cli._label_screen import Progress, show_keys, show_run
from agentevals._model._thresholds import Threshold
from agentevals._store import _label_reads
from agentevals._store._store import Store
from agentevals._store._view_reads import run_row
from agentevals._trust._labels import Labels

INTERRUPTED = 130


class Session:
    """One sitting: the runs in order, a label stored as each key is pressed."""

    def __init__(self, store: Store, scorer: str, labeller: str, threshold: Threshold) -> None:
        self.store, self.scorer, self.labeller, self.threshold = store, scorer, labeller, threshold
        self.console = Console(highlight=False)
        self.labels = Labels(store)
        self.labelled = self.skipped = 0
        self.verdicts: Counter[str] = Counter()

    def run(self, queue: list[Candidate]) -> int:
        code = 0
        try:
            with Keys() as keys:
                for position, candidate in enumerate(queue, 1):
                    if not self._label(
                        keys, candidate, Progress(position, len(queue), self.labelled, self.skipped)
                    ):
                        break
        except KeyboardInterrupt:
            code = INTERRUPTED
        self._summary(len(queue))
        return code

    def _label(self, keys: Keys, candidate: Candidate, progress: Progress) -> bool:
        """Show ``candidate`` and take keys until it is labelled or skipped (``True``) or the session
        ends (``False``)."""
        q = self.store.reading
        show_run(
            self.console,
            scorer=self.scorer,
            labeller=self.labeller,
            candidate=candidate,
            run=run_row(q, candidate.run_id),
            record=_label_reads.latest_record(q, candidate.run_id, self.scorer),
            threshold=self.threshold,
            progress=progress,
        )
        note: str | None = None
        show_keys(self.console, note)
        while True:
            key = keys.key().lower()
            if key in ("", "q"):
                return False
            if key == "k":
                self.skipped += 1
                return True
            if key in ("p", "f"):
                self._store(candidate.run_id, "pass" if key == "p" else "fail", note)
                return True
            if key == "s":
                score = self._score(keys)
                if score is not None:
                    self._store(candidate.run_id, score, note)
                    return True
                show_keys(self.console, note)
            elif key == "n":
                typed = self._ask(keys, "note (Enter to set it, an empty note clears it, Esc to cancel): ")
                if typed is not None:
                    note = typed.strip() or None
                show_keys(self.console, note)

    def _score(self, keys: Keys) -> float | None:
        """A score typed from 0 to 1; ``None`` when Escape drops it."""
        while True:
            typed = self._ask(keys, "score from 0 to 1 (Enter to store, Esc to cancel): ")
            if typed is None:
                return None
            try:
                value = float(typed)
            except ValueError:
                value = -1.0
            if 0 <= value <= 1:
                return value
            self.console.print(Text(f"{typed!r} is not a number from 0 to 1", style="red"))

    def _ask(self, keys: Keys, prompt: str) -> str | None:
        self.console.print(Text(prompt, style="bold"), end="")

        def echo(typed: str) -> None:
            self.console.file.write(typed)
            self.console.file.flush()

        typed = keys.text(echo)
        self.console.print()
        return typed

    def _store(self, run_id: str, value: float | str, note: str | None) -> None:
        label = self.labels.add(run_id, self.scorer, value, labeller=self.labeller, note=note)
        self.labelled += 1
        self.verdicts[label.verdict if label.kind == "pass_fail" else "score"] += 1

    def _summary(self, total: int) -> None:
        kinds = ", ".join(f"{count} {kind}" for kind, count in sorted(self.verdicts.items()))
        left = total - self.labelled - self.skipped
        self.console.print(
            Text(
                f"labelled {self.labelled} run(s){f' ({kinds})' if kinds else ''}, skipped {self.skipped}, "
                f"{left} not reached in this session; the labels are stored in {self.store.display}"
            )
        )
