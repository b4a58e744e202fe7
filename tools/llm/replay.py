"""Replaying a thread: the recorded LLM replies stand in for the endpoints.

Each :class:`~hugginggpt.tools.llm.records.LLMCall` of a thread keeps the prompt's
fingerprint and the reply. A :class:`Recording` in the run's context answers every LLM
call from them: first by fingerprint (the same prompt gets the same reply, whatever the
order of parallel calls), else the role's next unused reply (noted as a divergence: the
code, the prompts or the settings changed since the recording). A recorded call that
failed on every endpoint fails again, so a failure reproduces without calling an LLM.

A recording serves only the roles that had an LLM in the recorded run (``roles``): for
the others the replay has no LLM either, so it recomputes what the run did without one
(the offline planner, the ranking, the template responder), all deterministic.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage

from hugginggpt.tools.errors import Fix, LLMCallError
from hugginggpt.tools.llm.config import ENDPOINT_ROLES
from hugginggpt.tools.llm.records import LLMCall, recorded_request

__all__ = ["Recording", "ReplayExhaustedError", "ReplayedFailureError", "RecordedCall",
           "group_calls"]


class ReplayExhaustedError(LLMCallError):
    """The replayed run asked for more LLM calls than the recording holds."""


class ReplayedFailureError(LLMCallError):
    """A recorded call that failed on every endpoint, failing again in the replay."""

    def __init__(self, error: str, description: str | None, fix: Fix | None = None) -> None:
        super().__init__(f"replayed failure: {error}", fix=fix)
        self.description = description


@dataclass
class RecordedCall:
    """One logical call: the attempts on every endpoint tried, and how it ended."""

    attempts: list[LLMCall] = field(default_factory=list)

    @property
    def role(self) -> str:
        return self.attempts[0].role

    @property
    def digest(self) -> str:
        return self.attempts[0].digest

    @property
    def answer(self) -> LLMCall | None:
        return next((a for a in self.attempts if a.ok and a.reply is not None), None)


def group_calls(calls: list[LLMCall]) -> list[RecordedCall]:
    """Attempts grouped into logical calls (a call's first attempt has ``attempt == 1``)."""
    grouped: list[RecordedCall] = []
    open_calls: dict[tuple[str, str], RecordedCall] = {}
    for call in calls:
        key = (call.role, call.digest)
        if call.attempt == 1 or key not in open_calls:
            open_calls[key] = RecordedCall()
            grouped.append(open_calls[key])
        open_calls[key].attempts.append(call)
    return grouped


class Recording:
    """The recorded LLM side of one run, served to a replay of it.

    Args:
        calls: the run's LLM calls, as its state recorded them.
        roles: the roles the recording answers (by default every role); a role outside
            them is "not configured" in the replay, as it was in the recorded run.
    """

    def __init__(self, calls: list[LLMCall], roles: Iterable[str] | None = None) -> None:
        self.calls = group_calls(calls)
        self.roles = frozenset(roles if roles is not None else ENDPOINT_ROLES)
        self._used: set[int] = set()
        self._lock = threading.Lock()
        self.divergences: list[str] = []

    def serves(self, role: str) -> bool:
        """Whether the replay answers ``role`` from the recording (else it has no LLM)."""
        return role in self.roles

    def _take(self, role: str, digest: str) -> RecordedCall | None:
        with self._lock:
            unused = [(i, c) for i, c in enumerate(self.calls)
                      if i not in self._used and c.role == role]
            match = next(((i, c) for i, c in unused if c.digest == digest), None)
            if match is None and unused:
                match = unused[0]
                self.divergences.append(
                    f"a {role} prompt differs from the recording (call {match[0] + 1}); "
                    "replayed the role's next recorded reply")
            if match is None:
                return None
            self._used.add(match[0])
            return match[1]

    @property
    def unused(self) -> int:
        with self._lock:
            return len(self.calls) - len(self._used)

    def reply(self, role: str, digest: str, messages: list[BaseMessage],
              calls: list[LLMCall], turn: int) -> AIMessage:
        """The recorded reply to this call, recorded again (as replayed) in ``calls``.

        Raises:
            ReplayExhaustedError: no recorded reply is left for the role.
            LLMCallError: the recorded call failed on every endpoint.
        """
        recorded = self._take(role, digest)
        request = recorded_request(messages)
        if recorded is None:
            calls.append(LLMCall(role=role, llm="replay", endpoint="replay", ok=False,
                                 error="no recorded reply left", turn=turn, digest=digest,
                                 request=request, replayed=True))
            raise ReplayExhaustedError(
                f"the recording has no {role} reply left: the replay diverged from the "
                "recorded run (the code, the prompts or the settings changed)")
        answer = recorded.answer
        if answer is None:
            error = recorded.attempts[-1].error or "failed"
            calls.append(LLMCall(role=role, llm="replay", endpoint="replay", ok=False,
                                 error=error, turn=turn, digest=digest, request=request,
                                 replayed=True))
            raise ReplayedFailureError(error, recorded.attempts[-1].outcome,
                                       recorded.attempts[-1].fix)
        assert answer.reply is not None
        calls.append(answer.model_copy(update={
            "llm": f"replay of {answer.llm}", "turn": turn, "digest": digest,
            "request": request, "replayed": True, "latency_s": 0.0, "attempt": 1,
            "call_id": LLMCall(role=role, llm="", ok=True).call_id,  # a call of its own
        }))
        return _message(answer)


def _message(call: LLMCall) -> AIMessage:
    reply: dict[str, Any] = call.reply or {}
    return AIMessage(
        content=reply.get("content") or "",
        tool_calls=[{"name": c["name"], "args": c["args"], "id": c.get("id"),
                     "type": "tool_call"} for c in reply.get("tool_calls", [])],
        invalid_tool_calls=[{"name": c.get("name"), "args": c.get("args"), "id": c.get("id"),
                             "error": c.get("error"), "type": "invalid_tool_call"}
                            for c in reply.get("invalid_tool_calls", [])],
        usage_metadata={"input_tokens": call.prompt_tokens,
                        "output_tokens": call.completion_tokens,
                        "total_tokens": call.prompt_tokens + call.completion_tokens},
    )
