"""A judge's credentials checked from its model string and the environment, without importing LiteLLM
(seconds at every start of an application).

The common providers' keys are in :data:`PROVIDER_KEYS`; a model whose provider is not there is left to
LiteLLM (:func:`check_credentials` returns ``False``).

>>> check_credentials("ollama/llama3", api_base=None, has_key=False)
True
>>> check_credentials("openai/gpt-4o-mini", api_base=None, has_key=True)
True
>>> check_credentials("my-provider/model", api_base=None, has_key=False)
False
"""

from __future__ import annotations

import os
import re

Credentials = tuple[tuple[str, ...], ...]
"""The sets of environment variables one of which must be all set; ``()``: nothing to check."""


def _any_of(*names: str) -> Credentials:
    return tuple((name,) for name in names)


_AWS: Credentials = (
    ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"),
    *_any_of(
        "AWS_PROFILE",
        "AWS_ROLE_ARN",
        "AWS_WEB_IDENTITY_TOKEN_FILE",
        "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI",
        "AWS_CONTAINER_CREDENTIALS_FULL_URI",
    ),
)

#: Provider (the ``provider/`` prefix of a LiteLLM model string) -> where LiteLLM finds its key.
PROVIDER_KEYS: dict[str, Credentials] = {
    "openai": _any_of("OPENAI_API_KEY"),  # also with api_base: the OpenAI SDK refuses to run without one
    "anthropic": _any_of("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN"),
    "azure": (
        *_any_of("AZURE_API_KEY", "AZURE_OPENAI_API_KEY", "AZURE_AD_TOKEN"),
        ("AZURE_CLIENT_ID", "AZURE_CLIENT_SECRET", "AZURE_TENANT_ID"),
    ),
    "gemini": _any_of("GEMINI_API_KEY", "GOOGLE_API_KEY"),
    # Google's application default credentials (a file, a gcloud login or the metadata server).
    "vertex_ai": (),
    "bedrock": _AWS,
    "sagemaker": _AWS,
    "mistral": _any_of("MISTRAL_API_KEY"),
    "groq": _any_of("GROQ_API_KEY"),
    "cohere": _any_of("COHERE_API_KEY", "CO_API_KEY"),
    "cohere_chat": _any_of("COHERE_API_KEY", "CO_API_KEY"),
    "together_ai": _any_of(
        "TOGETHERAI_API_KEY", "TOGETHER_AI_API_KEY", "TOGETHER_API_KEY", "TOGETHER_AI_TOKEN"
    ),
    "fireworks_ai": _any_of(
        "FIREWORKS_AI_API_KEY", "FIREWORKS_API_KEY", "FIREWORKSAI_API_KEY", "FIREWORKS_AI_TOKEN"
    ),
    "deepseek": _any_of("DEEPSEEK_API_KEY"),
    "xai": _any_of("XAI_API_KEY"),
    "openrouter": _any_of("OPENROUTER_API_KEY", "OR_API_KEY"),
    "perplexity": _any_of("PERPLEXITYAI_API_KEY", "PERPLEXITY_API_KEY"),
    "deepinfra": _any_of("DEEPINFRA_API_KEY"),
    "cerebras": _any_of("CEREBRAS_API_KEY"),
    "nvidia_nim": _any_of("NVIDIA_NIM_API_KEY"),
    "huggingface": _any_of("HUGGINGFACE_API_KEY", "HF_TOKEN"),
    # Local servers: no key.
    "ollama": (),
    "ollama_chat": (),
    "hosted_vllm": (),
    "lm_studio": (),
}

#: Model names LiteLLM routes without a prefix, by the provider they belong to; whether LiteLLM knows
#: the exact name is still its to say.
_BARE_NAMES = (
    (re.compile(r"(gpt-|chatgpt-|o[1-9](-|$))"), "openai"),
    (re.compile(r"claude-"), "anthropic"),
)


def provider_of(model: str) -> tuple[str | None, bool]:
    """The provider of ``model`` in :data:`PROVIDER_KEYS` (``None`` if none) and whether the model string
    names it (``provider/model``) rather than leaving it to be inferred from the model name.

    >>> provider_of("anthropic/claude-3-5-haiku-latest"), provider_of("gpt-4o-mini")
    (('anthropic', True), ('openai', False))
    """
    prefix, slash, _ = model.partition("/")
    if slash and prefix in PROVIDER_KEYS:
        return prefix, True
    for pattern, provider in _BARE_NAMES:
        if not slash and pattern.match(model):
            return provider, False
    return None, False


def check_credentials(model: str, *, api_base: str | None, has_key: bool) -> bool:
    """Raise ``ValueError`` (saying how to fix it) when the provider of ``model`` is a known one and
    its key is neither given (``has_key``) nor in the environment. ``True`` when that settles the check;
    ``False`` when LiteLLM must still be asked (an unknown provider, or a model name without one)."""
    provider, named = provider_of(model)
    if provider is None:
        return False
    needed = PROVIDER_KEYS[provider]
    if has_key or not needed or any(all(os.environ.get(name) for name in group) for group in needed):
        return named
    wanted = " or ".join(" and ".join(group) for group in needed)
    raise ValueError(
        f"judge model {model!r} needs {wanted} in the environment (or pass Judge(api_key=...))"
        + ("" if api_base is None else f"; api_base={api_base!r} does not replace the key")
    )
