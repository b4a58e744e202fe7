"""The keys and tokens an LLM endpoint is called with, and which ones it lacks.

Keys stay in the environment and are read here, where a client is built, never stored.
Whether an endpoint can be called is known before any request: OpenAI itself (no
``base_url``) needs a key, a ``provider:model`` the key its chat model reads
(``ANTHROPIC_API_KEY``, ...; none for Ollama or at a ``base_url``), a Hugging Face
model id (``hf:REPO``) a token (``HF_TOKEN`` or a saved ``hf auth login``), and an
endpoint whose configuration names ``api_key_env`` needs one of those variables set.
A server at a ``base_url`` given with ``--llm`` (vLLM, Ollama, ...) needs none: it gets
``HUGGINGGPT_LLM_API_KEY`` or ``OPENAI_API_KEY`` when one is set.
"""

from __future__ import annotations

import logging
import time

from langchain_core.messages import BaseMessage
from pydantic import SecretStr

from hugginggpt.tools.env import env
from hugginggpt.tools.errors import Control, Fix, LLMCredentialsError, setting, verbatim
from hugginggpt.tools.llm.config import LLM_KEYS, Endpoint, Role, RoutingConfig
from hugginggpt.tools.llm.providers import (
    ProviderError,
    chat_model,
    is_hf,
    is_local,
    missing_key,
    provider_of,
)
from hugginggpt.tools.llm.records import LLMCall, recorded_request

__all__ = ["api_key", "hf_token", "missing_credentials", "without_missing"]

_log = logging.getLogger("hugginggpt.tools.llm.client")

_HF_TOKENS = ("HF_TOKEN", "HUGGINGFACEHUB_API_TOKEN")


def _first(names: tuple[str, ...]) -> SecretStr | None:
    """The first of these variables that is set, as a secret (never shown: repr, logs)."""
    return next((SecretStr(value) for name in names if (value := env(name))), None)


def _is_hf_model_id(endpoint: Endpoint) -> bool:
    return not endpoint.model.split(":", 1)[1].startswith(("http://", "https://"))


def _is_openai(endpoint: Endpoint) -> bool:
    return provider_of(endpoint.model, endpoint.base_url)[0] == "openai"


def api_key(endpoint: Endpoint) -> SecretStr | None:
    """The key for an endpoint from its ``api_key_env``; for an OpenAI-compatible one,
    else ``OPENAI_API_KEY``, else a placeholder for a server at a base URL that needs
    none (the client insists on one). None: the provider's package reads its own
    variable (``ANTHROPIC_API_KEY``, ...)."""
    if not _is_openai(endpoint):
        return _first(endpoint.api_key_env)
    key = _first(endpoint.api_key_env or (() if endpoint.base_url else ("OPENAI_API_KEY",)))
    return key or (SecretStr("not-needed") if endpoint.base_url else None)


def hf_token(endpoint: Endpoint) -> SecretStr | None:
    """The token for a Hugging Face endpoint (``hf:``): the configured variables,
    ``HF_TOKEN``, else the one ``hf auth login`` saved."""
    token = _first((*endpoint.api_key_env, *_HF_TOKENS))
    if token is None and _is_hf_model_id(endpoint):
        from huggingface_hub import get_token

        saved = get_token()
        token = SecretStr(saved) if saved else None
    return token


def missing_credentials(endpoint: Endpoint) -> Fix | None:
    """What the endpoint lacks to be called, and how to give it; None when nothing (a
    chat-model object the caller built holds its own keys)."""
    if endpoint.chat is not None or is_local(endpoint.model):  # none needed in-process
        return None
    if is_hf(endpoint.model):
        if not _is_hf_model_id(endpoint) or hf_token(endpoint) is not None:
            return None
        return Fix(say=f"{verbatim(endpoint.label)} is a Hugging Face model and needs a token: "
                       "set HF_TOKEN ({}) or log in with `hf auth login`; or give the URL of "
                       "a server of yours ({})",
                   controls=[_export("HF_TOKEN", "hf_..."), setting("llm", "hf:https://...")])
    if not _is_openai(endpoint):
        return _missing_provider_key(endpoint)
    names = endpoint.api_key_env or ("OPENAI_API_KEY",)
    if _first(names) is not None:
        return None
    if endpoint.base_url is None:
        return Fix(say=f"{verbatim(endpoint.label)} is OpenAI's API and needs a key: set "
                       f"{' or '.join(names)} ({{}}), or give {{}} for an OpenAI-compatible "
                       "server (vLLM, Ollama, ...) that needs none",
                   controls=[_export(names[-1], "sk-..."), setting("llm_base_url")])
    if endpoint.api_key_env and endpoint.api_key_env != LLM_KEYS:
        return _reads_its_key(endpoint, names)
    return None


def _export(name: str, value: str = "...") -> Control:
    return Control(kind="variable", name=name, value=value)


def _reads_its_key(endpoint: Endpoint, names: tuple[str, ...]) -> Fix:
    return Fix(say=f"{verbatim(endpoint.label)} reads its key from {' or '.join(names)} (its "
                   "api_key_env), which is not set: {}", controls=[_export(names[0])])


def _missing_provider_key(endpoint: Endpoint) -> Fix | None:
    """What a ``provider:model`` endpoint lacks: its ``api_key_env`` when the
    configuration names one, else the key variable of the provider's chat model (none
    at a base URL, a server of the user's)."""
    if _first(endpoint.api_key_env) is not None:
        return None
    if endpoint.api_key_env and endpoint.api_key_env != LLM_KEYS[:1]:
        return _reads_its_key(endpoint, endpoint.api_key_env)
    if endpoint.base_url:
        return None
    try:
        if variables := missing_key(endpoint.model, None):
            return Fix(say=f"{verbatim(endpoint.label)} needs a key: set "
                           f"{' or '.join(variables)} ({{}})", controls=[_export(variables[0])])
        chat_model(endpoint.model, None, {})
    except ProviderError:
        return None  # said when the client is built, as a configuration error
    except ValueError as exc:  # a chat model that cannot be built from its settings
        return Fix(say=verbatim(f"{endpoint.label} cannot be set up: {exc}"))
    return None


def without_missing(config: RoutingConfig, role: Role, missing: dict[str, Fix], digest: str,
                    messages: list[BaseMessage], calls: list[LLMCall], need: int,
                    turn: int) -> RoutingConfig:
    """The configuration without the endpoints that lack their key or token (no request
    is made to them).

    Raises:
        LLMCredentialsError: none of the role's endpoints has its credentials; each is
            recorded as a failed call, saying what it lacks.
    """
    kept = tuple(e for e in config.endpoints if e.name not in missing)
    if any(role in e.roles for e in kept):
        for why in missing.values():
            _log.warning("LLM endpoint skipped for the %s: %s", role, why)
        return config.model_copy(update={"endpoints": kept})
    error = LLMCredentialsError(role, missing.values())
    for attempt, endpoint in enumerate(config.for_role(role), 1):
        calls.append(LLMCall(
            role=role, llm=endpoint.label, endpoint=endpoint.name, tier=endpoint.tier,
            need=need, turn=turn, attempt=attempt, digest=digest, at=time.time(),
            request=recorded_request(messages), ok=False,
            error=f"not called: {missing[endpoint.name]}"))
    calls[-1] = calls[-1].model_copy(update={"outcome": error.description, "fix": error.fix})
    raise error
