"""How often one LLM request may go to the same endpoint, and how long to wait between.

The clients are built without retries of their own (openai's would retry a timeout,
waiting it out up to three times on an endpoint that does not answer); the loop in
:func:`hugginggpt.tools.llm.client.complete` retries instead, stopping at an endpoint
the breaker has opened (:mod:`hugginggpt.tools.llm.breaker`).
"""

from __future__ import annotations

from hugginggpt.tools.llm.config import Endpoint
from hugginggpt.tools.llm.errors import status_of
from hugginggpt.tools.llm.settings import LLMSettings

__all__ = ["TRIES_PER_ENDPOINT", "tries_per_endpoint", "retryable", "backoff_s"]

TRIES_PER_ENDPOINT = 2
"""Calls per endpoint for one request when the role has several (fail over, not retry)."""


def tries_per_endpoint(endpoint: Endpoint, settings: LLMSettings, several: bool) -> int:
    """Calls one endpoint may get for one request: its ``max_retries``, else the run's
    ``llm_max_retries`` when it is the role's only one; with somewhere else to go,
    fail over rather than retry (twice per endpoint)."""
    retries = endpoint.max_retries
    if retries is None:
        retries = TRIES_PER_ENDPOINT - 1 if several else settings.llm_max_retries
    return 1 + retries


def retryable(exc: BaseException) -> bool:
    """Whether asking the same endpoint again can help (as openai's client decides: a
    408, 409, 429 or 5xx answer, or no answer). The status is found where any provider
    puts it: on the exception or on one it was raised from."""
    status = status_of(exc)
    return status is None or status in (408, 409, 429) or status >= 500


def backoff_s(exc: BaseException, retry: int) -> float:
    """Seconds before retry ``retry`` (1, 2, ...) of the same endpoint: the server's
    ``Retry-After`` when it gives one (up to a minute), else 0.5 s doubling up to 8 s."""
    headers = getattr(getattr(exc, "response", None), "headers", None) or {}
    try:
        return min(60.0, max(0.0, float(headers.get("retry-after", ""))))
    except (TypeError, ValueError):
        return min(8.0, 0.5 * 2 ** (retry - 1))


