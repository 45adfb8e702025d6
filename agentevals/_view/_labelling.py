"""``agentevals view --labels``: the two POST routes that add and delete people's labels from the run
page, and what each checks before it writes.

A write needs the per-process random token the served run page carries (a form field), an ``Origin``
and a ``Referer`` naming this viewer when the browser sends them, and, when the viewer listens on
loopback, a loopback host name (a page of another site whose name was pointed at 127.0.0.1 cannot
write). After a write the browser is sent back to the run page (303: a reload does not post again).
Without ``--labels`` the routes do not exist.
"""

from __future__ import annotations

import ipaddress
import secrets
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qs, quote, urlsplit

from agentevals._trust._labels import Labels
from agentevals._view._queries import Reader

#: The host names of this machine a viewer listening on loopback answers writes for.
LOOPBACK_NAMES = ("127.0.0.1", "localhost", "::1")
#: The largest form a write accepts (a label and its note).
MAX_FORM = 64 * 1024
_DEFAULT_PORTS = {"http": 80, "https": 443}


@dataclass(frozen=True)
class Labelling:
    """The viewer's labels mode: who labels (``labeller``, ``''`` when unknown), the token its pages
    carry (new per process) and the host names a write may address (``None``: any)."""

    labeller: str = ""
    hosts: tuple[str, ...] | None = LOOPBACK_NAMES
    token: str = field(default_factory=lambda: secrets.token_urlsafe(32), repr=False)

    @classmethod
    def listening_on(cls, host: str, labeller: str = "") -> Labelling:
        """The labels mode of a viewer listening on ``host``: writes to loopback names only when it is
        a loopback address."""
        return cls(labeller=labeller, hosts=LOOPBACK_NAMES if _loopback(host) else None)


class Refused(Exception):
    """A write the viewer will not make: its status and the reason shown."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


def label_routes(
    reader: Reader,
    labelling: Labelling,
    refused: Callable[[Any, Refused], Any],
    written: Callable[[], None],
) -> list[Any]:
    """``POST /labels`` (add a label of a run) and ``POST /labels/delete``: both answer a refused write
    with ``refused(request, why)`` and call ``written()`` after a write."""
    from starlette.concurrency import run_in_threadpool
    from starlette.requests import Request
    from starlette.responses import RedirectResponse, Response
    from starlette.routing import Route

    def write(action: Callable[[Labels, dict[str, str]], str]) -> Callable[[Request], Any]:
        async def endpoint(request: Request) -> Response:
            try:
                form = await _form(request)
                check(request, form, labelling)
                run_id = await run_in_threadpool(reader.with_store, lambda store: action(Labels(store), form))
            except Refused as why:
                result: Response = refused(request, why)
                return result
            written()
            return RedirectResponse(f"/runs/{quote(run_id, safe='')}#labels", status_code=303)

        return endpoint

    def add(labels: Labels, form: dict[str, str]) -> str:
        run_id, verdict = form.get("run_id", ""), form.get("value", "")
        value: float | str = verdict
        if verdict == "score":
            try:
                value = float(form.get("score", "").strip())
            except ValueError:
                raise Refused(
                    400, f"score {form.get('score', '')!r}: expected a number from 0 to 1"
                ) from None
        note = form.get("note", "").strip() or None
        try:
            labels.add(run_id, form.get("name", ""), value, labeller=labelling.labeller, note=note)
        except ValueError as err:
            raise Refused(400, str(err)) from None
        return run_id

    def delete(labels: Labels, form: dict[str, str]) -> str:
        run_id = form.get("run_id", "")
        if not run_id:
            raise Refused(400, "which run's page to go back to: the form has no run_id")
        labels.delete(form.get("label_id", ""))  # one deleted already (a second click) is no error
        return run_id

    return [
        Route("/labels", write(add), methods=["POST"]),
        Route("/labels/delete", write(delete), methods=["POST"]),
    ]


def check(request: Any, form: dict[str, str], labelling: Labelling) -> None:
    """Raise :class:`Refused` (403) unless ``request`` addresses an allowed host, any ``Origin`` and
    ``Referer`` name this viewer, and ``form`` carries the process' token."""
    host = request.headers.get("host", "")
    here = _authority(f"{request.url.scheme}://{host}")
    if labelling.hosts is not None and (here is None or here[0] not in labelling.hosts):
        raise Refused(403, f"writes go to {', '.join(labelling.hosts)} only, not {host!r}")
    for header in ("origin", "referer"):
        sent = request.headers.get(header)
        if sent is not None and _authority(sent) != here:
            raise Refused(
                403,
                f"a write from another site ({header} {sent!r}): labels are written from this viewer's pages",
            )
    if not secrets.compare_digest(form.get("csrf", "").encode(), labelling.token.encode()):
        raise Refused(
            403, "the page's token is missing or from another run of agentevals view: reload the run page"
        )


async def _form(request: Any) -> dict[str, str]:
    """The request's url-encoded form (the last value of a repeated field); :class:`Refused` for
    another body or one over :data:`MAX_FORM` bytes."""
    kind = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if kind != "application/x-www-form-urlencoded":
        raise Refused(415, "a label is posted as a form (application/x-www-form-urlencoded)")
    body = b""
    async for chunk in request.stream():
        body += chunk
        if len(body) > MAX_FORM:
            raise Refused(413, f"a label's form is at most {MAX_FORM // 1024} KiB")
    fields = parse_qs(body.decode("utf-8", errors="replace"), keep_blank_values=True)
    return {name: values[-1] for name, values in fields.items()}


def _authority(url: str) -> tuple[str, int] | None:
    """``(host name, port)`` of ``url`` (its scheme's port when it names none); ``None`` when it has no
    host (``Origin: null``)."""
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        return None
    if not parts.hostname:
        return None
    return parts.hostname, port if port is not None else _DEFAULT_PORTS.get(parts.scheme, 0)


def _loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False
