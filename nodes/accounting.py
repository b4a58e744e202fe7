"""Accounting of LLM calls: role, model, tokens, latency and outcome of every call.

A node collects :class:`~graph.state.LLMCall` records in a list while it works and
returns them under ``llm_calls``; the state appends them, so a run's totals are always
derivable from its records.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from graph.state import LLMCall

__all__ = ["recording", "usage_totals"]


def _usage(message: Any) -> tuple[int, int]:
    usage = getattr(message, "usage_metadata", None) or {}
    return int(usage.get("input_tokens", 0)), int(usage.get("output_tokens", 0))


@contextmanager
def recording(calls: list[LLMCall], role: str, llm: str) -> Iterator[list[Any]]:
    """Time one LLM call and append its record to ``calls``, also when it raises.

    The caller appends the reply message (the raw ``AIMessage``) to the yielded list so
    that its token usage is recorded.
    """
    replies: list[Any] = []
    started = time.monotonic()
    try:
        yield replies
    except Exception as exc:  # recorded, then raised on: the node decides what it means
        calls.append(LLMCall(role=role, llm=llm, ok=False,
                             error=f"{type(exc).__name__}: {str(exc)[:200]}",
                             latency_s=round(time.monotonic() - started, 4)))
        raise
    prompt, completion = _usage(replies[0]) if replies else (0, 0)
    calls.append(LLMCall(role=role, llm=llm, ok=True, prompt_tokens=prompt,
                         completion_tokens=completion,
                         latency_s=round(time.monotonic() - started, 4)))


def usage_totals(calls: list[LLMCall]) -> dict[str, Any]:
    """A run's totals: calls (by role), tokens, failures, time spent waiting on LLMs."""
    by_role: dict[str, int] = {}
    for call in calls:
        by_role[call.role] = by_role.get(call.role, 0) + 1
    return {
        "calls": len(calls),
        "by_role": by_role,
        "failed": sum(not c.ok for c in calls),
        "prompt_tokens": sum(c.prompt_tokens for c in calls),
        "completion_tokens": sum(c.completion_tokens for c in calls),
        "latency_s": round(sum(c.latency_s for c in calls), 4),
    }
