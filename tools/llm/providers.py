"""LangChain's ``provider:model`` strings: which chat model an endpoint's ``model`` names.

``anthropic:claude-sonnet-4-5``, ``ollama:qwen3:4b``, ``google_genai:gemini-2.5-flash``,
... are resolved by ``init_chat_model`` with the provider's integration package, an
optional extra of this project (``pip install 'hugginggpt[anthropic]'``). A bare model
name (``gpt-4o-mini``), or any name at a ``base_url`` whose prefix is no provider
(``qwen3:4b`` on Ollama's OpenAI-compatible URL), is an OpenAI-compatible endpoint, as
before; ``hf:`` (or ``huggingface:``) is a Hugging Face model or endpoint;
``transformers:REPO`` is a chat model run in this process (:mod:`.local_chat`), this
project's own prefix.

Nothing here names a provider: the providers, their packages and their key variables
come from LangChain (its registry of providers, each chat model's ``lc_secrets``), and
the extra to install from this project's own metadata.
"""

from __future__ import annotations

import importlib.util
import re
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from hugginggpt.tools.env import env
from hugginggpt.tools.errors import Fix, HuggingGPTError, setting
from hugginggpt.tools.extras import extra_of, install_command, missing

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel

__all__ = ["ProviderError", "provider_of", "check_model", "chat_model", "missing_key",
           "is_hf", "is_local", "LOCAL_PREFIX", "is_chat_model", "chat_model_label",
           "SAVED_OBJECT", "saved_object", "structured_method"]

_HF_PREFIXES = ("hf:", "huggingface:")
LOCAL_PREFIX = "transformers:"
"""A chat model run in this process by transformers: ``transformers:Qwen/Qwen3-1.7B``."""
_PREFIX = re.compile(r"([a-z][a-z0-9_-]*):(.+)", re.S)


class ProviderError(HuggingGPTError, ValueError):
    """An endpoint's model names an unknown provider, or one whose package is missing."""


def is_hf(model: str) -> bool:
    """Whether the model is a Hugging Face model or endpoint (``hf:`` or
    ``huggingface:``), served by :mod:`langchain_huggingface` as before."""
    return model.startswith(_HF_PREFIXES)


def is_local(model: str) -> bool:
    """Whether the model runs in this process (``transformers:REPO``), not on a server."""
    return model.startswith(LOCAL_PREFIX)


@lru_cache(maxsize=1)
def _registry() -> dict[str, tuple[str, ...]]:
    """``init_chat_model``'s providers -> (module, class name, ...)."""
    from langchain.chat_models import base

    return dict(getattr(base, "_BUILTIN_PROVIDERS", {}))


def provider_of(model: str, base_url: str | None) -> tuple[str, str]:
    """(provider, model name) for a non-``hf:`` model: ``openai`` for a bare name, or a
    name at a base URL whose prefix is no provider.

    Raises:
        ProviderError: a ``prefix:name`` with no base URL, whose prefix no provider has.
    """
    if is_local(model):
        return "transformers", model[len(LOCAL_PREFIX):]
    found = _PREFIX.fullmatch(model)
    if found is None:
        return "openai", model
    prefix, name = found.group(1).replace("-", "_"), found.group(2)
    if prefix in _registry():
        return prefix, name
    if base_url:  # a model name with a tag, on an OpenAI-compatible server
        return "openai", model
    known = ", ".join(sorted(_registry()))
    raise ProviderError(
        f"unknown LLM provider {found.group(1)!r} in {model!r}: write PROVIDER:MODEL "
        f"(anthropic:claude-sonnet-4-5, ollama:qwen3:4b, ...), with PROVIDER one of "
        f"{known}; or a bare model name for OpenAI (gpt-4o-mini); or hf:REPO_OR_URL",
        fix=Fix(say="for an OpenAI-compatible server, give {}",
                controls=[setting("llm_base_url")]))


def _package(provider: str) -> str:
    return _registry()[provider][0].split(".")[0].replace("_", "-")


def check_model(model: str, base_url: str | None) -> None:
    """Raise, before any request, for a model no installed package can serve.

    Raises:
        ProviderError: an unknown provider, or a provider whose package is missing (the
            message says what to install).
    """
    if is_hf(model) or ":" not in model:
        return
    if is_local(model):
        _check_local(model, base_url)
        return
    provider, _ = provider_of(model, base_url)
    package = _package(provider)
    if importlib.util.find_spec(package.replace("-", "_")) is not None:
        return
    extra = extra_of(package)
    install = install_command(extra) if extra else f"pip install {package}"
    raise ProviderError(f"the LLM {model!r} needs the {package} package: {install}")


def _chat_class(provider: str) -> Any:
    """The chat model class ``init_chat_model`` builds for a provider."""
    module, class_name = _registry()[provider][:2]
    return getattr(importlib.import_module(module), class_name)


def _check_local(model: str, base_url: str | None) -> None:
    repo = model[len(LOCAL_PREFIX):]
    if base_url:
        raise ProviderError(f"{model!r} runs in this process: it takes no base URL")
    if not re.fullmatch(r"[\w.-]+/[\w.-]+|/.+", repo):
        raise ProviderError(f"{model!r}: write transformers:ORG/NAME, a Hub model id "
                            "(transformers:Qwen/Qwen3-1.7B)")
    if lacking := missing("local-llm"):
        raise ProviderError(f"the LLM {model!r} runs here with transformers and plans under "
                            f"a grammar (xgrammar); {', '.join(lacking)} not installed: "
                            f"{install_command('local-llm')}")


def _accepted(cls: type, options: dict[str, Any]) -> dict[str, Any]:
    """The options the chat model class has fields for (by name or alias); a timeout
    goes into ``client_kwargs`` for a class that takes it there."""
    fields = getattr(cls, "model_fields", {})
    names = set(fields) | {f.alias for f in fields.values() if f.alias}
    kept = {k: v for k, v in options.items() if k in names and v is not None}
    if "timeout" not in names and "client_kwargs" in names and options.get("timeout"):
        kept["client_kwargs"] = {"timeout": options["timeout"]}
    return kept


def chat_model(model: str, base_url: str | None, options: dict[str, Any]) -> BaseChatModel:
    """The chat model ``init_chat_model`` builds for ``model`` with the options its
    class takes (``base_url``, ``api_key``, ``timeout``, ``max_retries``, ...).

    Raises:
        ProviderError: see :func:`check_model`.
    """
    check_model(model, base_url)
    provider, name = provider_of(model, base_url)
    from langchain.chat_models import init_chat_model

    cls = _chat_class(provider)
    return init_chat_model(name, model_provider=provider,
                           **_accepted(cls, options | {"base_url": base_url}))


def missing_key(model: str, base_url: str | None) -> tuple[str, ...]:
    """The variables the chat model of a ``provider:model`` reads its API key from, when
    none of them is set (``GOOGLE_API_KEY``, ``GEMINI_API_KEY``: any one will do); empty
    when one is, or when it reads none. From its class's ``lc_secrets``, without
    building it (some refuse to be built without their key)."""
    check_model(model, base_url)
    cls = _chat_class(provider_of(model, base_url)[0])
    secrets: dict[str, str] = cls.model_construct().lc_secrets
    variables = tuple(v for v in secrets.values() if v.endswith("_API_KEY"))
    return () if any(env(v) for v in variables) else variables


def structured_method(llm: BaseChatModel, setting: str) -> str | None:
    """``with_structured_output``'s method for ``llm``: the run's setting unless it is
    ``auto``; then tool calling for an OpenAI-compatible endpoint (the OpenAI protocol,
    whose plain servers often lack JSON schema), else None, the integration's own
    default (Anthropic's tool use, Ollama's ``format``, Gemini's JSON schema, ...).
    Which protocol a chat model speaks is its LangSmith ``ls_provider``."""
    if setting != "auto":
        return setting
    params = llm._get_ls_params()
    return "function_calling" if params.get("ls_provider") == "openai" else None


# ------------------------------------------------------------------ chat-model objects

SAVED_OBJECT = "chat-model-object:"
"""How a setting that held a chat-model object is saved with a thread (the object never
is): ``chat-model-object:ChatAnthropic(claude-sonnet-4-5)``. Read back (a resume, a
replay), it names what to pass again."""


def is_chat_model(value: Any) -> bool:
    """Whether a setting holds a LangChain chat model rather than a model's name."""
    if value is None or isinstance(value, str):
        return False
    from langchain_core.language_models import BaseChatModel

    return isinstance(value, BaseChatModel)


def chat_model_label(llm: BaseChatModel) -> str:
    """A chat-model object as traces name it: its class and model,
    ``ChatAnthropic(claude-sonnet-4-5)``."""
    fields = ("model_name", "model", "model_id", "repo_id", "deployment_name")
    model = next((value for name in fields
                  if isinstance(value := getattr(llm, name, None), str) and value), None)
    return f"{type(llm).__name__}({model or llm._llm_type})"


def saved_object(value: str) -> str | None:
    """The label of the chat-model object a saved setting held (None: it held a name)."""
    return value[len(SAVED_OBJECT):] if value.startswith(SAVED_OBJECT) else None
