"""``Judge``: an LLM used by prompt steps, with retries, a timeout and a concurrency limit."""

from __future__ import annotations

import asyncio
import time
import weakref
from collections.abc import Mapping
from contextlib import AbstractAsyncContextManager, nullcontext
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import BaseModel, SecretStr
from tenacity import (
    AsyncRetrying,
    RetryCallState,
    retry_if_exception,
    stop_after_attempt,
    wait_exponential_jitter,
)

from agentevals._model._errors import JudgeError, JudgeOutputError
from agentevals._model._result import JudgeCall
from agentevals._scoring._judge import _litellm
from agentevals._scoring._judge._parse import ReplyCutOff, ReplyParseError, parse_reply
from agentevals._scoring._judge._quiet import quiet_litellm
from agentevals._scoring._judge._request import build_request, with_feedback
from agentevals._scoring._judge._retries import RETRIES, local_cause
from agentevals._scoring._judge._scope import Ticket, active_limits
from agentevals._scoring._judge._secrets import (
    active_secrets,
    conceal,
    mask_exception,
    mask_text,
    secret_values,
)
from agentevals._scoring._judge._structured import (
    Mode,
    StructuredOutput,
    advice,
    auto_mode,
    check_mode,
    mode_arguments,
    refusal_advice,
)

#: Characters of a judge's reply a score record keeps (``judge_replies``); the rest is cut with a marker.
REPLY_LIMIT = 20_000
#: The reply cap ``max_tokens="auto"`` sends for JSON: room for a long list of verdicts, a bound on a model
#: that never stops.
AUTO_MAX_TOKENS = 2048
#: The reply cap ``max_tokens="auto"`` sends for text (a step without a schema: a score's explanation in a
#: few sentences), so that a model that rambles stops within seconds, not minutes.
AUTO_TEXT_MAX_TOKENS = 512
_UNLIMITED: AbstractAsyncContextManager[None] = nullcontext()  # a request outside any engine's limits


@dataclass(frozen=True)
class JudgeReply:
    """What a judge call returned: the validated value (a model instance, or text) and its record;
    ``text`` is the reply as received (the judge's credentials masked).

    >>> reply = JudgeReply(value=None, text="x" * 20_005, call=JudgeCall(step="analyze", model="m"))
    >>> reply.stored_text[-35:]
    'x[... 5 more characters not stored]'
    """

    value: Any
    text: str
    call: JudgeCall

    @property
    def stored_text(self) -> str:
        """``text`` as a record keeps it (:func:`stored_reply`)."""
        return stored_reply(self.text)


def stored_reply(text: str) -> str:
    """A reply as a record keeps it: at most :data:`REPLY_LIMIT` characters, then a marker."""
    if len(text) <= REPLY_LIMIT:
        return text
    return f"{text[:REPLY_LIMIT]}[... {len(text) - REPLY_LIMIT} more characters not stored]"


@dataclass(frozen=True, eq=False)
class Judge:
    """An LLM judge: any LiteLLM model string plus the system instructions for the scorer.

    Calls are retried with exponential backoff and jitter on rate limits, timeouts, connection errors,
    5xx replies and replies that are not valid JSON for the step's schema (the next attempt shows the
    judge its reply and what was wrong with it); ``timeout`` bounds each attempt; at most
    ``max_concurrency`` calls run at once per event loop.

    ``structured_output`` is how the judge asks for JSON: ``"json_schema"`` (OpenAI's JSON schema
    ``response_format``), ``"json_object_schema"`` (``{"type": "json_object", "schema": ...}``, as the
    llama.cpp server takes it), ``"json_object"`` (JSON mode), ``"ollama"`` (Ollama's ``format``) or
    ``"prompt"`` (the schema in the prompt only, which every mode also sends). ``"auto"`` picks
    ``json_schema`` for the models LiteLLM knows to support it and for vLLM and LM Studio, ``ollama`` for
    Ollama, ``json_object_schema`` for other OpenAI-compatible servers (``openai/...`` with an
    ``api_base``) and llamafile, and the prompt alone for the rest. ``max_tokens`` caps each reply
    (``"auto"``: 2048 tokens for JSON, 512 for text, and no cap for the reasoning models LiteLLM knows,
    whose reasoning counts against it; ``None``: no cap; a cap in ``completion_kwargs`` wins).

    ``api_key`` is kept as a ``SecretStr``, and so are the credential entries of ``completion_kwargs``
    (``*_key``, ``*token*``, ``*secret*``, ``password``, ``vertex_credentials``, and headers such as
    ``Authorization`` or ``x-api-key`` in ``extra_headers``): they are revealed only to the LiteLLM
    call, and masked in the repr, in error messages, call records and the judge's log lines.

    >>> judge = Judge(model="openai/gpt-4o-mini", instructions="You grade answers strictly.")
    >>> judge.max_attempts
    4
    >>> Judge(model="openai/gpt-4o-mini", api_key="sk-123").api_key
    SecretStr('**********')
    """

    model: str
    instructions: str = ""
    temperature: float | None = 0.0
    timeout: float = 60.0
    max_attempts: int = 4
    backoff: float = 0.5
    max_backoff: float = 8.0
    jitter: float = 0.25
    max_concurrency: int = 8
    api_base: str | None = None
    api_key: SecretStr | str | None = None
    structured_output: StructuredOutput = "auto"
    max_tokens: int | Literal["auto"] | None = "auto"
    completion_kwargs: Mapping[str, Any] = field(default_factory=dict)
    _limits: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Semaphore] = field(
        default_factory=weakref.WeakKeyDictionary, init=False, repr=False, compare=False
    )

    def __post_init__(self) -> None:
        if isinstance(self.api_key, str):
            object.__setattr__(self, "api_key", SecretStr(self.api_key))
        elif self.api_key is not None and not isinstance(self.api_key, SecretStr):
            raise TypeError("Judge(api_key=...) must be a string (or a pydantic SecretStr)")
        if not isinstance(self.completion_kwargs, Mapping):
            raise TypeError("Judge(completion_kwargs=...) must be a mapping of litellm.acompletion arguments")
        object.__setattr__(self, "completion_kwargs", conceal(self.completion_kwargs))
        if not isinstance(self.model, str) or not self.model.strip():
            raise ValueError("Judge(model=...) needs a LiteLLM model string such as 'openai/gpt-4o-mini'")
        if not isinstance(self.instructions, str):
            raise TypeError("Judge(instructions=...) must be a string (the judge's system prompt)")
        for name in ("timeout", "backoff", "max_backoff"):
            if not getattr(self, name) > 0:
                raise ValueError(f"Judge({name}=...) must be > 0, got {getattr(self, name)!r}")
        check_mode(self.structured_output)
        if self.max_tokens not in ("auto", None) and (
            not isinstance(self.max_tokens, int) or isinstance(self.max_tokens, bool) or self.max_tokens < 1
        ):
            raise ValueError(
                f"Judge(max_tokens=...) must be an int >= 1, 'auto' or None, got {self.max_tokens!r}"
            )
        if self.jitter < 0:
            raise ValueError(f"Judge(jitter=...) must be >= 0, got {self.jitter!r}")
        for name in ("max_attempts", "max_concurrency"):
            if not isinstance(getattr(self, name), int) or getattr(self, name) < 1:
                raise ValueError(f"Judge({name}=...) must be an int >= 1, got {getattr(self, name)!r}")

    @classmethod
    def of(cls, judge: Judge | Mapping[str, Any] | str | None) -> Judge | None:
        """Accept a ``Judge``, a mapping of its fields, or a bare model string."""
        if judge is None or isinstance(judge, Judge):
            return judge
        if isinstance(judge, str):
            return cls(model=judge)
        if isinstance(judge, Mapping):
            return cls(**dict(judge))
        raise TypeError(f"judge must be a Judge, a dict of Judge fields or a model string, not {judge!r}")

    async def complete(
        self,
        prompt: str,
        *,
        schema: type[BaseModel] | None = None,
        step: str = "judge",
    ) -> JudgeReply:
        """Send ``prompt``; return the reply validated against ``schema`` (or the text if no schema).

        Inside a :class:`~agentevals.ScoringEngine` with budgets or a breaker, the engine's limits are
        asked first (a ``SkipRun`` when a budget is spent or the model's breaker is open) and told the
        call's reported usage and outcome after.
        """
        limits = active_limits.get()
        if limits is None:
            return await self._masked(prompt, schema, step, None)
        ticket = await limits.admit(self.model, self.api_base)
        try:
            reply = await self._masked(prompt, schema, step, ticket)
        except BaseException as err:
            ticket.close(err)
            raise
        ticket.close(None)
        return reply

    async def _masked(
        self, prompt: str, schema: type[BaseModel] | None, step: str, ticket: Ticket | None
    ) -> JudgeReply:
        secrets = self._secret_values()
        if not secrets:
            return await self._complete(prompt, schema, step, secrets, ticket)
        token = active_secrets.set(secrets)  # for the log filter on LiteLLM's and the SDK's loggers
        try:
            return await self._complete(prompt, schema, step, secrets, ticket)
        finally:
            active_secrets.reset(token)

    async def _complete(
        self,
        prompt: str,
        schema: type[BaseModel] | None,
        step: str,
        secrets: tuple[str, ...],
        ticket: Ticket | None,
    ) -> JudgeReply:
        started = time.perf_counter()
        mode = self.output_mode()
        request = build_request(
            model=self.model,
            instructions=self.instructions,
            prompt=prompt,
            schema=schema,
            output=mode_arguments(mode, schema) if schema is not None else {},
            max_tokens=self._reply_cap(text=schema is None),
            temperature=self.temperature,
            timeout=self.timeout,
            api_base=self.api_base,
            api_key=self.api_key,
            extra=dict(self.completion_kwargs),
        )
        usage = [0, 0]
        costs: list[float] = []
        attempts = 0
        last_text: str | None = None
        sending = request  # after an invalid reply, the request with that reply and what was wrong

        async def attempt() -> tuple[Any, str]:
            nonlocal attempts, last_text, sending
            attempts += 1
            async with self._limit(), ticket.sending() if ticket is not None else _UNLIMITED:
                async with asyncio.timeout(self.timeout + 5.0):  # no extra task per call, unlike wait_for
                    with quiet_litellm():
                        response = await _litellm.acompletion(sending)
            prompt_tokens, completion_tokens = _litellm.usage_of(response)
            usage[0] += prompt_tokens
            usage[1] += completion_tokens
            cost = _litellm.cost_of(response)
            if cost is not None:
                costs.append(cost)
            if ticket is not None:  # the provider's own figures, before a test double relabels them
                ticket.add(prompt_tokens + completion_tokens, cost)
            text = _litellm.reply_text(response)
            if text is not None and secrets:
                text = mask_text(text, secrets)  # a reply that echoes the key must not store it
            last_text = text
            if schema is None:
                if text is None or not text.strip():
                    raise ReplyParseError("the judge returned an empty reply")
                return text.strip(), text
            try:
                return parse_reply(text, schema), text or ""
            except ReplyParseError as err:
                if _litellm.finish_reason(response) == "length":
                    raise self._cut_off(request) from err
                if err.problem and text:
                    sending = with_feedback(request, text, err.problem)
                raise

        def record(ok: bool, error: str | None = None) -> JudgeCall:
            return self._recorded(
                JudgeCall(
                    step=step,
                    model=self.model,
                    attempts=attempts,
                    duration_ms=(time.perf_counter() - started) * 1000,
                    prompt_tokens=usage[0],
                    completion_tokens=usage[1],
                    cost_usd=sum(costs) if costs else None,
                    ok=ok,
                    error=error,
                )
            )

        retryable = (*_litellm.retryable_errors(), ReplyParseError)
        retrying = AsyncRetrying(
            retry=retry_if_exception(
                lambda err: (
                    isinstance(err, retryable)
                    and not isinstance(err, ReplyCutOff)
                    and local_cause(err) is None
                )
            ),
            wait=wait_exponential_jitter(multiplier=self.backoff, max=self.max_backoff, jitter=self.jitter),
            stop=stop_after_attempt(self.max_attempts),
            before_sleep=lambda state: self._log_retry(state, secrets),
            reraise=True,
        )
        try:
            outcome: tuple[Any, str] = await retrying(attempt)
        except ReplyParseError as err:
            mask_exception(err, secrets)
            hint = (
                ""
                if schema is None or isinstance(err, ReplyCutOff)
                else f"; {advice(mode, self.structured_output == 'auto')}"
            )
            raise JudgeOutputError(
                f"judge {self.model!r} gave no valid output after {attempts} attempt(s): {err}{hint}",
                model=self.model,
                attempts=attempts,
                raw_output=last_text,
                call=record(False, str(err)),
            ) from err
        except Exception as err:
            # Providers echo a bad key ("Incorrect API key provided: sk-..."): masked in the exception
            # itself (it stays chained), so in the message, the call record and any traceback.
            mask_exception(err, secrets)
            local = local_cause(err)
            if local is not None:
                detail = mask_text(f"{type(local).__name__}: {local}", secrets)
                raise self._unsendable(detail, attempts, record(False, detail)) from local
            error = mask_text(_litellm.describe_error(err), secrets)
            refused = schema is not None and mode != "prompt" and _litellm.is_bad_request(err)
            hint = f" ({refusal_advice(mode, self.structured_output == 'auto')})" if refused else ""
            raise JudgeError(
                f"judge {self.model!r} failed after {attempts} attempt(s): {error}{hint}",
                model=self.model,
                attempts=attempts,
                call=record(False, error),
            ) from err
        return JudgeReply(value=outcome[0], text=outcome[1], call=record(True))

    def output_mode(self) -> Mode:
        """The structured output mode the judge's calls use: ``structured_output``, or what ``"auto"``
        picks for the model and ``api_base``.

        >>> Judge(model="ollama_chat/qwen3").output_mode()
        'ollama'
        >>> Judge(model="ollama_chat/qwen3", structured_output="json_object").output_mode()
        'json_object'
        """
        if self.structured_output != "auto":
            return self.structured_output
        return auto_mode(self.model, self.api_base, _litellm.supports_native_schema)

    def _reply_cap(self, *, text: bool) -> int | None:
        if self.max_tokens != "auto":
            return self.max_tokens
        if _litellm.is_reasoning_model(self.model):
            return None
        return AUTO_TEXT_MAX_TOKENS if text else AUTO_MAX_TOKENS

    def _cut_off(self, request: Mapping[str, Any]) -> ReplyCutOff:
        cap = request.get("max_tokens") or request.get("max_completion_tokens")
        where = f"the cap of {cap} tokens" if cap else "the provider's token cap"
        return ReplyCutOff(
            f"the reply stopped at {where} (finish_reason 'length') before its JSON was complete; "
            "raise Judge(max_tokens=...)"
        )

    def _unsendable(self, detail: str, attempts: int, call: JudgeCall) -> JudgeError:
        """The request could not be sent: no fault of the judge (raised from the local error, which the
        breaker does not count) and nothing a retry would change."""
        return JudgeError(
            f"judge {self.model!r}: the request could not be sent ({detail}); it "
            "holds text UTF-8 cannot carry (a lone surrogate such as '\\ud800') or a value that is not "
            "JSON: check the values in Judge(completion_kwargs=...)",
            model=self.model,
            attempts=attempts,
            call=call,
        )

    def check(self) -> None:
        """Verify the configuration without calling the model: LiteLLM can route ``model`` and the
        provider's credentials are set (``api_key`` or the environment). Raises ``ValueError`` that
        says how to fix it; the CLI and the engine call it before the first run.

        >>> Judge(model="openai/gpt-4o-mini", api_key="sk-test").check()
        """
        _litellm.check_model(self.model, api_base=self.api_base, has_key=self._has_key())

    def _has_key(self) -> bool:
        kwargs = self.completion_kwargs
        return self.api_key is not None or any(k in kwargs for k in ("api_key", "azure_ad_token"))

    def _recorded(self, call: JudgeCall) -> JudgeCall:
        """The call as records show it; a test double reports itself instead of a billable model."""
        return call

    def _limit(self) -> asyncio.Semaphore:
        loop = asyncio.get_running_loop()
        limit = self._limits.get(loop)
        if limit is None:
            limit = self._limits[loop] = asyncio.Semaphore(self.max_concurrency)
        return limit

    def _secret_values(self) -> tuple[str, ...]:
        """The plain values of this judge's credentials, to mask in every text that leaves it."""
        return secret_values(self.api_key, self.completion_kwargs)

    def _log_retry(self, state: RetryCallState, secrets: tuple[str, ...]) -> None:
        outcome = state.outcome
        error = outcome.exception() if outcome is not None else None
        if error is None:
            return
        mask_exception(error, secrets)
        detail = mask_text(_litellm.describe_error(error), secrets)
        RETRIES.note(self.model, state.attempt_number, self.max_attempts, type(error).__name__, detail)
