"""The spans of open traces, grouped until the top of their tree ends; bounded in count and in time.

A span that starts inside a framework's tree (its parent has a GenAI or OpenInference role, is an
OpenInference span, or is itself inside such a tree) is *enclosed*: when it ends it waits here. A span
that is not enclosed is a *top* (a trace's root, or the first framework span under an application's own
span): when it ends, :meth:`OpenTraces.ended` hands back the tree under it and forgets it.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from agentevals_otel._spans import RUN_ROLES, SpanRecord


@dataclass(slots=True)
class _Trace:
    touched: float
    enclosed: set[int] = field(default_factory=set)  # open spans started inside a framework's tree
    framework: set[int] = field(default_factory=set)  # open top spans that are framework spans
    ended: dict[int, SpanRecord] = field(default_factory=dict)  # enclosed spans waiting for their top
    children: dict[int, list[int]] = field(default_factory=dict)
    closed: set[int] = field(default_factory=set)  # spans handed back already: their late children drop
    baggage: dict[int, dict[str, str]] = field(default_factory=dict)  # a top's agentevals.* baggage


@dataclass(frozen=True, slots=True)
class Tree:
    """A top span that ended, with every span under it that ended before it (top first, depth first),
    and the ``agentevals.*`` baggage that was current when the top started."""

    records: tuple[SpanRecord, ...]
    baggage: Mapping[str, str]


class OpenTraces:
    """The open traces, at most ``max_traces``, each dropped after ``timeout`` seconds without a span
    starting or ending in it. Thread-safe; ``on_drop(reason, count)`` is told of every drop."""

    def __init__(
        self,
        *,
        max_traces: int,
        timeout: float,
        on_drop: Callable[[str, int], None],
    ) -> None:
        self.max_traces = max_traces
        self.timeout = timeout
        self._on_drop = on_drop
        self._lock = threading.Lock()
        self._traces: OrderedDict[int, _Trace] = OrderedDict()  # least recently touched first
        self._next_sweep = time.monotonic() + min(timeout, 1.0)

    def __len__(self) -> int:
        return len(self._traces)

    def enclose_under(self, trace_id: int, span_id: int, parent_id: int) -> bool:
        """Enclose a span whose parent is enclosed or a framework top already noted; ``False`` (nothing
        noted) when the parent is neither."""
        with self._lock:
            trace = self._traces.get(trace_id)
            if trace is None or (parent_id not in trace.enclosed and parent_id not in trace.framework):
                return False
            trace.enclosed.add(span_id)
            self._touch(trace_id, trace)
            return True

    def enclose(self, trace_id: int, span_id: int) -> None:
        """Enclose a span whose parent is a framework span."""
        with self._lock:
            self._get_or_open(trace_id).enclosed.add(span_id)

    def top_started(self, trace_id: int, span_id: int, baggage: dict[str, str]) -> None:
        """Note a top span that is a framework span (so that the spans under it are enclosed without
        looking at it again), with the ``agentevals.*`` baggage current when it started."""
        with self._lock:
            trace = self._get_or_open(trace_id)
            trace.framework.add(span_id)
            if baggage:
                trace.baggage[span_id] = baggage

    def ended(self, trace_id: int, record: SpanRecord) -> Tree | None:
        """Note an ended span: an enclosed one waits for its top; a top hands back its :class:`Tree`
        (``None`` when it is a lone span that cannot hold a run)."""
        span_id = record.span_id
        with self._lock:
            self._sweep_if_due()
            trace = self._traces.get(trace_id)
            if trace is None:  # a top with nothing under it (the other ones opened its trace)
                return Tree((record,), {}) if record.role in RUN_ROLES else None
            tree = None
            if span_id not in trace.enclosed:
                trace.framework.discard(span_id)
                tree = Tree(self._take_tree(trace, record), trace.baggage.pop(span_id, {}))
            elif record.parent_id in trace.closed:  # a late child of a tree handed back already
                trace.enclosed.discard(span_id)
                trace.closed.add(span_id)
            else:
                trace.enclosed.discard(span_id)
                trace.ended[span_id] = record
                trace.children.setdefault(record.parent_id, []).append(span_id)
            if trace.enclosed or trace.framework or trace.ended or trace.baggage:
                self._touch(trace_id, trace)
            else:
                del self._traces[trace_id]
            return tree

    def clear(self) -> None:
        """Forget every open trace."""
        with self._lock:
            self._traces.clear()

    # -- under the lock -----------------------------------------------------------------------------

    def _get_or_open(self, trace_id: int) -> _Trace:
        trace = self._traces.get(trace_id)
        if trace is None:
            return self._open(trace_id)
        self._touch(trace_id, trace)
        return trace

    def _open(self, trace_id: int) -> _Trace:
        if len(self._traces) >= self.max_traces:
            self._traces.popitem(last=False)
            self._on_drop("overflowed", 1)
        trace = _Trace(touched=time.monotonic())
        self._traces[trace_id] = trace
        return trace

    def _touch(self, trace_id: int, trace: _Trace) -> None:
        trace.touched = time.monotonic()
        self._traces.move_to_end(trace_id)

    def _take_tree(self, trace: _Trace, top: SpanRecord) -> tuple[SpanRecord, ...]:
        taken = [top]
        trace.closed.add(top.span_id)
        pending = list(reversed(trace.children.pop(top.span_id, ())))
        while pending:
            span_id = pending.pop()
            record = trace.ended.pop(span_id)
            taken.append(record)
            trace.closed.add(span_id)
            pending.extend(reversed(trace.children.pop(span_id, ())))
        return tuple(taken)

    def _sweep_if_due(self) -> None:
        now = time.monotonic()
        if now < self._next_sweep:
            return
        self._next_sweep = now + min(self.timeout, 1.0)
        deadline = now - self.timeout
        expired = 0
        while self._traces:
            trace_id, trace = next(iter(self._traces.items()))
            if trace.touched > deadline:
                break
            del self._traces[trace_id]
            expired += 1
        if expired:
            self._on_drop("expired", expired)


def runs_in(records: tuple[SpanRecord, ...]) -> list[tuple[SpanRecord, ...]]:
    """The runs in a top's tree (top first, depth first): the whole tree when the top can be a run (an
    agent, a chain, a model call), else each outermost span under it that can, with its own tree."""
    if records[0].role in RUN_ROLES:
        return [records]
    runs: list[tuple[SpanRecord, ...]] = []
    inside: set[int] = set()  # spans of the runs found so far (depth first: a run's spans follow it)
    current: list[SpanRecord] = []
    for record in records[1:]:
        if record.parent_id in inside:
            inside.add(record.span_id)
            current.append(record)
        elif record.role in RUN_ROLES:
            if current:
                runs.append(tuple(current))
            current = [record]
            inside.add(record.span_id)
    if current:
        runs.append(tuple(current))
    return runs
