"""The run's LLM lent to the ``llm`` backend: the controller doing a text subtask itself.

JARVIS let its controller summarise, translate and chat; here the ``llm`` backend
(:mod:`hugginggpt.tools.experts.llm`) writes the prompts and reads the answers, and this
module gives it the run's LLM routing under the role ``expert``. The two cannot import
each other (the experts and the LLM client are independent), so the execute stage
builds one :class:`ExpertLLM` per run and hands each subtask a :class:`SubtaskLLM` of it.

Every call goes through :func:`~hugginggpt.tools.llm.client.complete`, so it is routed
(the cheapest capable endpoint first), failed over, bounded by the endpoint timeouts,
recorded as an :class:`~hugginggpt.tools.llm.records.LLMCall` and answered from the
recording in a replay, like the stages' calls. The run's budget (``max_llm_calls``,
``max_llm_tokens``) is shared: what the stages spent before execution, plus every
subtask's calls so far, plus one for each call in flight, so parallel subtasks cannot
together overrun it.
"""

from __future__ import annotations

import threading
from typing import Any

from langchain_core.messages import BaseMessage

from hugginggpt.tools.errors import (
    Control,
    Fix,
    LLMBudgetError,
    LLMNotConfiguredError,
    ToolExecutionError,
)
from hugginggpt.tools.llm.breaker import BREAKER
from hugginggpt.tools.llm.client import complete
from hugginggpt.tools.llm.config import EXPERT_ROLE, ConfigError, describe_llm, routing_config
from hugginggpt.tools.llm.credentials import missing_credentials
from hugginggpt.tools.llm.errors import describe_llm_error, llm_call_errors, llm_error_fix
from hugginggpt.tools.llm.records import LLMCall
from hugginggpt.tools.llm.replies import reply_text
from hugginggpt.tools.llm.settings import LLMSettings

__all__ = ["ExpertLLM", "SubtaskLLM", "expert_unavailable", "expert_settings"]

NO_LLM = "no LLM configured"


def expert_unavailable(settings: LLMSettings) -> str | None:
    """Why this run's LLM cannot serve as an expert, or None when it can: it is
    configured, some endpoint serves the ``expert`` role, and one of those has its
    key or token and is not cooling down after it did not answer (no request is made
    to find out)."""
    if settings.replay is not None:
        if settings.replay.serves(EXPERT_ROLE):
            return None
        return "no LLM configured (the recorded run had none for the llm expert)"
    if settings.offline:
        return "no LLM configured (the run is offline)"
    try:
        config = routing_config(settings)
    except ConfigError as exc:
        return f"the LLM configuration is invalid: {exc}"
    if config is None:
        return NO_LLM
    endpoints = config.for_role(EXPERT_ROLE)
    if not endpoints:
        return ('no LLM endpoint serves the expert role (its roles leave it out; add '
                '"expert" to the roles of an endpoint)')
    missing = [why for e in endpoints if (why := missing_credentials(e)) is not None]
    if len(missing) == len(endpoints):
        return "; ".join(map(str, missing))
    # an endpoint that just did not answer (in this run or another in the process) is
    # not offered as an expert until its cool-down is over
    down = [d for e in endpoints if (d := BREAKER.down(e, None)) is not None]
    if len(down) == len(endpoints):
        return (f"its LLM {down[0].llm} {down[0].what()} and is not asked again for "
                f"{down[0].cooling_s or 0:.0f} s" + (f" ({down[0].advice()})"
                                                     if down[0].advice() else ""))
    return None


def expert_settings(settings: LLMSettings) -> dict[str, Any]:
    """What the ``llm`` backend is told about the run (plain data: it crosses the
    subtask boundary): why it cannot run, or which endpoints it runs on."""
    why = expert_unavailable(settings)
    if why is not None:
        return {"unavailable": why}
    return {"endpoints": describe_llm(settings, EXPERT_ROLE)}


class ExpertLLM:
    """One run's LLM for its subtasks, held to the run's budget with the stages' calls.

    Args:
        settings: the run's settings (its LLM configuration, limits and recording).
        turn: which request on the thread the run serves.
        spent: LLM calls and tokens the run used before execution
            (:func:`~hugginggpt.tools.llm.records.run_spend`).
    """

    def __init__(self, settings: LLMSettings, *, turn: int, spent: tuple[int, int]) -> None:
        self.settings = settings
        self.turn = turn
        self._spent = spent
        self._lock = threading.Lock()
        self._by_subtask: dict[int, list[LLMCall]] = {}
        self._in_flight = 0

    def for_subtask(self, subtask_id: int) -> SubtaskLLM:
        """The LLM for one subtask: its calls are recorded for its result."""
        with self._lock:
            calls = self._by_subtask.setdefault(subtask_id, [])
        return SubtaskLLM(self, subtask_id, calls)

    def settle(self, subtask_id: int, calls: list[LLMCall]) -> None:
        """Count a finished subtask's calls, as its result records them (a subtask
        finished before a resume made its calls in an earlier process)."""
        with self._lock:
            self._by_subtask[subtask_id] = list(calls)

    def spent(self, excluding: int | None = None) -> tuple[int, int]:
        """LLM calls (with those under way) and tokens the run has spent: before
        execution, and by the subtasks so far (but the calls settled for
        ``excluding``)."""
        with self._lock:
            made = [c for i, calls in self._by_subtask.items() if i != excluding for c in calls]
            return (self._spent[0] + len(made) + self._in_flight,
                    self._spent[1] + sum(c.prompt_tokens + c.completion_tokens for c in made))

    def _reserve(self) -> tuple[int, int]:
        """The spend to check a new call against, with a place held for it."""
        with self._lock:
            made = [c for calls in self._by_subtask.values() for c in calls]
            used = self._spent[0] + len(made) + self._in_flight
            tokens = self._spent[1] + sum(c.prompt_tokens + c.completion_tokens for c in made)
            self._in_flight += 1
            return used, tokens

    def _release(self, calls: list[LLMCall], new: list[LLMCall]) -> None:
        with self._lock:
            self._in_flight -= 1
            calls.extend(new)


class SubtaskLLM:
    """The run's LLM as one subtask's expert (see :class:`ExpertLLM`)."""

    def __init__(self, run: ExpertLLM, subtask_id: int, calls: list[LLMCall]) -> None:
        self._run = run
        self.subtask_id = subtask_id
        self.calls = calls
        """This subtask's LLM calls (every endpoint tried), for its result."""

    def ask(self, messages: list[BaseMessage], *, need: int,
            schema: dict[str, Any] | None = None) -> tuple[str, str]:
        """One expert call: the reply's text (with a ``schema``, the structured
        answer as JSON) and the name of the endpoint that gave it.

        Raises:
            LLMBudgetError: the run has used its LLM calls or tokens (the message names
                the limit); no request was made.
            ToolExecutionError: no LLM is configured, or every endpoint failed (the
                message says what failed and what to check).
        """
        spent = self._run._reserve()
        new: list[LLMCall] = []
        try:
            raw = complete(self._run.settings, EXPERT_ROLE, messages, calls=new, need=need,
                           schema=schema, turn=self._run.turn, spent=spent, cheapest=True)
        except LLMBudgetError:
            raise
        except LLMNotConfiguredError:
            raise ToolExecutionError(NO_LLM, fix=Fix(
                say="{}", controls=[Control(kind="llm")])) from None
        except llm_call_errors() as exc:
            raise ToolExecutionError(describe_llm_error(exc, EXPERT_ROLE),
                                     fix=llm_error_fix(exc)) from exc
        finally:
            self._run._release(self.calls, new)
        answered = new[-1]
        return reply_text(raw), answered.endpoint or answered.llm
