"""The chat model an LLM endpoint is called through: the caller's own object, or one
built for the endpoint (once per endpoint, timeout and retries) with its key or token.

A bare name or ``provider:model`` is built by ``init_chat_model``
(:mod:`hugginggpt.tools.llm.providers`), ``hf:REPO_ID`` or ``hf:URL`` by
``langchain-huggingface``, and ``transformers:REPO`` runs in this process
(:mod:`hugginggpt.tools.llm.local_chat`). The router probes an endpoint that did not
answer, when its cool-down is over, through :func:`probe`.
"""

from __future__ import annotations

from functools import lru_cache
from typing import TYPE_CHECKING, Any, cast

from langchain_core.messages import HumanMessage
from pydantic import SecretStr

from hugginggpt.tools.addresses import is_hf_host
from hugginggpt.tools.errors import LLMNotConfiguredError
from hugginggpt.tools.llm.credentials import api_key, hf_token
from hugginggpt.tools.llm.endpoints import Endpoint
from hugginggpt.tools.llm.local_chat import local_chat
from hugginggpt.tools.llm.providers import (
    ProviderError,
    chat_model,
    is_hf,
    is_local,
    missing_key,
)
from hugginggpt.tools.llm.router import ROUTER
from hugginggpt.tools.redact import install_log_redaction

if TYPE_CHECKING:  # its module takes 0.07 s to import; a run with no LLM needs none
    from langchain_core.language_models import BaseChatModel

__all__ = ["client_for", "built", "probe"]


@lru_cache(maxsize=64)
def built(endpoint: Endpoint, timeout_s: float, max_retries: int) -> BaseChatModel:
    if is_local(endpoint.model):
        return local_chat(endpoint.model)
    if is_hf(endpoint.model):
        from langchain_huggingface import ChatHuggingFace, HuggingFaceEndpoint

        target = endpoint.model.split(":", 1)[1]
        is_url = target.startswith(("http://", "https://"))
        token = hf_token(endpoint)
        # the billing header goes where the token goes: hub models, Hugging Face hosts
        to_hf = not is_url or is_hf_host(target)
        bill_to = endpoint.bill_to if to_hf else None
        hf = HuggingFaceEndpoint(  # type: ignore[call-arg]  # model is derived
            endpoint_url=target if is_url else None,
            repo_id=None if is_url else target,
            provider=None if is_url else endpoint.provider,
            max_new_tokens=1024,
            temperature=0.01,
            timeout=int(timeout_s),
            huggingfacehub_api_token=token.get_secret_value() if token else None,
            streaming=endpoint.streams,
            server_kwargs={"bill_to": bill_to} if bill_to else {},
        )
        install_log_redaction()  # the loggers of the client just imported
        return ChatHuggingFace(llm=hf, streaming=endpoint.streams, stream_usage=True)

    key = api_key(endpoint)
    try:
        if key is None and endpoint.base_url and missing_key(endpoint.model, endpoint.base_url):
            key = SecretStr("not-needed")  # a server at a base URL needs none; the client insists
        options: dict[str, Any] = {
            "api_key": key, "timeout": timeout_s,
            "max_retries": max_retries, "temperature": 0, "streaming": endpoint.streams,
            "stream_usage": True}
        llm = chat_model(endpoint.model, endpoint.base_url, options)
    except ProviderError as exc:
        raise LLMNotConfiguredError(str(exc)) from None
    install_log_redaction()  # the loggers of the client just imported
    return llm


def client_for(endpoint: Endpoint, timeout_s: float) -> BaseChatModel:
    """The endpoint's chat model: the caller's own object as it is, else one built for
    it. No retries inside a built client: they are the loop's in
    :func:`~hugginggpt.tools.llm.client.complete`, which
    stops at an endpoint that does not answer (the client would wait out the timeout
    again)."""
    if endpoint.chat is not None:
        return cast("BaseChatModel", endpoint.chat)
    return built(endpoint, timeout_s, 0)


def probe(endpoint: Endpoint) -> None:
    """A minimal call that shows whether a cooled-down endpoint answers again."""
    llm = client_for(endpoint, min(10.0, endpoint.timeout_s or 10.0))
    built = endpoint.chat is None and not is_hf(endpoint.model) and not is_local(
        endpoint.model)
    extra: dict[str, Any] = {"max_tokens": 1} if built else {}
    llm.invoke([HumanMessage("ping")], **extra)


ROUTER.prober = probe
install_log_redaction()
