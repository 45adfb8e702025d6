"""run_evals behaviour: concurrency, per-item failures, validation, repeats, thresholds, gates, sinks."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Sequence
from typing import Any

import pytest

from agentevals import ScoreRecord, ScoreResult, arun_evals, create_scorer, run_evals
from agentevals.results import ScoreFailure
from agentevals.scorers import create_exact_match_scorer, create_factuality_scorer
from agentevals.testing import FakeJudgeServer, Reply


class Peak:
    """Counts how many calls are in flight at once (thread-safe)."""

    def __init__(self) -> None:
        self.now = self.peak = 0
        self._lock = threading.Lock()

    def __enter__(self) -> None:
        with self._lock:
            self.now += 1
            self.peak = max(self.peak, self.now)

    def __exit__(self, *exc: object) -> None:
        with self._lock:
            self.now -= 1


ITEMS = [{"input": f"q{i}", "ground_truth": f"Q{i}"} for i in range(20)]


async def test_items_overlap_up_to_the_concurrency_limit() -> None:
    peak = Peak()

    async def slow_upper(text: str) -> str:
        with peak:
            await asyncio.sleep(0.1)
        return text.upper()

    started = time.perf_counter()
    result = await arun_evals(
        ITEMS, [create_exact_match_scorer()], slow_upper, concurrency=10, progress=False
    )
    elapsed = time.perf_counter() - started

    assert result.scores == {"exact_match": 1.0}
    assert peak.peak == 10
    assert elapsed < 0.9  # 20 × 0.1 s one after another would take 2 s


def test_sync_targets_overlap_in_threads() -> None:
    peak = Peak()

    def slow_upper(text: str) -> str:
        with peak:
            time.sleep(0.1)
        return text.upper()

    started = time.perf_counter()
    result = run_evals(ITEMS, [create_exact_match_scorer()], slow_upper, concurrency=10, progress=False)
    assert time.perf_counter() - started < 0.9
    assert peak.peak == 10 and result.summary.total_items == 20


async def test_scorers_of_one_item_run_concurrently() -> None:
    peak = Peak()

    async def slow_score(**_: Any) -> float:
        with peak:
            await asyncio.sleep(0.05)
        return 1.0

    scorers = [create_scorer(id=f"s{i}").generate_score(slow_score) for i in range(3)]
    result = await arun_evals([{"input": "x"}], scorers, lambda x: x, progress=False)
    assert peak.peak == 3 and result.scores == {"s0": 1.0, "s1": 1.0, "s2": 1.0}


async def test_concurrency_one_runs_items_one_at_a_time() -> None:
    peak = Peak()

    async def target(text: str) -> str:
        with peak:
            await asyncio.sleep(0.01)
        return text

    await arun_evals(ITEMS[:5], [create_exact_match_scorer()], target, concurrency=1, progress=False)
    assert peak.peak == 1


async def test_a_failing_target_is_recorded_per_item_and_the_rest_are_scored() -> None:
    def flaky(text: str) -> str:
        if text == "q3":
            raise ConnectionError("upstream down")
        return text.upper()

    result = await arun_evals(ITEMS[:5], [create_exact_match_scorer()], flaky, progress=False)

    assert result.summary.total_items == 5
    assert result.summary.errored_runs == 1 and result.summary.target_errors == 1
    assert result.scores == {"exact_match": 1.0}  # failures are not averaged in as zeros
    assert result.stats["exact_match"].count == 4 and result.stats["exact_match"].errors == 1
    broken = result.items[3]
    assert broken.error == "ConnectionError: upstream down" and not broken.passed
    failure = broken.results["exact_match"]
    assert isinstance(failure, ScoreFailure)
    assert (failure.error_type, failure.failed_step) == ("ConnectionError", "target")
    assert failure.input == "q3" and failure.metadata["eval_item"] == 3
    assert all(i.passed for i in result.items if i.index != 3)
    assert result.verdict == "errored" and not result.passed


async def test_a_failing_scorer_is_recorded_per_item() -> None:
    def picky(run: Any, **_: Any) -> float:
        if run.input == "q1":
            raise KeyError("missing field")
        return 1.0

    scorer = create_scorer(id="picky").generate_score(picky)
    result = await arun_evals(ITEMS[:3], [scorer, create_exact_match_scorer()], str.upper, progress=False)

    failure = result.items[1].results["picky"]
    assert isinstance(failure, ScoreFailure)
    assert (failure.error_type, failure.failed_step) == ("KeyError", "generate_score")
    assert "missing field" in failure.error_message
    assert isinstance(result.items[1].results["exact_match"], ScoreResult)
    assert result.summary.scorer_errors == 1 and result.summary.errored_runs == 1
    assert result.scores == {"picky": 1.0, "exact_match": 1.0}


def test_validation_errors_say_what_to_fix() -> None:
    def target(x: Any) -> Any:
        return x

    with pytest.raises(ValueError, match="data is empty"):
        run_evals([], [create_exact_match_scorer()], target)
    with pytest.raises(ValueError, match="index 1: must have an 'input' key"):
        run_evals([{"input": "a"}, {"ground_truth": "b"}], [create_exact_match_scorer()], target)
    with pytest.raises(ValueError, match="unknown key"):
        run_evals([{"input": "a", "expected": "b"}], [create_exact_match_scorer()], target)
    with pytest.raises(ValueError, match="At least one scorer must be provided"):
        run_evals([{"input": "a"}], [], target)
    with pytest.raises(ValueError, match="At least one workflow or step scorer must be provided"):
        run_evals([{"input": "a"}], {"workflow": [], "steps": {}}, target)
    with pytest.raises(ValueError, match="must be a list of scorers"):
        run_evals([{"input": "a"}], create_exact_match_scorer(), target)
    with pytest.raises(ValueError, match="share the id 'exact_match'"):
        run_evals([{"input": "a"}], [create_exact_match_scorer(), create_exact_match_scorer()], target)
    with pytest.raises(ValueError, match=r"unknown scorer\(s\) \['nope'\]"):
        run_evals([{"input": "a"}], [create_exact_match_scorer()], target, thresholds={"nope": 0.5})
    with pytest.raises(ValueError, match=r"min .* greater than max"):
        run_evals(
            [{"input": "a"}],
            [{"scorer": create_exact_match_scorer(), "threshold": {"min": 0.9, "max": 0.1}}],
            target,
        )
    with pytest.raises(ValueError, match="finite"):
        run_evals(
            [{"input": "a"}], [create_exact_match_scorer()], target, thresholds={"exact_match": float("nan")}
        )
    with pytest.raises(ValueError, match="concurrency"):
        run_evals([{"input": "a"}], [create_exact_match_scorer()], target, concurrency=0)
    with pytest.raises(TypeError, match="target must be"):
        run_evals([{"input": "a"}], [create_exact_match_scorer()], target="not callable")


async def test_repeats_give_mean_stdev_and_repeat_spread() -> None:
    calls: dict[str, int] = {}

    def alternating(text: str) -> str:
        calls[text] = calls.get(text, 0) + 1
        return text.upper() if calls[text] % 2 else "wrong"

    result = await arun_evals(
        ITEMS[:2], [create_exact_match_scorer()], alternating, repeats=4, progress=False
    )

    stats = result.stats["exact_match"]
    assert result.summary.total_items == 2 and result.summary.total_runs == 8
    assert stats.count == 8 and stats.mean == 0.5 and (stats.min, stats.max) == (0.0, 1.0)
    assert stats.stdev == pytest.approx(0.5345, abs=1e-4)  # sample stdev of four 1s and four 0s
    assert stats.repeat_stdev == pytest.approx(0.5774, abs=1e-4)  # per item: 1, 0, 1, 0
    assert [(i.index, i.repeat) for i in result.items] == [(0, r) for r in range(4)] + [
        (1, r) for r in range(4)
    ]


async def test_thresholds_set_pass_fail_per_item_and_overall() -> None:
    half = create_scorer(id="half").generate_score(lambda run, **_: 0.5)
    data = [{"input": "a", "ground_truth": "A"}, {"input": "b", "ground_truth": "x"}]

    passing = await arun_evals(
        data, [{"scorer": create_exact_match_scorer(), "threshold": 0.5}, half], str.upper, progress=False
    )
    assert passing.stats["exact_match"].pass_rate == 0.5 and passing.stats["exact_match"].passed
    assert [i.passed for i in passing.items] == [True, False]
    assert passing.verdict == "passed" and passing.passed

    thresholds = {"exact_match": 0.8, "half": {"max": 0.6}}
    failing = await arun_evals(
        data, [create_exact_match_scorer(), half], str.upper, thresholds=thresholds, progress=False
    )
    assert failing.stats["exact_match"].passed is False and failing.stats["half"].passed is True
    assert failing.verdict == "below_threshold" and not failing.passed
    assert [s.key for s in failing.failed_thresholds] == ["exact_match"]


async def test_gates_must_score_one_on_every_item() -> None:
    non_empty = create_scorer(id="non-empty").generate_score(lambda run, **_: float(bool(run.output)))
    ok = await arun_evals(
        [{"input": "a"}, {"input": "b"}],
        [create_exact_match_scorer().with_id("em")],
        str.upper,
        gates=[non_empty],
        progress=False,
    )
    assert ok.stats["non-empty"].gate and ok.stats["non-empty"].passed

    gated = await arun_evals(
        [{"input": "a"}, {"input": ""}], [], str.upper, gates=[non_empty], progress=False
    )
    assert gated.stats["non-empty"].passed is False and gated.verdict == "below_threshold"


class ListSink:
    def __init__(self, fail: bool = False) -> None:
        self.records: list[ScoreRecord] = []
        self.fail = fail

    async def write(self, records: Sequence[ScoreRecord]) -> None:
        if self.fail:
            raise OSError("disk full")
        self.records.extend(records)

    async def close(self) -> None:
        pass


async def test_every_record_goes_to_the_sinks_as_test_source() -> None:
    good, broken = ListSink(), ListSink(fail=True)

    def flaky(text: str) -> str:
        if text == "q1":
            raise RuntimeError("boom")
        return text.upper()

    result = await arun_evals(
        ITEMS[:3], [create_exact_match_scorer()], flaky, sinks=[broken, good], progress=False
    )

    assert len(good.records) == 3 and {r.source for r in good.records} == {"eval"}
    assert sorted(r.metadata["eval_item"] for r in good.records) == [0, 1, 2]
    assert {r.metadata["eval_id"] for r in good.records} == {result.summary.eval_id}
    assert sum(isinstance(r, ScoreFailure) for r in good.records) == 1
    assert result.summary.sink_errors == 3  # the broken sink failed on every item, the run went on


async def test_on_item_complete_may_be_async_and_its_errors_propagate() -> None:
    seen: list[str] = []

    async def record(item: Any, result: Any) -> None:
        await asyncio.sleep(0)
        seen.append(f"{item.input}:{result.scores['exact_match']}")

    await arun_evals(
        ITEMS[:2], [create_exact_match_scorer()], str.upper, on_item_complete=record, progress=False
    )
    assert sorted(seen) == ["q0:1.0", "q1:1.0"]

    def explode(**_: Any) -> None:
        raise RuntimeError("callback bug")

    with pytest.raises(RuntimeError, match="callback bug"):
        await arun_evals(
            ITEMS[:4], [create_exact_match_scorer()], str.upper, on_item_complete=explode, progress=False
        )


async def test_callable_targets_receive_request_context() -> None:
    def target(text: str, request_context: dict[str, Any]) -> str:
        return f"{text}-{request_context['lang']}"

    check = create_scorer(id="ctx").generate_score(
        lambda run, **_: float(run.output == f"{run.input}-{run.request_context['lang']}")
    )
    data = [
        {"input": "a", "requestContext": {"lang": "fr"}},
        {"input": "b", "request_context": {"lang": "de"}},
    ]
    result = await arun_evals(data, [check], target, progress=False)
    assert result.scores == {"ctx": 1.0}


def test_run_evals_works_inside_a_running_event_loop() -> None:
    async def notebook_cell() -> float | None:
        result = run_evals(
            [{"input": "a", "ground_truth": "A"}], [create_exact_match_scorer()], str.upper, progress=False
        )
        score: float | None = result.scores["exact_match"]
        return score

    assert asyncio.run(notebook_cell()) == 1.0


async def test_llm_judged_scorers_run_in_batch(judge_server: FakeJudgeServer) -> None:
    def responder(request: Any) -> Reply:
        reference = request.prompt.split("Reference answer (expert):")[1].split("Submitted answer:")[0]
        submitted = request.prompt.split("Submitted answer:")[1].split("\n\n")[0]
        relation = "same" if reference.strip() == submitted.strip() else "conflict"
        return Reply.json({"relation": relation, "reason": "compared the capital"})

    judge_server.responder = responder
    scorer = create_factuality_scorer(judge_server.judge())
    answers = {"Capital of France?": "Paris", "Capital of Italy?": "Paris"}
    data = [{"input": q, "ground_truth": "Paris" if "France" in q else "Rome"} for q in answers]

    result = await arun_evals(data, [scorer], answers.__getitem__, concurrency=2, progress=False)

    assert [i.scores["factuality"] for i in result.items] == [1.0, 0.0]
    assert result.items[1].results["factuality"].reason == "conflict: compared the capital"
    assert result.items[0].results["factuality"].judge_model == "fake/gpt-4o-mini"
    assert len(judge_server.requests) == 2


def test_a_judge_without_its_key_fails_before_any_item(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    called: list[str] = []

    def target(text: str) -> str:
        called.append(text)
        return text

    scorer = create_factuality_scorer("openai/gpt-4o-mini")
    with pytest.raises(ValueError, match=r"scorer 'factuality' cannot score: .*needs OPENAI_API_KEY"):
        run_evals(ITEMS, [scorer], target, progress=False)
    assert called == []  # no item ran, no retries against the provider


async def test_an_interrupted_run_has_the_verdict_interrupted_and_counts_its_outcomes() -> None:
    stop = asyncio.Event()

    async def target(text: str) -> str:
        if text == "slow":
            stop.set()
            await asyncio.sleep(60)
        if text == "boom":
            raise RuntimeError("target exploded")
        return text.upper()

    data = [
        {"input": "a", "ground_truth": "A"},
        {"input": "b", "ground_truth": "x"},
        {"input": "boom", "ground_truth": "x"},
        {"input": "slow"},
    ]
    scorers = [create_exact_match_scorer()]
    result = await arun_evals(
        data, scorers, target, concurrency=1, progress=False, stop=stop, thresholds={"exact_match": 0.5}
    )
    assert result.verdict == "interrupted" and not result.passed
    summary = result.summary
    counts = (summary.total_runs, summary.passed_runs, summary.errored_runs, summary.below_threshold_runs)
    assert counts == (3, 1, 1, 1)
    assert summary.outcome_text() == (
        "1/3 (33.3%) runs passed; 1 errored (counted as not passed), 1 below threshold"
    )


async def test_a_name_names_the_target_in_the_records() -> None:
    result = await arun_evals(
        [{"input": "a"}], [create_exact_match_scorer()], str.upper, progress=False, name="shouter"
    )
    assert [r.entity for r in result.to_records()] == ["shouter"]
