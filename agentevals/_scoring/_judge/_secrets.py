"""A judge's credentials: held as pydantic secrets, shown masked, revealed only for the LiteLLM call.

``conceal`` wraps the credential-looking entries of a settings mapping (``api_key``, ``*_key``,
``*token*``, ``*secret*``, ``password``, ``Authorization`` headers, ``vertex_credentials``...) in
``SecretStr`` / ``Secret``; ``reveal`` undoes it at the moment of the call. Texts that leave the judge
(error messages, call records, log lines, the reply) go through ``mask_text`` with the known values,
since providers echo a bad key back ("Incorrect API key provided: sk-...").

>>> settings = conceal({"extra_headers": {"Authorization": "Bearer sk-live-123"}, "top_p": 0.5})
>>> settings
{'extra_headers': {'Authorization': SecretStr('**********')}, 'top_p': 0.5}
>>> reveal(settings)["extra_headers"]["Authorization"]
'Bearer sk-live-123'
>>> mask_text("bad key sk-live-123", secret_values(settings))
'bad key **********'
"""

from __future__ import annotations

import contextlib
import contextvars
import logging
import re
from collections.abc import Iterable, Mapping
from typing import Any

from pydantic import Secret, SecretStr

from agentevals._model._redact import active_redactor, redact_text

MASK = "**********"

#: Shorter values are not searched for in texts: they would mask ordinary words ("none", "EMPTY").
MIN_SECRET_LENGTH = 8
#: Keys that local servers take in place of a real one: not secrets, and masking them would hide words.
PLACEHOLDER_KEYS = frozenset({"not-needed", "sk-no-key-required", "placeholder", "anything", "sk-dummy"})

_SECRET_NAME = re.compile(
    r"(^|[-_])key($|[-_])|api-?key|token|secret|password|passwd|authorization|credential|cookie|signature",
    re.IGNORECASE,
)
_COUNT_NAME = re.compile(r"tokens$", re.IGNORECASE)  # max_tokens & co are counts, not credentials
_AUTH_SCHEMES = frozenset({"bearer", "basic", "token", "digest", "apikey"})


def is_secret_name(name: object) -> bool:
    """Whether a setting or header called ``name`` carries a credential."""
    return isinstance(name, str) and bool(_SECRET_NAME.search(name)) and not _COUNT_NAME.search(name)


def _hide(value: Any) -> Any:
    if value is None or isinstance(value, bool | int | float | SecretStr | Secret):
        return value
    return SecretStr(value) if isinstance(value, str) else Secret[Any](value)


def conceal(settings: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of ``settings`` whose credential entries (at any depth of nested mappings) are secrets."""
    return {
        key: _hide(value) if is_secret_name(key) else conceal(value) if isinstance(value, Mapping) else value
        for key, value in settings.items()
    }


def redact(value: Any) -> Any:
    """``value`` with credential entries of nested mappings replaced by ``MASK`` (for display)."""
    if isinstance(value, SecretStr | Secret):
        return MASK
    if isinstance(value, Mapping):
        return {k: MASK if is_secret_name(k) and v else redact(v) for k, v in value.items()}
    return value


def reveal(value: Any) -> Any:
    """``value`` with its secrets (at any depth of nested dicts) replaced by their plain values."""
    if isinstance(value, SecretStr | Secret):
        return value.get_secret_value()
    if isinstance(value, dict):
        return {key: reveal(item) for key, item in value.items()}
    return value


def secret_values(*values: Any) -> tuple[str, ...]:
    """The plain texts of the secrets in ``values``, longest first, to mask wherever they appear.

    An ``Authorization: Bearer <token>`` value also yields ``<token>``: providers echo the token alone.
    Values shorter than :data:`MIN_SECRET_LENGTH` and the :data:`PLACEHOLDER_KEYS` of local servers are
    left out: searching for them would mask ordinary words.

    >>> secret_values(SecretStr("none"), SecretStr("sk-proj-abc123"))
    ('sk-proj-abc123',)
    """
    found: set[str] = set()

    def collect(value: Any, hidden: bool) -> None:
        if isinstance(value, SecretStr | Secret):
            collect(value.get_secret_value(), True)
        elif isinstance(value, Mapping):
            for item in value.values():
                collect(item, hidden)
        elif isinstance(value, list | tuple):
            for item in value:
                collect(item, hidden)
        elif hidden and isinstance(value, str):
            found.add(value)
            found.update(p for p in value.split() if p.lower() not in _AUTH_SCHEMES)

    for value in values:
        collect(value, False)
    kept = (s for s in found if len(s) >= MIN_SECRET_LENGTH and s.lower() not in PLACEHOLDER_KEYS)
    return tuple(sorted(kept, key=len, reverse=True))


def mask_text(text: str, secrets: Iterable[str]) -> str:
    """``text`` with every occurrence of each secret replaced by ``MASK``."""
    for secret in secrets:
        if secret in text:
            text = text.replace(secret, MASK)
    return text


def _mask_deep(value: Any, secrets: tuple[str, ...]) -> Any:
    if isinstance(value, str):
        return mask_text(value, secrets)
    if isinstance(value, dict):
        return {key: _mask_deep(item, secrets) for key, item in value.items()}
    if isinstance(value, list):
        return [_mask_deep(item, secrets) for item in value]
    return value


def mask_exception(error: BaseException, secrets: tuple[str, ...]) -> None:
    """Mask ``secrets`` in the message of ``error`` and of its causes, in place.

    LiteLLM's errors keep the provider's text in ``args`` and ``message``; the original exception stays
    chained (``__cause__``) to the ``JudgeError``, so a logged traceback must not show the key either.
    """
    if not secrets:
        return
    seen: set[int] = set()
    current: BaseException | None = error
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        current.args = tuple(mask_text(a, secrets) if isinstance(a, str) else a for a in current.args)
        for name in ("message", "litellm_debug_info", "body"):
            value = getattr(current, name, None)
            if value is not None:
                with contextlib.suppress(AttributeError, TypeError):  # read-only: str() shows args
                    setattr(current, name, _mask_deep(value, secrets))
        current = current.__cause__ or current.__context__


#: The secrets of the judge call running in this context, for the log filter below.
active_secrets: contextvars.ContextVar[tuple[str, ...]] = contextvars.ContextVar(
    "agentevals_judge_secrets", default=()
)

#: Loggers that may log a judge request (headers included: the OpenAI SDK logs its request options at
#: DEBUG) or a provider's error text. A filter on a logger sees only the records logged on it.
REQUEST_LOGGERS = (
    "LiteLLM",
    "LiteLLM Router",
    "LiteLLM Proxy",
    "openai",
    "openai._base_client",
    "httpx",
    "httpcore",
    "agentevals.judge",
)


class MaskingFilter(logging.Filter):
    """Masks credential entries of mapping arguments and the running judge call's secret values; inside
    a ``ScoringEngine`` with ``redact=``, the whole line (requests and replies echo the prompt) also goes
    through the engine's redactor."""

    def filter(self, record: logging.LogRecord) -> bool:
        secrets = active_secrets.get()
        redactor = active_redactor()
        args = record.args
        if args:
            record.args = redact(args) if isinstance(args, Mapping) else tuple(redact(a) for a in args)
        if args or secrets or redactor:
            record.msg, record.args = mask_text(record.getMessage(), secrets), None
        if (secrets or redactor) and record.exc_info and not record.exc_text:
            record.exc_text = mask_text(logging.Formatter().formatException(record.exc_info), secrets)
        if redactor is not None:
            record.msg = redact_text(redactor, record.msg)
            if record.exc_text:
                record.exc_text = redact_text(redactor, record.exc_text)
        return True


_FILTER = MaskingFilter()


def install_log_filter() -> None:
    """Put the masking filter on the loggers that may show a judge request (idempotent)."""
    for name in REQUEST_LOGGERS:
        logger = logging.getLogger(name)
        if _FILTER not in logger.filters:
            logger.addFilter(_FILTER)
