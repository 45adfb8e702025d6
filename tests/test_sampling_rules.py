"""Rule sampling without an engine: each predicate, first match wins, the data and callable forms, files,
and the errors bad rules give at construction."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agentevals import Run, Sampling
from agentevals._engine._sampling import sample_point
from agentevals.engine import DeliveryOptions, QueueOptions, Rule

DECLINED = {"tool_name": "pay", "state": "error", "error": "declined"}
TOOL_FAILED = [
    {"role": "assistant", "content": "", "tool_invocations": [DECLINED]},
    {"role": "assistant", "content": "sorry"},
]
TOOL_OK = [
    {"role": "assistant", "content": "paid", "tool_invocations": [{"tool_name": "pay", "result": {"ok": 1}}]}
]


def matches(when: dict[str, Any], **fields: Any) -> bool:
    """Whether the one rule ``when`` at rate 1 samples a run with ``fields``."""
    return Sampling.rules([{"when": when, "rate": 1.0}]).sampled(
        Run(output=fields.pop("output", "x"), **fields)
    )


def test_error_and_tool_failure_predicates() -> None:
    assert matches({"error": True}, error="boom")
    assert not matches({"error": True})
    assert matches({"error": False})
    assert matches({"tool_failed": True}, output=TOOL_FAILED)
    assert not matches({"tool_failed": True}, output=TOOL_OK)
    assert not matches({"tool_failed": True}, output="plain text")
    assert matches({"tool_failed": False}, output=TOOL_OK)
    either = {"any": [{"error": True}, {"tool_failed": True}]}
    assert matches(either, error="boom") and matches(either, output=TOOL_FAILED)
    assert not matches(either, output=TOOL_OK)


def test_entity_and_model_predicates() -> None:
    assert matches({"entity": "checkout"}, entity="checkout")
    assert not matches({"entity": "checkout"}, entity="search")
    assert not matches({"entity": "checkout"})
    assert matches({"entity": ["checkout", "cart"]}, entity="cart")
    assert matches({"entity": {"checkout", "cart"}}, entity="cart"), "a set is one of, as a list"
    assert matches({"entity": {"ne": "search"}}, entity="cart")
    assert not matches({"entity": {"ne": "search"}}), "an unknown entity makes the predicate false"
    assert matches({"entity": {"exists": False}})
    # LiteLLM puts one "model" in the metadata, LangChain a list of "models"
    assert matches({"model": "gpt-4o"}, metadata={"model": "gpt-4o"})
    assert matches({"model": "gpt-4o"}, metadata={"models": ["gpt-4o-mini", "gpt-4o"]})
    assert not matches({"model": "gpt-4o"}, metadata={"models": ["gpt-4o-mini"]})
    assert matches({"model": ["claude", "gpt-4o"]}, metadata={"model": "gpt-4o"})
    assert not matches({"model": "gpt-4o"})


def test_metadata_paths_and_operators() -> None:
    meta = {
        "feedback": "negative",
        "user": {"tier": "gold", "age_days": 3},
        "tags": ["vip", "eu"],
        "note": None,
    }
    assert matches({"metadata.feedback": "negative"}, metadata=meta)
    assert not matches({"metadata.feedback": "positive"}, metadata=meta)
    assert matches({"metadata.user.tier": ["gold", "platinum"]}, metadata=meta)
    assert matches({"metadata.user.age_days": {"lt": 7}}, metadata=meta)
    assert not matches({"metadata.user.age_days": {"gt": 7}}, metadata=meta)
    assert matches({"metadata.user.age_days": {"gte": 3, "lte": 3}}, metadata=meta)
    assert matches({"metadata.tags": {"contains": "vip"}}, metadata=meta)
    assert not matches({"metadata.tags": {"contains": "us"}}, metadata=meta)
    assert matches({"metadata.user": {"exists": True}}, metadata=meta)
    assert matches({"metadata.user.plan": {"exists": False}}, metadata=meta)
    assert matches({"metadata.note": {"exists": False}}, metadata=meta), "a null counts as absent for exists"
    assert not matches({"metadata.feedback.deeper": "x"}, metadata=meta), "a path through a string is absent"
    assert not matches({"metadata.missing": {"ne": "x"}}, metadata=meta), "absent: only exists: false holds"
    assert not matches({"metadata.feedback": {"gt": 1}}, metadata=meta), "a threshold on text is false"
    assert matches({"metadata.feedback": "negative", "metadata.user.tier": "gold"}, metadata=meta)
    assert not matches({"metadata.feedback": "negative", "metadata.user.tier": "silver"}, metadata=meta)


def test_latency_and_token_thresholds_are_false_when_unknown() -> None:
    assert matches({"latency_ms": {"gt": 2000}}, duration_ms=2500.0)
    assert not matches({"latency_ms": {"gt": 2000}}, duration_ms=1500.0)
    assert not matches({"latency_ms": {"lt": 2000}}), "no duration: false"
    litellm = {"usage": {"prompt_tokens": 900, "completion_tokens": 300, "total_tokens": 1200}}
    langchain = {"usage": {"input_tokens": 900, "output_tokens": 300}}
    for meta in (litellm, langchain):
        assert matches({"tokens": {"gte": 1200}}, metadata=meta)
        assert not matches({"tokens": {"gt": 1200}}, metadata=meta)
        assert matches({"input_tokens": {"gt": 800}, "output_tokens": {"lt": 400}}, metadata=meta)
    assert matches({"tokens": {"gt": 100}}, metadata={"usage": {"output_tokens": 150}})
    assert not matches({"tokens": {"lt": 10_000}}), "no token usage: false"
    assert not matches({"tokens": {"lt": 10_000}}, metadata={"usage": "n/a"})


def test_first_matching_rule_decides_and_unmatched_runs_are_not_sampled() -> None:
    policy = Sampling.rules([
        Rule(when={"error": True}, rate=0.0, name="errors ignored"),
        Rule(when={"entity": "checkout"}, rate=1.0),
    ])  # fmt: skip
    assert policy.ruleset is not None
    assert not policy.sampled(Run(output="x", entity="checkout", error="boom")), "the first rule wins"
    assert policy.sampled(Run(output="x", entity="checkout"))
    assert not policy.sampled(Run(output="x", entity="search")), "no rule matched: not sampled"
    assert policy.ruleset.verdict(Run(output="x", entity="search"), 0.0) == -1
    assert policy.ruleset.verdict(Run(output="x", entity="checkout", error="e"), 0.0) == 0
    assert policy.ruleset.verdict(Run(output="x", entity="checkout"), 0.0) == 3


def test_a_rule_rate_samples_deterministically_by_trace_or_run_id() -> None:
    policy = Sampling.rules([{"when": {"entity": "checkout"}, "rate": 0.2}, {"rate": 0.01}])
    ids = [f"run-{i}" for i in range(2000)]
    picked = {i for i in ids if policy.sampled(Run(run_id=i, output="x", entity="checkout"))}
    assert picked == {i for i in ids if sample_point(i) < 0.2}
    assert {i for i in ids if policy.sampled(Run(run_id=i, output="x"))} == {
        i for i in ids if sample_point(i) < 0.01
    }
    same_trace = {
        policy.sampled(Run(run_id=i, trace_id="t-1", output="x", entity="checkout")) for i in ids[:50]
    }
    assert same_trace == {sample_point("t-1") < 0.2}


def test_callable_predicates_and_the_data_form_agree() -> None:
    data = Sampling.of({
        "type": "rules",
        "rules": [{"when": {"metadata.feedback": "negative"}, "rate": 1.0}, {"rate": 0.3}],
    })  # fmt: skip
    code = Sampling.rules([
        Rule(when=lambda run: run.metadata.get("feedback") == "negative", rate=1.0),
        Rule(rate=0.3),
    ])  # fmt: skip
    runs = [
        Run(run_id=f"r{i}", output="x", metadata={"feedback": "negative"} if i % 7 == 0 else {})
        for i in range(700)
    ]
    assert [data.sampled(r) for r in runs] == [code.sampled(r) for r in runs]
    assert sum(data.sampled(r) for r in runs[::7]) == 100


def test_data_form_equality_names_and_shorthands() -> None:
    rules = [
        {"when": {"error": True}, "rate": 1.0},
        {"when": {"latency_ms": {"gt": 2000}}, "rate": 0.5},
        {"rate": 0.01},
    ]
    policy = Sampling.of({"type": "rules", "rules": rules})
    assert policy == Sampling.of(rules) == Sampling.of({"rules": rules}) == Sampling.rules(rules)
    assert policy.kind == "rules"
    assert policy.ruleset is not None
    assert policy.ruleset.names == ("error", "latency_ms>2000", "otherwise")
    named = Sampling.rules(
        [{"when": {"entity": ["a", "b"], "metadata.x": {"exists": True}}, "rate": 1.0, "name": "ab"}]
    )
    assert named.ruleset is not None and named.ruleset.names == ("ab",)
    auto = Sampling.rules([{"when": {"entity": ["a", "b"], "metadata.x": {"exists": False}}, "rate": 1.0}])
    assert auto.ruleset is not None and auto.ruleset.names == ("entity in [a, b], no metadata.x",)


@pytest.mark.parametrize(
    ("rules", "message"),
    [
        ([{"when": {"eror": True}, "rate": 1.0}],
         r"sampling rule 1: unknown predicate 'eror'; expected one of"),
        ([{"rate": 1.0, "when": {"error": True}}, {"when": {"entity": "x"}, "rate": 1.5}],
         r"sampling rule 2: a rule's rate must be in \[0, 1\], got 1.5"),
        ([{"when": {"latency_ms": {"gtt": 5}}, "rate": 0.1}],
         r"rule 1: 'latency_ms': unknown operator 'gtt'; use one of"),
        ([{"when": {"latency_ms": 5}, "rate": 0.1}], r"'latency_ms' takes thresholds, e.g."),
        ([{"when": {"tokens": {"eq": 5}}, "rate": 0.1}], r"'tokens': unknown operator 'eq'"),
        ([{"when": {"metadata.score": {"gt": "high"}}, "rate": 0.1}],
         r"'metadata.score': 'gt' takes a number"),
        ([{"when": {"metadata.": "x"}, "rate": 0.1}], r"unknown predicate 'metadata.'"),
        ([{"when": {"error": "yes"}, "rate": 0.1}], r"'error' takes true or false"),
        ([{"when": {"entity": {"in": "checkout"}}, "rate": 0.1}], r"'in' takes a list"),
        ([{"when": {"any": {"error": True}}, "rate": 0.1}], r"'any' takes a non-empty list"),
        ([{"when": {"error": True}}], r"sampling rule 1: a rule needs a rate"),
        ([{"when": {"error": True}, "rate": 1.0, "error": True}], r"unknown key\(s\) \['error'\]"),
        ([{"rate": 0.5}, {"when": {"error": True}, "rate": 1.0}],
         r"sampling rule 2 comes after rule 1 \('otherwise'\)"),
        ([{"when": {"error": True}, "rate": 1.0}, {"when": {"error": True}, "rate": 0.5}],
         r"both named 'error'"),
        ([], r"needs at least one rule"),
        ([{"when": "error", "rate": 1.0}], r"'when' must be a mapping of predicates or a callable"),
    ],
)  # fmt: skip
def test_bad_rules_are_value_errors_naming_the_rule_and_key(rules: list[Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        Sampling.of({"type": "rules", "rules": rules})


def test_bad_policy_shapes() -> None:
    with pytest.raises(ValueError, match=r"got the key\(s\) \['rate', 'type'\]"):
        Sampling.of({"type": "rules", "rate": 0.5})
    with pytest.raises(ValueError, match="takes a list of rules"):
        Sampling.rules({"rate": 0.5})  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"a rule's rate must be a number"):
        Rule(rate="1")  # type: ignore[arg-type]


def test_a_raising_callable_predicate_propagates_from_sampled() -> None:
    def broken(run: Run) -> bool:
        raise KeyError("tier")

    with pytest.raises(KeyError):
        Sampling.rules([Rule(when=broken, rate=1.0)]).sampled(Run(output="x"))


def test_from_file_json_and_yaml(tmp_path: Path) -> None:
    rules = [
        {"when": {"error": True}, "rate": 1.0},
        {"when": {"metadata.feedback": "negative"}, "rate": 1.0},
        {"rate": 0.01},
    ]
    as_json = tmp_path / "policy.json"
    as_json.write_text(json.dumps({"type": "rules", "rules": rules}))
    as_yaml = tmp_path / "policy.yaml"
    as_yaml.write_text(
        "type: rules\n"
        "rules:\n"
        "  - when: {error: true}\n"
        "    rate: 1.0\n"
        "  - when:\n"
        "      metadata.feedback: negative\n"
        "    rate: 1\n"
        "  - rate: 0.01\n"
    )
    bare_list = tmp_path / "list.yml"
    bare_list.write_text("- rate: 0.01\n")
    assert Sampling.from_file(as_json) == Sampling.from_file(as_yaml) == Sampling.rules(rules)
    assert Sampling.from_file(bare_list) == Sampling.rules([{"rate": 0.01}])
    ratio = tmp_path / "ratio.json"
    ratio.write_text('{"type": "ratio", "rate": 0.25}')
    assert Sampling.from_file(ratio) == Sampling.ratio(0.25)


def test_from_file_errors_name_the_file(tmp_path: Path) -> None:
    cases = {
        "broken.json": ('{"type": "rules", ', "not valid JSON"),
        "broken.yaml": ("rules: [\n", "not valid YAML"),
        "empty.yaml": ("", "is empty"),
        "bad.yaml": (
            "rules:\n  - when: {entity: x}\n    rate: 2\n",
            r"sampling rule 1: a rule's rate must be in",
        ),
    }
    for name, (text, message) in cases.items():
        path = tmp_path / name
        path.write_text(text)
        with pytest.raises(ValueError, match=message) as caught:
            Sampling.from_file(path)
        assert name in str(caught.value)
    with pytest.raises(FileNotFoundError):
        Sampling.from_file(tmp_path / "missing.yaml")


def test_cli_rescore_scores_only_the_runs_the_policy_samples(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from agentevals import ScoringEngine, create_scorer
    from agentevals.cli import main
    from agentevals.sinks import SQLiteSink

    db = tmp_path / "scores.db"
    length = create_scorer(id="length").generate_score(lambda run, **_: min(1.0, len(run.output_text) / 10))
    engine = ScoringEngine(
        length,
        sinks=[SQLiteSink(db)],
        queue=QueueOptions(linger=0),
        delivery=DeliveryOptions(dead_letter=tmp_path / "dl.jsonl"),
    )
    stored = [
        Run(
            run_id=f"run-{i}",
            input=f"q{i}",
            output=f"a{i}",
            ground_truth=f"a{i}",
            entity="checkout" if i % 2 else "search",
            metadata={"feedback": "negative"} if i % 10 == 0 else {},
        )
        for i in range(300)
    ]
    assert all(engine.submit(run) for run in stored)
    assert engine.shutdown(timeout=30)
    policy = tmp_path / "sampling.yaml"
    policy.write_text(
        "rules:\n"
        "  - when: {metadata.feedback: negative}\n"
        "    rate: 1.0\n"
        "  - when: {entity: checkout}\n"
        "    rate: 0.3\n"
    )  # no catch-all: the other "search" runs are not sampled
    expected = {
        r.run_id
        for r in stored
        if r.metadata.get("feedback") == "negative"
        or (r.entity == "checkout" and sample_point(r.run_id) < 0.3)
    }
    assert 50 < len(expected) < 150
    args = ["rescore", "--db", str(db), "--scorer", "exact_match", "--sampling", str(policy), "--no-progress"]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert f"rescored 300 runs from {db}: {len(expected)} scored" in out
    assert f"{300 - len(expected)} sampled out" in out
    import sqlite3

    with sqlite3.connect(db) as conn:
        rescored = {
            row[0]
            for row in conn.execute("SELECT run_id FROM agentevals_scores WHERE scorer_id = 'exact_match'")
        }
    assert rescored == expected

    bad = tmp_path / "bad.yaml"
    bad.write_text("rules:\n  - when: {entyty: checkout}\n    rate: 0.3\n")
    for path, message in ((bad, "unknown predicate 'entyty'"), (tmp_path / "missing.yaml", "missing.yaml")):
        assert main([*args[:5], "--sampling", str(path), "--no-progress"]) == 2
        err = capsys.readouterr().err
        assert "--sampling" in err and message in err
