"""Chat models for the three LLM roles (planner, selector, responder).

``MODEL`` names an OpenAI-compatible endpoint through ``langchain-openai`` (OpenAI, or
vLLM, Ollama, TGI, LM Studio with ``llm_base_url``); ``hf:REPO_ID`` or ``hf:URL`` a
Hugging Face model or endpoint through ``langchain-huggingface``.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Literal

from langchain_core.language_models import BaseChatModel

from graph.context import Context, env
from tools.errors import LLMNotConfiguredError

__all__ = ["Role", "chat_model", "describe_llm", "NOT_CONFIGURED_HELP"]

Role = Literal["planner", "selector", "responder"]

NOT_CONFIGURED_HELP = """\
No LLM is configured (the built-in offline planner only handles requests like its
examples). Configure one of:
  - OpenAI:            export OPENAI_API_KEY=sk-...   (optionally --llm gpt-4o)
  - any OpenAI-compatible server (vLLM, Ollama, TGI, LM Studio):
                       --llm MODEL --llm-base-url http://localhost:11434/v1
                       (or HUGGINGGPT_LLM and HUGGINGGPT_LLM_BASE_URL)
  - Hugging Face:      --llm hf:meta-llama/Llama-3.1-8B-Instruct with HF_TOKEN set,
                       or --llm hf:https://your-endpoint.endpoints.huggingface.cloud
Or check a plan without any LLM: hugginggpt run "..." --dry-run --plan PLAN.json"""


@lru_cache(maxsize=32)
def _build(spec: str, base_url: str | None, timeout_s: float, max_retries: int) -> BaseChatModel:
    if spec.startswith("hf:"):
        from langchain_huggingface import ChatHuggingFace, HuggingFaceEndpoint

        target = spec[3:]
        is_url = target.startswith(("http://", "https://"))
        endpoint = HuggingFaceEndpoint(  # type: ignore[call-arg]  # model is derived
            endpoint_url=target if is_url else None,
            repo_id=None if is_url else target,
            task="text-generation",
            max_new_tokens=1024,
            temperature=0.01,
            timeout=int(timeout_s),
            huggingfacehub_api_token=env("HF_TOKEN") or env("HUGGINGFACEHUB_API_TOKEN"),
        )
        return ChatHuggingFace(llm=endpoint)

    from langchain_openai import ChatOpenAI
    from pydantic import SecretStr

    # A local server needs no key, but the client insists on one.
    api_key = env("HUGGINGGPT_LLM_API_KEY") or env("OPENAI_API_KEY") or (
        "not-needed" if base_url else None
    )
    return ChatOpenAI(
        model=spec,
        base_url=base_url,
        api_key=SecretStr(api_key) if api_key else None,
        timeout=timeout_s,
        max_retries=max_retries,
        temperature=0,
    )


def chat_model(context: Context, role: Role) -> BaseChatModel:
    """The chat model for ``role``.

    Raises:
        LLMNotConfiguredError: no LLM is configured for the role.
    """
    spec = context.role_llm(role)
    if spec is None:
        raise LLMNotConfiguredError(NOT_CONFIGURED_HELP)
    return _build(spec, context.llm_base_url, context.llm_timeout_s, context.llm_max_retries)


def describe_llm(context: Context, role: Role) -> str:
    """A short label of the role's LLM for state and logs (never a key)."""
    spec = context.role_llm(role)
    if spec is None:
        return "none"
    if context.llm_base_url and not spec.startswith("hf:"):
        return f"{spec} @ {context.llm_base_url}"
    return spec
