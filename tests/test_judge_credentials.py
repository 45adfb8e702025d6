"""A judge's credentials checked without LiteLLM for the common providers, and by LiteLLM (off the
caller's thread, inside an engine) for the others."""

from __future__ import annotations

import logging
import threading

import pytest

from agentevals import Judge, PromptStep, ScoringEngine, create_scorer
from agentevals._scoring._judge import _litellm
from agentevals._scoring._judge._credentials import PROVIDER_KEYS, check_credentials, provider_of
from agentevals.engine import ExitOptions
from agentevals.sinks import MemorySink

KEYS = sorted({name for sets in PROVIDER_KEYS.values() for group in sets for name in group})


@pytest.fixture
def no_keys(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    for name in KEYS:
        monkeypatch.delenv(name, raising=False)
    return monkeypatch


@pytest.mark.parametrize(
    ("model", "message"),
    [
        ("openai/gpt-4o-mini", "needs OPENAI_API_KEY in"),
        ("gpt-4o-mini", "needs OPENAI_API_KEY in"),
        ("anthropic/claude-3-5-haiku-latest", "needs ANTHROPIC_API_KEY or ANTHROPIC_AUTH_TOKEN in"),
        ("claude-3-5-haiku-latest", "needs ANTHROPIC_API_KEY or ANTHROPIC_AUTH_TOKEN in"),
        ("gemini/gemini-2.0-flash", "needs GEMINI_API_KEY or GOOGLE_API_KEY in"),
        ("bedrock/anthropic.claude-3", "needs AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY or AWS_PROFILE"),
        ("groq/llama-3.1-8b-instant", "needs GROQ_API_KEY in"),
        ("together_ai/meta-llama/Llama-3-8b", "needs TOGETHERAI_API_KEY or TOGETHER_AI_API_KEY"),
    ],
)
def test_a_missing_key_is_named_with_how_to_fix_it(
    no_keys: pytest.MonkeyPatch, model: str, message: str
) -> None:
    with pytest.raises(ValueError, match=r"in the environment \(or pass Judge\(api_key=\.\.\.\)\)") as info:
        check_credentials(model, api_base=None, has_key=False)
    assert f"judge model {model!r} {message}" in str(info.value)


def test_a_key_in_the_environment_or_given_settles_the_check(no_keys: pytest.MonkeyPatch) -> None:
    assert check_credentials("mistral/mistral-small", api_base=None, has_key=True)
    no_keys.setenv("MISTRAL_API_KEY", "k")
    assert check_credentials("mistral/mistral-small", api_base=None, has_key=False)
    no_keys.setenv("AWS_ACCESS_KEY_ID", "id")
    with pytest.raises(ValueError, match="AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY"):  # half a pair
        check_credentials("bedrock/anthropic.claude-3", api_base=None, has_key=False)
    no_keys.setenv("AWS_PROFILE", "dev")
    assert check_credentials("bedrock/anthropic.claude-3", api_base=None, has_key=False)
    no_keys.setenv("OPENAI_API_KEY", "")
    with pytest.raises(ValueError, match="OPENAI_API_KEY"):  # an empty key is no key
        check_credentials("openai/gpt-4o-mini", api_base=None, has_key=False)


def test_an_api_base_does_not_replace_an_openai_key(no_keys: pytest.MonkeyPatch) -> None:
    with pytest.raises(ValueError, match=r"api_base='http://127.0.0.1:8000/v1' does not replace the key"):
        check_credentials("openai/my-model", api_base="http://127.0.0.1:8000/v1", has_key=False)


@pytest.mark.parametrize(
    "model", ["ollama/llama3", "ollama_chat/llama3", "hosted_vllm/my-model", "vertex_ai/gemini-pro"]
)
def test_local_servers_and_ambient_credentials_need_no_key(no_keys: pytest.MonkeyPatch, model: str) -> None:
    assert check_credentials(model, api_base=None, has_key=False)


def test_models_the_table_cannot_settle_are_left_to_litellm(no_keys: pytest.MonkeyPatch) -> None:
    no_keys.setenv("OPENAI_API_KEY", "k")
    assert not check_credentials("gpt-4o-mini", api_base=None, has_key=False)  # is it a real model name?
    assert not check_credentials("replicate/meta/llama-3", api_base=None, has_key=False)
    assert not check_credentials("gpt4-nonsense", api_base=None, has_key=False)
    assert provider_of("gpt4-nonsense") == (None, False)


def test_the_table_names_providers_litellm_routes_to() -> None:
    lm = _litellm.litellm()
    for provider in PROVIDER_KEYS:
        assert lm.get_llm_provider(f"{provider}/some-model")[1] == provider


def test_inside_deferred_checks_a_litellm_check_is_left_for_later() -> None:
    judge = Judge(model="gpt4-nonsense", api_key="k")
    with _litellm.deferred_checks() as later:
        judge.check()
    assert len(later) == 1
    with pytest.raises(ValueError, match="is not one LiteLLM can route"):
        later[0]()


def test_an_engine_logs_a_model_litellm_cannot_route_from_its_own_thread() -> None:
    scorer = create_scorer(id="odd", judge=Judge(model="gpt4-nonsense", api_key="k")).generate_score(
        PromptStep(description="score", create_prompt=lambda run, **_: "p")
    )
    logged = threading.Event()
    errors: list[logging.LogRecord] = []

    class Seen(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            errors.append(record)
            logged.set()

    seen = Seen(logging.ERROR)
    engine_logger = logging.getLogger("agentevals.engine")
    engine_logger.addHandler(seen)
    try:
        # Does not raise.
        engine = ScoringEngine([scorer], sinks=[MemorySink()], exit=ExitOptions(handle_sigterm=False))
        assert logged.wait(120)
        engine.shutdown(timeout=30)
    finally:
        engine_logger.removeHandler(seen)
    assert errors[0].threadName == "agentevals-litellm-warm-up"  # its own thread, once LiteLLM is in
    assert "scorer 'odd' cannot score: judge model 'gpt4-nonsense' is not one LiteLLM can route" in (
        errors[0].getMessage()
    )
