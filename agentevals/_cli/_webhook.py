"""One JSON alert POSTed to a webhook: a failed delivery is logged, never raised."""

from __future__ import annotations

import http.client
import json
import logging
import urllib.parse
import urllib.request
from collections.abc import Mapping
from typing import Any

logger = logging.getLogger("agentevals.canary")

TIMEOUT = 10.0
"""Seconds a POST may take, connection included."""


def check_webhook(url: str) -> str:
    """``url`` when it is an http(s) URL with a host, else ``ValueError`` saying what is expected."""
    parts = urllib.parse.urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(
            f"{shown(url)!r}: expected an http:// or https:// URL, e.g. https://hooks.example.com/x"
        )
    return url


def shown(url: str) -> str:
    """The scheme and host of ``url``: its path and query often hold the hook's secret."""
    parts = urllib.parse.urlsplit(url)
    host = parts.hostname or ""
    return f"{parts.scheme}://{host}{f':{parts.port}' if parts.port else ''}" if parts.scheme else "?"


def post_alert(url: str, alert: Mapping[str, Any], *, timeout: float = TIMEOUT) -> bool:
    """POST ``alert`` as JSON to ``url``; whether the receiver answered 2xx (a failure is logged)."""
    request = urllib.request.Request(
        url,
        data=json.dumps(alert).encode(),
        headers={"Content-Type": "application/json", "User-Agent": "agentevals-canary"},
        method="POST",
    )
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            response.read()
    except (OSError, ValueError, http.client.HTTPException) as err:  # HTTP errors and timeouts are OSErrors
        logger.error("agentevals canary: the alert to %s was not delivered: %s", shown(url), err)
        return False
    return True
