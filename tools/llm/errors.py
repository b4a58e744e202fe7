"""The exceptions that mean "the LLM endpoint failed", as opposed to a bug.

``openai`` is not imported here: its types take about 0.9 s to import, and a run with no
LLM configured never builds a client. An openai exception can only be raised once
``openai`` has been imported, so :func:`llm_call_errors` adds its classes when it is in
``sys.modules`` and is exact either way.
"""

from __future__ import annotations

import sys
from typing import Any, Literal

from hugginggpt.tools.errors import LLMCallError
from hugginggpt.tools.redact import redact
from hugginggpt.tools.text import MAX_MESSAGE, clip

__all__ = ["llm_call_errors", "describe_llm_error", "not_answering"]

_ALWAYS: tuple[type[BaseException], ...] = (TimeoutError, ConnectionError, LLMCallError)


def llm_call_errors() -> tuple[type[BaseException], ...]:
    """The exception classes that mean an endpoint failed, for ``except`` clauses:
    evaluated when an exception is being matched, so it names only the libraries (openai,
    httpx, huggingface_hub) that are loaded and could have raised it."""
    found = list(_ALWAYS)
    if (openai := sys.modules.get("openai")) is not None:
        found.append(openai.APIError)
    if (httpx := sys.modules.get("httpx")) is not None:
        found.append(httpx.HTTPError)
    if (hub_errors := sys.modules.get("huggingface_hub.errors")) is not None:
        found.append(hub_errors.HfHubHTTPError)
    return tuple(found)


def _loaded(module: str, name: str) -> Any:
    """``module.name`` if that module is loaded, else a class nothing is an instance of."""
    loaded = sys.modules.get(module)
    return getattr(loaded, name) if loaded is not None else _Never


class _Never(BaseException):
    """Stands for a class of a library that is not loaded: never raised."""


def not_answering(exc: BaseException) -> Literal["timeout", "connect"] | None:
    """Whether an endpoint failure means it did not answer: it timed out, or the
    connection failed (a timeout first: openai's ``APITimeoutError`` is also an
    ``APIConnectionError``). None for any other failure (an HTTP error is an answer)."""
    if isinstance(exc, (_loaded("openai", "APITimeoutError"), TimeoutError,
                        _loaded("httpx", "TimeoutException"))):
        return "timeout"
    if isinstance(exc, (_loaded("openai", "APIConnectionError"),
                        _loaded("httpx", "ConnectError"), ConnectionError)):
        return "connect"
    return None


def describe_llm_error(exc: BaseException, label: str) -> str:
    """One sentence for the user: what failed, and what to check."""
    return redact(_describe(exc, label))


def _describe(exc: BaseException, label: str) -> str:
    if (described := getattr(exc, "description", None)) is not None:
        return str(described)  # a limit, or a replayed failure told as the first time
    if isinstance(exc, LLMCallError):
        return (f"the LLM {label} failed: {clip(str(exc), MAX_MESSAGE)} (check each endpoint "
                "and its logs)")
    # a timeout first: openai's APITimeoutError is also an APIConnectionError
    if isinstance(exc, (_loaded("openai", "APITimeoutError"), TimeoutError,
                        _loaded("httpx", "TimeoutException"))):
        hint = "the endpoint did not answer in time; raise HUGGINGGPT_LLM_TIMEOUT or try later"
    elif isinstance(exc, (_loaded("openai", "APIConnectionError"),
                          _loaded("httpx", "ConnectError"), ConnectionError)):
        hint = "is the server running, and is --llm-base-url right?"
    elif isinstance(exc, _loaded("openai", "AuthenticationError")):
        hint = "check OPENAI_API_KEY (or HUGGINGGPT_LLM_API_KEY)"
    elif isinstance(exc, _loaded("openai", "NotFoundError")):
        hint = "check the model name given with --llm"
    elif (status := getattr(exc, "status_code", None)) is not None:
        hint = f"the endpoint answered HTTP {status}; check its logs, or retry later"
    else:
        hint = "check the endpoint and its logs"
    return f"the LLM {label} failed: {type(exc).__name__}: {clip(str(exc), MAX_MESSAGE)} ({hint})"
