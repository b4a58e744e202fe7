"""Accounting of LLM calls: a run's totals from its :class:`~graph.state.LLMCall` records.

Nodes return their records under ``llm_calls`` (:func:`graph.llms.complete` makes one per
endpoint tried); the state appends them, so totals are always derivable from records.
"""

from __future__ import annotations

from typing import Any

from graph.state import LLMCall

__all__ = ["usage_totals"]


def usage_totals(calls: list[LLMCall]) -> dict[str, Any]:
    """Totals: calls (by role and by endpoint), failed attempts, tokens, estimated cost,
    and time spent waiting on LLMs."""
    by_role: dict[str, int] = {}
    by_endpoint: dict[str, int] = {}
    for call in calls:
        by_role[call.role] = by_role.get(call.role, 0) + 1
        name = call.endpoint or call.llm
        by_endpoint[name] = by_endpoint.get(name, 0) + 1
    return {
        "calls": len(calls),
        "by_role": by_role,
        "by_endpoint": by_endpoint,
        "failed": sum(not c.ok for c in calls),
        "prompt_tokens": sum(c.prompt_tokens for c in calls),
        "completion_tokens": sum(c.completion_tokens for c in calls),
        "cost": round(sum(c.cost for c in calls), 6),
        "latency_s": round(sum(c.latency_s for c in calls), 4),
    }
