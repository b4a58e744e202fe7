"""What the system keeps of every LLM call: one :class:`LLMCall` per endpoint tried.

A call's record holds who asked, which endpoint answered, what it cost and how it ended,
and (for the thread's trace and replay) the prompt and the reply, clipped and without
secrets. In a graph with a store the prompt and the reply live in the store instead, under
the call's ``call_id`` (:mod:`hugginggpt.tools.llm.transcripts`), and the state keeps the rest.
Totals are always derived from the records (:func:`usage_totals`).
"""

from __future__ import annotations

import hashlib
import json
import re
import uuid
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage
from pydantic import BaseModel, Field

from hugginggpt.tools.errors import Fix, LLMBudgetError
from hugginggpt.tools.llm.settings import LLMSettings
from hugginggpt.tools.redact import redact

__all__ = ["LLMCall", "check_budget", "recorded_request", "recorded_reply", "request_digest",
           "stable_text", "run_spend", "usage_totals"]

_MAX_RECORDED_CHARS = 20_000


class LLMCall(BaseModel):
    """One call to an LLM endpoint: who asked, which endpoint, what it cost, how it
    ended, and (for the trace and replay) what was asked and answered.

    A call that fails over to another endpoint leaves one record per endpoint tried.
    """

    role: str
    llm: str
    """The endpoint as shown to people: name (model @ base URL, never credentials)."""
    ok: bool
    prompt_tokens: int = 0
    completion_tokens: int = 0
    latency_s: float = 0.0
    error: str | None = None
    endpoint: str = ""
    tier: int = 0
    """The endpoint's capability tier (1 small, 2 medium, 3 large)."""
    need: int = 0
    """The tier the call needed."""
    ttft_s: float | None = None
    """Time to the first streamed token (None when the reply was not streamed)."""
    cost: float = 0.0
    at: float = 0.0
    """When the call started (Unix time)."""
    turn: int = 0
    """Which request on the thread the call served (0 for the first)."""
    attempt: int = 1
    """1 for the first endpoint tried, 2 for the first fallback, ..."""
    digest: str = ""
    """Fingerprint of the prompt (a replay matches replies by it)."""
    request: list[dict[str, str]] = Field(default_factory=list)
    reply: dict[str, Any] | None = None
    outcome: str | None = None
    """On the last attempt of a call that failed everywhere: what the run was told."""
    fix: Fix | None = None
    """With ``outcome``: what the run was told to do about it (a setting to check)."""
    replayed: bool = False
    call_id: str = Field(default_factory=lambda: uuid.uuid4().hex[:16])
    """The call's key for its prompt and reply in the thread's store (records written
    before the store held their text get a fresh id on loading, found nowhere: their
    text is inline)."""


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    return json.dumps(content, default=str)


def recorded_request(messages: list[BaseMessage]) -> list[dict[str, str]]:
    """A prompt as the trace keeps it: role and content, clipped, without secrets."""
    return [{"role": m.type, "content": redact(_text(m.content)[:_MAX_RECORDED_CHARS])}
            for m in messages]


_VOLATILE = re.compile(r"\b\d+(?:\.\d+)?s\b|artifacts/[^/\s]+/")


def stable_text(text: str) -> str:
    """Text with what differs between two runs of the same thing masked: timings
    ("0.42s") and the thread's artifact folder."""
    return _VOLATILE.sub(lambda m: "artifacts/*/" if m.group(0).startswith("a") else "#s",
                         text)


def request_digest(role: str, messages: list[BaseMessage]) -> str:
    """A fingerprint of a call's prompt: a replay matches recorded replies by it (with
    timings and the artifact folder masked, so a replay's prompt matches its original)."""
    body = json.dumps([role, [(m.type, stable_text(_text(m.content))) for m in messages]])
    return hashlib.sha256(body.encode()).hexdigest()[:16]


def recorded_reply(raw: AIMessage) -> dict[str, Any]:
    return {
        "content": redact(_text(raw.content)[:_MAX_RECORDED_CHARS]),
        "tool_calls": [{"name": c["name"], "args": c["args"], "id": c.get("id")}
                       for c in raw.tool_calls],
        "invalid_tool_calls": [{k: c.get(k) for k in ("name", "args", "id", "error")}
                               for c in raw.invalid_tool_calls],
    }


def run_spend(calls: list[LLMCall], turn: int) -> tuple[int, int]:
    """LLM calls and tokens recorded so far for the run serving request ``turn``."""
    mine = [c for c in calls if c.turn == turn]
    return len(mine), sum(c.prompt_tokens + c.completion_tokens for c in mine)


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


def check_budget(settings: LLMSettings, role: str, calls: list[LLMCall],
                 spent: tuple[int, int]) -> None:
    """Raise when the run has used its LLM calls or tokens (``spent`` before this
    node, and this node's ``calls``): the role is not asked."""
    used_calls = spent[0] + len(calls)
    used_tokens = spent[1] + sum(c.prompt_tokens + c.completion_tokens for c in calls)
    if used_calls >= settings.max_llm_calls:
        raise LLMBudgetError(
            f"the run has made {used_calls} LLM calls, its limit (max_llm_calls = "
            f"{settings.max_llm_calls}); the {role} was not asked. Raise the limit with "
            "HUGGINGGPT_MAX_LLM_CALLS if the run needs more")
    if used_tokens >= settings.max_llm_tokens:
        raise LLMBudgetError(
            f"the run has used {used_tokens} LLM tokens, its limit (max_llm_tokens = "
            f"{settings.max_llm_tokens}); the {role} was not asked. Raise the limit with "
            "HUGGINGGPT_MAX_LLM_TOKENS if the run needs more")
