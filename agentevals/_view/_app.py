"""``agentevals view``: a Starlette app over a store and its server; read-only (GET routes only) unless
started in labels mode (``labelling``: the run page's label forms and their POST routes, see
:mod:`agentevals._view._labelling`).

>>> import tempfile, pathlib
>>> from agentevals.sinks import SQLiteSink
>>> path = pathlib.Path(tempfile.mkdtemp()) / "scores.db"
>>> SQLiteSink(path).check()
>>> from starlette.testclient import TestClient
>>> TestClient(create_app(path)).get("/").status_code
200
"""

from __future__ import annotations

import contextlib
import logging
import os
import sys
import threading
from collections.abc import AsyncIterator, Callable
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime
from functools import partial
from typing import Any

from agentevals._model._result import SOURCES
from agentevals._trust._agreement import Agreement
from agentevals._trust._opened import check_labels_kept
from agentevals._trust._stats import MIN_LABELS_PER_CLASS
from agentevals._view import _annotated, _labelled, _pages, _thresholds, _versions
from agentevals._view._cache import Cache
from agentevals._view._labelling import Labelling, Refused, label_routes
from agentevals._view._queries import BUCKETS, Bucket, Filters, Reader, State
from agentevals._view._render import STATIC, render

HOST = "127.0.0.1"
PORT = 8765


class BadRequest(ValueError):
    """A query parameter that cannot be used: shown to the user with status 400."""


def create_app(
    address: str | os.PathLike[str],
    *,
    table: str = "agentevals_scores",
    settings: _pages.Settings | None = None,
    warm: bool = True,
    labelling: Labelling | None = None,
    min_labels: int = MIN_LABELS_PER_CLASS,
) -> Any:
    """The app over the store at ``address`` (a SQLite file or ``postgresql://`` URL); ``warm``
    computes the overview in the background at once; ``labelling`` adds the label forms and routes; a
    pass rate is corrected by labels once each class has ``min_labels``. Raises ``ValueError`` when
    there is no store (or, with ``labelling``, one that keeps no labels)."""
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import HTMLResponse, Response
    from starlette.routing import Mount, Route
    from starlette.staticfiles import StaticFiles

    if labelling is not None:
        check_labels_kept(address)
    reader = Reader(address, table=table)
    config = settings or _pages.Settings()
    cache = Cache()
    writes = [0]  # label writes of this process: with the store's labels, a key of what labels decide

    def cached(state: State, key: Any, compute: Callable[[], Any]) -> Any:
        """``compute()`` cached while the store's rows are as in ``state``."""
        return cache.get((*key, config.key()), state.rows, compute)

    def judged(state: State, key: Any, f: Filters, compute: Callable[[_pages.Settings], Any]) -> Any:
        """``compute(settings)`` cached, the settings with the pass thresholds the store keeps for
        ``f``'s scope (its scorers table read once per state of its rows)."""
        from agentevals._evals._catalog import stored_scorers

        stored = cache.get(("stored-scorers",), state.rows, lambda: reader.with_store(stored_scorers))
        settings = config.scoped(_thresholds.in_scope(stored, f.eval_id))
        return cache.get((*key, settings.key()), state.rows, lambda: compute(settings))

    def labelled(state: State, key: Any, f: Filters, compute: Callable[[_pages.Settings], Any]) -> Any:
        """:func:`judged` keyed on the store's labels too: a label added or deleted is never followed
        by a page computed before it (a stale page is served only while rows are added)."""
        return judged(state, (*key, state.labels, writes[0], min_labels), f, compute)

    def agreements(state: State, f: Filters, scorer_ids: tuple[str, ...]) -> dict[str, Agreement]:
        return labelled(  # type: ignore[no-any-return]
            state,
            ("agreements", f, scorer_ids),
            f,
            lambda s: _labelled.agreements(reader, scorer_ids, f, s.bound, min_labels),
        )

    def version_changes(state: State) -> dict[str, list[_versions.VersionChange]]:
        def compute() -> dict[str, list[_versions.VersionChange]]:
            with reader.session() as q:
                return _versions.changes(q.version_starts())

        return cached(state, ("version-changes",), compute)  # type: ignore[no-any-return]

    def choices(state: State) -> dict[str, Any]:
        def compute() -> dict[str, Any]:
            with reader.session() as q:
                return q.choices()

        return cached(state, ("choices",), compute)  # type: ignore[no-any-return]

    def beside_choices(state: State, compute: Callable[[], Any]) -> tuple[Any, dict[str, Any]]:
        """``compute()`` and the filter choices, at once (on a cold store both are queries)."""
        with ThreadPoolExecutor(max_workers=1) as pool:
            opts = pool.submit(choices, state)
            return compute(), opts.result()

    def warm_up() -> None:
        try:
            state = reader.state()
            choices(state)
            data = judged(
                state,
                ("overview", Filters()),
                Filters(),
                partial(_pages.overview, reader, Filters(), deferred=True),
            )
            agreements(state, Filters(), tuple(s["id"] for s in data["scorers"]))
            cached(
                state, ("overview-deferred", Filters()), lambda: _pages.overview_deferred(reader, Filters())
            )
            version_changes(state)
        except Exception:  # the first visit computes it again and shows the error
            logging.getLogger(__name__).debug("computing the overview at start-up failed", exc_info=True)

    if warm:  # the first visit finds the overview computed (a big store takes seconds)
        threading.Thread(target=warm_up, name="agentevals-view-warm-up", daemon=True).start()

    def page(request: Request, template: str, status: int = 200, **context: Any) -> Response:
        return HTMLResponse(
            render(template, store=reader.display, path=request.url.path, sources=SOURCES, **context),
            status_code=status,
            headers={"Content-Security-Policy": _CSP, "X-Content-Type-Options": "nosniff"},
        )

    def guarded(view: Any) -> Any:
        def endpoint(request: Request) -> Response:
            try:
                result: Response = view(request)
                return result
            except BadRequest as err:
                return page(request, "error.html", 400, title="Bad request", message=str(err), charts={})

        return endpoint

    def overview(request: Request) -> Response:
        f = _filters(request.query_params, until=False)
        state = reader.state()
        data, opts = beside_choices(
            state,
            lambda: judged(state, ("overview", f), f, partial(_pages.overview, reader, f, deferred=True)),
        )
        found = agreements(state, f, tuple(s["id"] for s in data["scorers"]))
        data = _annotated.overview(data, found, version_changes(state))
        return page(
            request,
            "overview.html",
            title="Overview",
            data=data,
            charts=data["charts"],
            query=dict(request.query_params),
            choices=opts,
        )

    def overview_deferred(request: Request) -> Response:
        """The overview's slow parts (coverage's runs, the worst scores): fetched by the page once shown."""
        f = _filters(request.query_params, until=False)
        data = cached(reader.state(), ("overview-deferred", f), lambda: _pages.overview_deferred(reader, f))
        return page(request, "_overview_deferred.html", data=data, charts={})

    def scorer(request: Request) -> Response:
        scorer_id = request.path_params["scorer_id"]
        f = _filters(request.query_params)
        bucket = _bucket(request.query_params.get("bucket", "day"))
        state = reader.state()
        data, opts = beside_choices(
            state,
            lambda: judged(
                state,
                ("scorer", scorer_id, f, bucket),
                f,
                partial(_pages.scorer, reader, scorer_id, f, bucket, deferred=True),
            ),
        )
        found = agreements(state, f, (scorer_id,)).get(scorer_id)
        changes = version_changes(state).get(scorer_id, [])
        data = _annotated.scorer(data, _labelled.corrected(found) or _labelled.UNLABELLED, changes, bucket)
        return page(
            request,
            "scorer.html",
            title=scorer_id,
            data=data,
            charts=data["charts"],
            query=dict(request.query_params),
            choices=opts,
            buckets=BUCKETS,
            bucket=bucket,
        )

    def scorer_deferred(request: Request) -> Response:
        """A scorer page's slow part (breakdowns by agent model and scorer version): fetched once shown."""
        scorer_id = request.path_params["scorer_id"]
        f = _filters(request.query_params)
        data = cached(
            reader.state(),
            ("scorer-deferred", scorer_id, f),
            lambda: _pages.scorer_deferred(reader, scorer_id, f),
        )
        return page(request, "_scorer_deferred.html", data=data, charts={})

    def runs(request: Request) -> Response:
        params = request.query_params
        f = _filters(params)
        outcome = params.get("outcome") or None
        if outcome not in (None, "scored", "failed", "skipped"):
            raise BadRequest(f"outcome {outcome!r}: expected scored, failed or skipped")
        narrow = {
            "scorer": params.get("scorer") or None,
            "outcome": outcome,
            "low": _number(params, "min"),
            "high": _number(params, "max"),
        }
        page_no = int(_number(params, "page") or 0)
        with reader.session() as q:
            data = _pages.runs(q, f, page_no, **narrow)
        opts = choices(reader.state())
        query = {k: v for k, v in params.items() if k != "page" and v}
        return page(request, "runs.html", title="Runs", data=data, query=query, choices=opts, charts={})

    def run(request: Request) -> Response:
        run_id = request.path_params["run_id"]
        with reader.session() as q:
            labels = _labelled.run_labels(q, run_id)
            data = _pages.run(q, run_id) or (_pages.unstored_run(run_id) if labels else None)
        if data is None:
            return page(
                request,
                "error.html",
                404,
                title="Not found",
                message=f"no run {run_id!r} in this store",
                charts={},
            )
        return page(
            request,
            "run.html",
            title=f"Run {run_id}",
            data=data,
            labels=labels,
            scorers=sorted({str(r["scorer_id"]) for r in data["records"]}),
            labelling=labelling,
            charts={},
        )

    def agreement(request: Request) -> Response:
        f = _filters(request.query_params)
        state = reader.state()
        data, opts = beside_choices(
            state,
            lambda: labelled(
                state,
                ("agreement-page", f),
                f,
                lambda s: _labelled.agreement_page(reader, f, s.bound, min_labels),
            ),
        )
        return page(
            request,
            "agreement.html",
            title="Agreement",
            data=data,
            query=dict(request.query_params),
            choices=opts,
            charts={},
        )

    def compare(request: Request) -> Response:
        params = request.query_params
        a, b = _side(params, "a"), _side(params, "b")
        state = reader.state()
        opts = choices(state)
        data = (
            None
            if a is None or b is None
            else cached(state, ("compare", a, b), lambda: _pages.compare(reader, a, b))
        )
        return page(
            request,
            "compare.html",
            title="Compare",
            data=data,
            query=dict(params),
            choices=opts,
            charts={} if data is None else {"compare": data["chart"]},
        )

    routes = [
        Route("/", guarded(overview)),
        Route("/fragments/overview", guarded(overview_deferred)),
        Route("/scorers/{scorer_id:path}", guarded(scorer)),
        Route("/fragments/scorers/{scorer_id:path}", guarded(scorer_deferred)),
        Route("/runs", guarded(runs)),
        Route("/runs/{run_id:path}", guarded(run)),
        Route("/compare", guarded(compare)),
        Route("/agreement", guarded(agreement)),
        Mount("/static", StaticFiles(directory=STATIC), name="static"),
    ]
    if labelling is not None:

        def refused(request: Request, why: Refused) -> Response:
            return page(request, "error.html", why.status, title="Not written", message=str(why), charts={})

        def written() -> None:
            writes[0] += 1

        routes[-1:-1] = label_routes(reader, labelling, refused, written)

    @contextlib.asynccontextmanager
    async def lifespan(app: Any) -> AsyncIterator[None]:
        yield
        reader.close()  # a .jsonl store's temporary copy is removed

    app = Starlette(routes=routes, lifespan=lifespan)
    app.state.display = reader.display
    return app


#: Scripts and styles from this app only (the JSON data elements are not executed).
_CSP = "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; object-src 'none'"


def _moment(value: str | None, name: str) -> datetime | None:
    from agentevals._evals._report import parse_since

    if not value:
        return None
    try:
        return parse_since(value)
    except ValueError:
        raise BadRequest(
            f"{name} {value!r}: expected a duration like 7d or 24h, or a date like 2026-01-31"
        ) from None


def _filters(params: Any, prefix: str = "", *, until: bool = True) -> Filters:
    return Filters(
        since=_moment(params.get(f"{prefix}since"), f"{prefix}since"),
        until=_moment(params.get(f"{prefix}until"), f"{prefix}until") if until else None,
        entity=params.get(f"{prefix}entity") or None,
        eval_id=params.get(f"{prefix}eval") or None,
        source=_source(params.get(f"{prefix}source") or None, f"{prefix}source"),
    )


def _source(value: str | None, name: str) -> str | None:
    if value is None or value in SOURCES:
        return value
    raise BadRequest(
        f"{name} {value!r}: expected one of {', '.join(SOURCES)} (or none: every source but canary)"
    )


def _side(params: Any, prefix: str) -> Filters | None:
    f = _filters(params, f"{prefix}_")
    return None if f == Filters() else f


def _bucket(value: str) -> Bucket:
    for bucket in BUCKETS:
        if value == bucket:
            return bucket
    raise BadRequest(f"bucket {value!r}: expected one of {', '.join(BUCKETS)}")


def _number(params: Any, name: str) -> float | None:
    value = params.get(name)
    if not value:
        return None
    try:
        return float(value)
    except ValueError:
        raise BadRequest(f"{name} {value!r}: expected a number") from None


def serve(
    address: str,
    *,
    host: str = HOST,
    port: int = PORT,
    table: str = "agentevals_scores",
    settings: _pages.Settings | None = None,
    labeller: str | None = None,
    min_labels: int = MIN_LABELS_PER_CLASS,
) -> None:
    """Serve the app until interrupted (Ctrl-C); in labels mode when ``labeller`` is given (``''``:
    unnamed)."""
    import uvicorn

    labelling = None if labeller is None else Labelling.listening_on(host, labeller)
    app = create_app(address, table=table, settings=settings, labelling=labelling, min_labels=min_labels)
    mode = "" if labelling is None else ", labels mode"
    print(f"agentevals view: {app.state.display} on http://{host}:{port}/{mode} (Ctrl-C to stop)")
    if labelling is not None and labelling.hosts is None:
        print(f"agentevals view: anyone who can reach {host}:{port} can write labels", file=sys.stderr)
    uvicorn.run(app, host=host, port=port, log_level="warning")
