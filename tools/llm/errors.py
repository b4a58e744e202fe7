"""Which exceptions mean "the LLM endpoint failed", as opposed to a bug, and how to say so.

Nothing here names a provider. A failure is classified by what any provider's exception
carries (on itself or on the exceptions it was raised from): an HTTP status
(``status_code``, or ``response.status_code``), a timeout or a failed connection
(builtin, ``httpx``/``httpcore``, or LangChain's ``ModelTimeoutError`` and
``ModelConnectionError``), LangChain's ``ModelError`` family, or else a reply that could
not be read. A failure with no class of its own here (``ollama.ResponseError``, say) is
raised by :func:`~hugginggpt.tools.llm.client.complete` as an :class:`EndpointFailure`.

Libraries are looked up in ``sys.modules``, never imported: an exception of a library
can only be raised once it has been imported, and a run with no LLM imports none.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from typing import Any, Literal

from hugginggpt.tools.errors import Fix, LLMCallError, setting
from hugginggpt.tools.redact import redact
from hugginggpt.tools.text import MAX_MESSAGE, clip

__all__ = ["llm_call_errors", "describe_llm_error", "llm_error_fix", "not_answering",
           "is_endpoint_failure", "EndpointFailure", "status_of", "REACH"]

REACH = Fix(say="is the server running, and is {} right?", controls=[setting("llm_base_url")])
"""What to check when an LLM endpoint refused the connection."""
_MODEL_NAME = Fix(say="check the model name given with {}", controls=[setting("llm")])

_ALWAYS: tuple[type[BaseException], ...] = (TimeoutError, ConnectionError, LLMCallError)


class EndpointFailure(LLMCallError):
    """An endpoint failure whose exception has no class :func:`llm_call_errors` names
    (its ``__cause__``): an HTTP status, or a reply that could not be read."""

    def __init__(self, cause: BaseException) -> None:
        super().__init__(f"{type(cause).__name__}: {cause}")
        self.status_code = status_of(cause)
        self.response = getattr(cause, "response", None)  # Retry-After, for the backoff
        self.__cause__ = cause


def _loaded(module: str, name: str) -> Any:
    """``module.name`` if that module is loaded, else a class nothing is an instance of."""
    loaded = sys.modules.get(module)
    return getattr(loaded, name, _Never) if loaded is not None else _Never


class _Never(BaseException):
    """Stands for a class of a library that is not loaded: never raised."""


def llm_call_errors() -> tuple[type[BaseException], ...]:
    """The exception classes that mean an endpoint failed, for ``except`` clauses:
    builtin timeouts and connection errors, LangChain's ``ModelError`` family, httpx's
    and huggingface_hub's HTTP errors and :class:`EndpointFailure` (an
    :class:`LLMCallError`)."""
    found = [*_ALWAYS, _loaded("langchain_core.exceptions", "ModelError"),
             _loaded("openai", "APIError"), _loaded("httpx", "HTTPError"),
             _loaded("huggingface_hub.errors", "HfHubHTTPError")]
    return tuple(dict.fromkeys(c for c in found if c is not _Never))


def _chain(exc: BaseException) -> Iterator[BaseException]:
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        yield current
        current = current.__cause__ or current.__context__


def status_of(exc: BaseException) -> int | None:
    """The HTTP status an endpoint answered with, from the exception or its causes."""
    for link in _chain(exc):
        for status in (getattr(link, "status_code", None),
                       getattr(getattr(link, "response", None), "status_code", None)):
            if isinstance(status, int) and not isinstance(status, bool) and status >= 400:
                return status
    return None


def _raised_in(exc: BaseException) -> str:
    """The module whose code raised the exception (its traceback's last frame)."""
    tb = exc.__traceback__
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    return str(tb.tb_frame.f_globals.get("__name__", "")) if tb is not None else ""


def _unreadable(exc: BaseException) -> bool:
    """A reply that could not be read: JSON or a schema that did not parse, or a
    ``ValueError`` the chat model's own code raised about its reply ("No generations
    found in stream", say); one raised in this package's code is a bug."""
    kinds = (json.JSONDecodeError, _loaded("pydantic", "ValidationError"),
             _loaded("langchain_core.exceptions", "OutputParserException"))
    return any(isinstance(link, kinds) or (isinstance(link, ValueError) and not (
        _raised_in(link).startswith("hugginggpt") or _raised_in(link) == ""))
        for link in _chain(exc))


def is_endpoint_failure(exc: BaseException) -> bool:
    """Whether an exception raised by a chat model means its endpoint failed (else it
    is a bug): one of :func:`llm_call_errors`, an HTTP status, no answer, or a reply
    that could not be read."""
    return (isinstance(exc, llm_call_errors()) or status_of(exc) is not None
            or not_answering(exc) is not None or _unreadable(exc))


def not_answering(exc: BaseException) -> Literal["timeout", "connect"] | None:
    """Whether an endpoint failure means it did not answer: it timed out, or the
    connection failed (a timeout first: a timeout is often a connection error too).
    None for any other failure (an HTTP error is an answer)."""
    timeouts = (TimeoutError, _loaded("langchain_core.exceptions", "ModelTimeoutError"),
                _loaded("httpx", "TimeoutException"), _loaded("httpcore", "TimeoutException"))
    connects = (ConnectionError, _loaded("langchain_core.exceptions", "ModelConnectionError"),
                _loaded("httpx", "ConnectError"), _loaded("httpcore", "ConnectError"))
    links = list(_chain(exc))
    if any(isinstance(link, timeouts) for link in links):
        return "timeout"
    if any(isinstance(link, connects) for link in links):
        return "connect"
    return None


def describe_llm_error(exc: BaseException, label: str) -> str:
    """One sentence for the user: what failed, and what to check when that is not a
    setting (:func:`llm_error_fix` says which setting)."""
    return redact(_describe(exc, label))


def llm_error_fix(exc: BaseException) -> Fix | None:
    """The setting to check when an LLM call failed for want of it: the base URL of a
    server that refused the connection, the model name a server does not know; or the
    fix the error carries (the keys the endpoints lack)."""
    if (fix := getattr(exc, "fix", None)) is not None:
        return fix
    if isinstance(exc, EndpointFailure) and exc.__cause__ is not None:
        exc = exc.__cause__
    elif isinstance(exc, LLMCallError):
        return None
    if not_answering(exc) == "connect":
        return REACH
    return _MODEL_NAME if status_of(exc) == 404 else None


def _describe(exc: BaseException, label: str) -> str:
    if (described := getattr(exc, "description", None)) is not None:
        return str(described)  # a limit, or a replayed failure told as the first time
    if isinstance(exc, EndpointFailure) and exc.__cause__ is not None:
        exc = exc.__cause__
    elif isinstance(exc, LLMCallError):
        return (f"the LLM {label} failed: {clip(str(exc), MAX_MESSAGE)} (check each endpoint "
                "and its logs)")
    status = status_of(exc)
    said = f"the LLM {label} failed: {type(exc).__name__}: {clip(str(exc), MAX_MESSAGE)}"
    if (kind := not_answering(exc)) == "timeout":
        hint = "the endpoint did not answer in time; raise HUGGINGGPT_LLM_TIMEOUT or try later"
    elif kind == "connect" or status == 404:  # a setting to check: llm_error_fix
        return said
    elif status == 401:
        hint = ("check OPENAI_API_KEY (or HUGGINGGPT_LLM_API_KEY)"
                if isinstance(exc, _loaded("openai", "APIError"))
                else "check the endpoint's API key")
    elif status == 429:
        hint = ("the endpoint answered HTTP 429, its rate limit or quota; check its logs, "
                "or retry later")
    elif status is not None:
        hint = f"the endpoint answered HTTP {status}; check its logs, or retry later"
    elif _unreadable(exc):
        hint = "the reply could not be read; check the endpoint and its logs"
    else:
        hint = "check the endpoint and its logs"
    return f"{said} ({hint})"
