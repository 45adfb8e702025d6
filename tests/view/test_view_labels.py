"""``agentevals view --labels`` through Starlette's TestClient: the run page's label forms and the two
POST routes (only in labels mode), each write checked against the process' token, the Origin and
Referer and the host name; the browser sent back to the run page; pages that count labels never
served from before a write. SQLite and PostgreSQL."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient

from agentevals._view._app import create_app
from agentevals._view._labelling import Labelling
from agentevals.cli import main
from agentevals.evals import Labels
from tests.view.conftest import add_labels

HERE = "http://127.0.0.1:8765"


def labelling_client(address: str, table: str, **options: Any) -> TestClient:
    """A client of the app in labels mode (labeller ann), addressing it as the browser would."""
    app = create_app(address, table=table, warm=False, labelling=Labelling(labeller="ann", **options))
    return TestClient(app, base_url=HERE)


def token(page: str) -> str:
    found = re.search(r'name="csrf" value="([^"]+)"', page)
    assert found is not None, "the page carries no token"
    return found.group(1)


def label_form(client: TestClient, run_id: str = "h5", **fields: str) -> dict[str, str]:
    """The form the run page posts when ``helpfulness``'s pass button is clicked, with ``fields``."""
    return {
        "csrf": token(client.get(f"/runs/{run_id}").text),
        "run_id": run_id,
        "name": "helpfulness",
        "value": "pass",
        "note": "",
        **fields,
    }


def stored(address: str, table: str, run_id: str = "h5") -> list[tuple[str, float, str, str, str | None]]:
    with Labels(address, table=table) as labels:
        return [(x.name, x.value, x.kind, x.labeller, x.note) for x in labels.list(run_id=run_id)]


def test_without_labels_mode_the_viewer_has_no_write_route(labelled_store: tuple[str, str]) -> None:
    address, table = labelled_store
    client = TestClient(create_app(address, table=table, warm=False), base_url=HERE)
    page = client.get("/runs/h5").text
    assert 'action="/labels"' not in page and 'name="csrf"' not in page
    form = {"run_id": "h5", "name": "helpfulness", "value": "pass"}
    assert client.post("/labels", data=form).status_code == 404
    assert client.post("/labels/delete", data={"run_id": "h5", "label_id": "x"}).status_code == 404
    assert client.post("/runs/h5", data=form).status_code == 405
    assert stored(address, table) == []


def test_a_label_is_written_and_the_browser_sent_back_to_the_run(labelled_store: tuple[str, str]) -> None:
    address, table = labelled_store
    client = labelling_client(address, table)
    page = client.get("/runs/h5").text
    forms = re.findall(r'<form class="label-form" method="post" action="/labels" data-scorer="([^"]+)"', page)
    assert forms == ["helpfulness", "tone"]  # one per scorer of the run
    assert "No labels of this run yet." in page
    response = client.post(
        "/labels", data=label_form(client, note="cites the manual"), follow_redirects=False
    )
    assert response.status_code == 303 and response.headers["location"] == "/runs/h5#labels"
    score = label_form(client, name="tone", value="score", score="0.25")
    assert client.post("/labels", data=score, follow_redirects=False).status_code == 303
    assert stored(address, table) == [
        ("helpfulness", 1.0, "pass_fail", "ann", "cites the manual"),
        ("tone", 0.25, "score", "ann", None),
    ]
    rows = re.findall(
        r'<tr data-label="[0-9a-f]+" data-name="([^"]+)">\s*'
        r'<td>[^<]*</td><td class="verdict">([^<]*)</td><td>([^<]*)</td>',
        client.get("/runs/h5").text,
    )
    assert rows == [("helpfulness", "pass", "ann"), ("tone", "0.25", "ann")]
    assert client.get("/labels").status_code == 405  # writes only


def test_a_label_is_deleted(labelled_store: tuple[str, str]) -> None:
    address, table = labelled_store
    client = labelling_client(address, table)
    client.post("/labels", data=label_form(client))
    (label_id,) = re.findall(r'name="label_id" value="([0-9a-f]+)"', client.get("/runs/h5").text)
    form = {"csrf": token(client.get("/runs/h5").text), "run_id": "h5", "label_id": label_id}
    response = client.post("/labels/delete", data=form, follow_redirects=False)
    assert response.status_code == 303 and response.headers["location"] == "/runs/h5#labels"
    assert stored(address, table) == []
    assert client.post("/labels/delete", data=form, follow_redirects=False).status_code == 303  # again
    assert client.post("/labels/delete", data={**form, "csrf": "forged"}).status_code == 403


def test_the_labels_of_a_run_the_store_does_not_hold_are_shown_and_can_be_deleted(
    labelled_store: tuple[str, str],
) -> None:
    address, table = labelled_store
    with Labels(address, table=table) as labels:
        labels.add("ghost", "helpfulness", "fail", labeller="bob")  # imported for another store's run
    client = labelling_client(address, table)
    page = client.get("/runs/ghost").text
    assert "only its labels" in page and "bob" in page
    (label_id,) = re.findall(r'name="label_id" value="([0-9a-f]+)"', page)
    form = {"csrf": token(page), "run_id": "ghost", "label_id": label_id}
    assert client.post("/labels/delete", data=form, follow_redirects=False).status_code == 303
    assert stored(address, table, "ghost") == []
    assert client.get("/runs/ghost").status_code == 404  # nothing of it is left


@pytest.mark.parametrize(
    "forged",
    [
        {"csrf": ""},
        {"csrf": "a" * 43},
        {"csrf": Labelling().token},  # another process' token
    ],
)
def test_a_write_without_this_process_token_is_refused(
    labelled_store: tuple[str, str], forged: dict[str, str]
) -> None:
    address, table = labelled_store
    client = labelling_client(address, table)
    response = client.post("/labels", data=label_form(client, **forged))
    assert response.status_code == 403 and "reload the run page" in response.text
    without = {k: v for k, v in label_form(client).items() if k != "csrf"}
    assert client.post("/labels", data=without).status_code == 403
    assert stored(address, table) == []


def test_a_write_from_another_site_or_host_name_is_refused(labelled_store: tuple[str, str]) -> None:
    address, table = labelled_store
    client = labelling_client(address, table)
    form = label_form(client)
    for headers in (
        {"Origin": "http://evil.example"},
        {"Origin": "null"},
        {"Origin": "http://127.0.0.1:9999"},  # another port: another site
        {"Referer": "http://evil.example/page"},
        {"Origin": HERE, "Referer": "http://evil.example/page"},
    ):
        response = client.post("/labels", data=form, headers=headers)
        assert response.status_code == 403, headers
    # A page of another site whose name was pointed at 127.0.0.1 (DNS rebinding) addresses another host.
    rebound = TestClient(client.app, base_url="http://evil.example:8765")
    assert (
        rebound.post("/labels", data=form, headers={"Origin": "http://evil.example:8765"}).status_code == 403
    )
    assert stored(address, table) == []
    same = {"Origin": HERE, "Referer": f"{HERE}/runs/h5"}
    assert client.post("/labels", data=form, headers=same, follow_redirects=False).status_code == 303
    localhost = TestClient(client.app, base_url="http://localhost:8765")
    assert localhost.post("/labels", data=form, follow_redirects=False).status_code == 303
    anywhere = labelling_client(address, table, hosts=None)  # listening beyond loopback (--host)
    other = TestClient(anywhere.app, base_url="http://viewer.internal:8765")
    headers = {"Origin": "http://viewer.internal:8765"}
    response = other.post("/labels", data=label_form(other), headers=headers, follow_redirects=False)
    assert response.status_code == 303
    assert len(stored(address, table)) == 3


def test_a_bad_label_is_refused_and_nothing_stored(labelled_store: tuple[str, str]) -> None:
    address, table = labelled_store
    client = labelling_client(address, table)
    for fields, message in (
        ({"value": "maybe"}, "a label&#39;s value is"),
        ({"value": "score", "score": "2"}, "a label&#39;s value is"),
        ({"value": "score", "score": "high"}, "expected a number from 0 to 1"),
        ({"name": ""}, "a label&#39;s name is a non-empty string"),
    ):
        response = client.post("/labels", data=label_form(client, **fields))
        assert response.status_code == 400 and message in response.text, fields
    as_json = client.post("/labels", json=label_form(client))
    assert as_json.status_code == 415
    huge = client.post("/labels", data=label_form(client, note="x" * 70_000))
    assert huge.status_code == 413
    assert stored(address, table) == []


def test_pages_that_count_labels_are_never_served_from_before_a_write(
    labelled_store: tuple[str, str],
) -> None:
    address, table = labelled_store
    add_labels(address, table)
    client = labelling_client(address, table)

    def counted() -> tuple[str, str, str]:
        agreement = client.get("/agreement").text
        labels = re.search(r'<span class="label-count">(\d+) labels</span>', agreement)
        overview = re.search(r'data-corrected="helpfulness"[^>]*>corrected ([^<]+)<', client.get("/").text)
        card = re.search(
            r'id="corrected">.*?<div class="big">([^<]+)<', client.get("/scorers/helpfulness").text, re.S
        )
        assert labels and overview and card
        return labels.group(1), overview.group(1), card.group(1)

    before = counted()
    assert before[0] == "75"
    for n in range(5):  # the judge passed these; people fail them
        client.post("/labels", data=label_form(client, run_id=f"h{4 + 2 * n}", value="fail"))
    after = counted()
    assert after[0] == "80" and after[1] != before[1] and after[2] != before[2]
    with Labels(address, table=table) as labels:  # a label written by another process
        labels.add("h79", "helpfulness", "pass", labeller="cli")
    assert counted()[0] == "81"


def test_labels_mode_needs_a_store_that_keeps_labels(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from agentevals._support._sync import run_sync
    from agentevals.sinks import JsonlSink
    from tests.view.conftest import labelled_records

    path = tmp_path / "scores.jsonl"

    async def write() -> None:
        sink = JsonlSink(path)
        try:
            await sink.write(labelled_records()[:10])
        finally:
            await sink.close()

    run_sync(write())
    with pytest.raises(ValueError, match="keeps score records only"):
        create_app(path, labelling=Labelling())
    assert main(["view", "--db", str(path), "--labels"]) == 2
    assert "keeps score records only" in capsys.readouterr().err
    assert main(["view", "--db", str(path), "--labeller", "ann"]) == 2
    assert "add --labels" in capsys.readouterr().err
    assert main(["view", "--db", str(path), "--labels", "--min-labels", "0"]) == 2
    assert main(["view", "--help"]) == 0
    assert "--labels" in capsys.readouterr().out


def test_listening_on_loopback_limits_writes_to_loopback_names() -> None:
    assert Labelling.listening_on("127.0.0.1").hosts == ("127.0.0.1", "localhost", "::1")
    assert Labelling.listening_on("::1").hosts is not None
    assert Labelling.listening_on("0.0.0.0").hosts is None
    assert Labelling.listening_on("192.168.1.20", "ann").labeller == "ann"
    assert Labelling().token != Labelling().token
