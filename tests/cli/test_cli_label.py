"""``agentevals label`` with its keys read from a pipe: which runs it shows and in what order (``--pick``,
``--sample``, the stored threshold), and the errors it exits 2 with."""

from __future__ import annotations

import io
import re
from pathlib import Path

import pytest

from agentevals import ScoreResult
from agentevals._cli._label_pick import Candidate, OtherScore, candidates, ordered
from agentevals._model._thresholds import Threshold
from agentevals._store._catalog_tables import ScorerInfo
from agentevals.cli import main
from agentevals.evals import Labels
from agentevals.sinks import SQLiteSink

#: (run, scorer) -> score. helpfulness passes r1 and r3; tone and safety agree with it on r1 only.
SCORES = {
    ("r1", "helpfulness"): 0.9,
    ("r1", "tone"): 0.8,
    ("r1", "safety"): 1.0,
    ("r2", "helpfulness"): 0.2,
    ("r2", "tone"): 0.9,
    ("r2", "safety"): 1.0,
    ("r3", "helpfulness"): 0.6,
    ("r3", "tone"): 0.1,
    ("r3", "safety"): 0.7,
    ("r4", "helpfulness"): 0.05,
}


async def _store(path: Path, scorers: list[ScorerInfo] | None = None) -> str:
    sink = SQLiteSink(path)
    await sink.write(
        [
            ScoreResult(
                scorer_id=scorer,
                scorer_name=scorer,
                run_id=run_id,
                input=f"question {run_id}",
                output=f"answer {run_id}",
                score=score,
            )
            for (run_id, scorer), score in SCORES.items()
        ]
    )
    if scorers:
        await sink.write_scorers(scorers)
    await sink.close()
    return str(path)


@pytest.fixture
async def db(tmp_path: Path) -> str:
    return await _store(tmp_path / "scores.db")


def _label(
    db: str, keys: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], *options: str
) -> tuple[int, list[str]]:
    """The exit code and the runs shown, in order, with ``keys`` piped in."""
    monkeypatch.setattr("sys.stdin", io.StringIO(keys))
    code = main(["label", "--db", db, "--scorer", "helpfulness", "--labeller", "ann", *options])
    return code, re.findall(r"^run (r\d)$", capsys.readouterr().out, re.MULTILINE)


def test_uncertain_shows_the_scores_nearest_the_threshold_first(
    db: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _label(db, "kkkk", monkeypatch, capsys) == (0, ["r3", "r2", "r1", "r4"])


async def test_the_stored_threshold_decides_what_is_near(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    threshold = ScorerInfo("helpfulness", "helpfulness", None, "live", threshold_min=0.1)
    db = await _store(tmp_path / "scores.db", [threshold])
    monkeypatch.setattr("sys.stdin", io.StringIO("q"))
    assert main(["label", "--db", db, "--scorer", "helpfulness", "--labeller", "ann"]) == 0
    out = capsys.readouterr().out
    assert "run r4" in out and "score 0.050 (threshold >= 0.1: fail)" in out


def test_disagreement_shows_the_runs_the_scorers_split_on_first(
    db: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    code, shown = _label(db, "kkkk", monkeypatch, capsys, "--pick", "disagreement")
    assert (code, shown) == (0, ["r2", "r3", "r1", "r4"])


def test_disagreement_shows_the_other_scorers(
    db: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr("sys.stdin", io.StringIO("q"))
    assert main(["label", "--db", db, "--scorer", "helpfulness", "--pick", "disagreement"]) == 0
    assert "other scorers: safety 1.00 pass, tone 0.90 pass" in capsys.readouterr().out


def test_random_is_repeatable_with_a_seed_and_sample_caps_the_session(
    db: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    first = _label(db, "kkkk", monkeypatch, capsys, "--pick", "random", "--seed", "7")
    again = _label(db, "kkkk", monkeypatch, capsys, "--pick", "random", "--seed", "7")
    assert first == again and sorted(first[1]) == ["r1", "r2", "r3", "r4"]
    assert _label(db, "kkkk", monkeypatch, capsys, "--pick", "random", "--seed", "7", "--sample", "2") == (
        0,
        first[1][:2],
    )


def test_keys_from_a_pipe_label_and_a_finished_labeller_has_nothing_left(
    db: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _label(db, "pfs0.25\n", monkeypatch, capsys, "--sample", "3") == (0, ["r3", "r2", "r1"])
    with Labels(db) as labels:
        stored = sorted((x.run_id, x.value, x.kind) for x in labels.list())
    assert stored == [("r1", 0.25, "score"), ("r2", 0.0, "pass_fail"), ("r3", 1.0, "pass_fail")]
    assert _label(db, "p", monkeypatch, capsys) == (0, ["r4"])
    monkeypatch.setattr("sys.stdin", io.StringIO(""))
    assert main(["label", "--db", db, "--scorer", "helpfulness", "--labeller", "ann"]) == 0
    assert "nothing left to label: ann labelled every run helpfulness scored" in capsys.readouterr().out


def test_the_end_of_the_keys_ends_the_session(
    db: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _label(db, "p", monkeypatch, capsys) == (0, ["r3", "r2"])
    with Labels(db) as labels:
        assert [x.run_id for x in labels.list()] == ["r3"]


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (["--scorer", "nobody"], "--scorer 'nobody': "),
        (["--scorer", "helpfulness", "--sample", "0"], "--sample 0: expected a number of runs, 1 or more"),
    ],
)
def test_bad_options_exit_2(
    db: str, options: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["label", "--db", db, *options]) == 2
    assert message in capsys.readouterr().err


def test_a_jsonl_store_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "scores.jsonl").write_text("")
    assert main(["label", "--db", str(tmp_path / "scores.jsonl"), "--scorer", "helpfulness"]) == 2
    assert "keeps score records only" in capsys.readouterr().err


def test_each_scorers_latest_score_of_a_run_counts() -> None:
    rows = [
        ("a", "helpfulness", 0.9, "2026-01-01T00:00:00"),
        ("a", "helpfulness", 0.4, "2026-01-02T00:00:00"),
        ("a", "tone", 0.2, "2026-01-01T00:00:00"),
        ("b", "tone", 0.9, "2026-01-01T00:00:00"),  # not scored by helpfulness: not a candidate
        ("c", "helpfulness", 0.5, "2026-01-01T00:00:00"),
    ]
    found = candidates(rows, "helpfulness", {}, Threshold(min=0.5), exclude={"c"})
    assert found == [
        Candidate(
            run_id="a",
            score=0.4,
            distance=pytest.approx(0.1),  # type: ignore[arg-type]
            others=(OtherScore("tone", 0.2, False),),
            split=0.0,
            spread=pytest.approx(0.2),  # type: ignore[arg-type]
        )
    ]


def test_disagreement_orders_by_split_then_spread() -> None:
    found = [
        Candidate("even", 0.6, 0.1, split=0.5, spread=0.5),
        Candidate("wide", 0.9, 0.4, split=1 / 3, spread=0.9),
        Candidate("narrow", 0.55, 0.05, split=1 / 3, spread=0.3),
        Candidate("agreed", 0.5, 0.0),
    ]
    assert [c.run_id for c in ordered(found, "disagreement")] == ["even", "wide", "narrow", "agreed"]
    assert [c.run_id for c in ordered(found, "uncertain")] == ["agreed", "narrow", "even", "wide"]
