"""The exceptions that mean "the LLM endpoint failed", as opposed to a bug."""

from __future__ import annotations

import httpx
import openai

from hugginggpt.tools.errors import LLMCallError
from hugginggpt.tools.redact import redact

__all__ = ["LLM_CALL_ERRORS", "describe_llm_error"]

LLM_CALL_ERRORS: tuple[type[BaseException], ...] = (
    openai.APIError,
    httpx.HTTPError,
    TimeoutError,
    ConnectionError,
    LLMCallError,
)
try:
    from huggingface_hub.errors import HfHubHTTPError

    LLM_CALL_ERRORS += (HfHubHTTPError,)
except ImportError:  # pragma: no cover - huggingface_hub ships with langchain-huggingface
    pass


def describe_llm_error(exc: BaseException, label: str) -> str:
    """One sentence for the user: what failed, and what to check."""
    return redact(_describe(exc, label))


def _describe(exc: BaseException, label: str) -> str:
    if (described := getattr(exc, "description", None)) is not None:
        return str(described)  # a limit, or a replayed failure told as the first time
    if isinstance(exc, LLMCallError):
        return f"the LLM {label} failed: {str(exc)[:900]} (check each endpoint and its logs)"
    # a timeout first: openai's APITimeoutError is also an APIConnectionError
    if isinstance(exc, (openai.APITimeoutError, TimeoutError, httpx.TimeoutException)):
        hint = "the endpoint did not answer in time; raise HUGGINGGPT_LLM_TIMEOUT or try later"
    elif isinstance(exc, (openai.APIConnectionError, httpx.ConnectError, ConnectionError)):
        hint = "is the server running, and is --llm-base-url right?"
    elif isinstance(exc, openai.AuthenticationError):
        hint = "check OPENAI_API_KEY (or HUGGINGGPT_LLM_API_KEY)"
    elif isinstance(exc, openai.NotFoundError):
        hint = "check the model name given with --llm"
    elif (status := getattr(exc, "status_code", None)) is not None:
        hint = f"the endpoint answered HTTP {status}; check its logs, or retry later"
    else:
        hint = "check the endpoint and its logs"
    return f"the LLM {label} failed: {type(exc).__name__}: {str(exc)[:300]} ({hint})"
