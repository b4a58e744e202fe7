"""Replaying a thread's latest run from its recorded LLM replies (``hugginggpt replay``).

The run's settings come from its state; a :class:`~hugginggpt.tools.llm.replay.Recording`
of its LLM calls stands in for the endpoints of the roles that had an LLM; what the run
did without one (the offline planner, a fixed plan, the ranking, the template
responder) is deterministic and is recomputed. The experts run again for real (the
result cache is off for a replay: it would serve the recorded run's own results). Then the
outcome is compared with the recording, and :func:`replayed_parts` says which part came
from where.
"""

from __future__ import annotations

from typing import Any

from hugginggpt.graph.context import Context
from hugginggpt.graph.state import FINISHED
from hugginggpt.tools.experts.llm import LLM_BACKEND
from hugginggpt.tools.llm.config import EXPERT_ROLE, ROLES
from hugginggpt.tools.llm.records import stable_text
from hugginggpt.tools.llm.replay import Recording

__all__ = ["replay_setup", "differences", "replayed_parts", "llm_roles"]

_WITHOUT_LLM = {"planner": ("offline", "fixed plan", "none"), "selector": ("ranking only",),
                "responder": ("template (no LLM",)}
"""How each stage's label (``State.planner`` ...) begins when the run had no LLM for it."""


def llm_roles(values: dict[str, Any], calls: list[Any]) -> set[str]:
    """The roles the recorded run gave to an LLM: those with recorded calls, those
    whose stage does not say it ran without one (a selector with no close call to ask
    about made no call, yet had an LLM), and the ``llm`` backend's expert when it was a
    candidate (its LLM could run subtasks, even if none did)."""
    expert = any(c.backend == LLM_BACKEND for s in (values.get("selections") or {}).values()
                 for c in s.candidates)
    return {c.role for c in calls} | ({EXPERT_ROLE} if expert else set()) | {
        role for role in ROLES if not str(values.get(role) or "").startswith(_WITHOUT_LLM[role])}


def replay_setup(values: dict[str, Any]) -> tuple[dict[str, Any], Any, Recording]:
    """What a replay of a thread's latest run needs, from the thread's state: the graph
    input (that run's request and files, and the conversation before it), the run's
    settings with the recording in place of the LLMs, and the recording. The calls in
    ``values["llm_calls"]`` must hold their replies: read from the store beside the
    checkpoints first (:func:`~hugginggpt.tools.llm.transcripts.ahydrate`).

    Raises:
        ValueError: the thread has no run, or no settings recorded for its run.
    """
    if not values.get("request"):
        raise ValueError("the thread has no run to replay")
    settings = values.get("settings") or {}
    if not settings:
        raise ValueError("the thread's run recorded no settings (it predates traces)")
    history = list(values.get("history") or [])
    finished = values.get("status") in FINISHED and not values.get("plan_attempts")
    turn = len(history) // 2 - (1 if finished else 0)
    calls = [c for c in values.get("llm_calls") or [] if c.turn == turn]
    recording = Recording(calls, roles=llm_roles(values, calls))
    known = set(Context.model_fields)
    context = Context(**({k: v for k, v in settings.items() if k in known}
                         | {"replay": recording, "approval": "never", "cache": False}))
    graph_input = {"request": values["request"], "files": list(values.get("files") or []),
                   "history": history[: 2 * turn]}
    return graph_input, context, recording


def replayed_parts(replayed: dict[str, Any], recording: Recording) -> dict[str, str]:
    """For each stage that ran in the replay, where its LLM side came from: the recorded
    replies, or a recomputation without an LLM (what the stage says it used)."""
    parts = {}
    for role in ROLES:
        label = str(replayed.get(role) or "")
        if not label:
            continue  # the stage did not run
        count = sum(c.role == role for c in replayed.get("llm_calls") or [])
        if not recording.serves(role):
            parts[role] = f"recomputed without an LLM: {label}"
        elif count:
            parts[role] = f"from {count} recorded LLM call{'s' if count > 1 else ''}"
        else:
            parts[role] = "from the recording, which needed no LLM call here"
    experts = sum(c.role == EXPERT_ROLE for c in replayed.get("llm_calls") or [])
    if experts:  # the llm backend's subtasks
        parts[EXPERT_ROLE] = f"from {experts} recorded LLM call{'s' if experts > 1 else ''}"
    return parts


def differences(recorded: dict[str, Any], replayed: dict[str, Any]) -> list[str]:
    """Where a replay's outcome differs from the recorded run's: plan, selections,
    status and response."""
    def plan(values: dict[str, Any]) -> list[dict[str, Any]]:
        return [s.model_dump(mode="json") for s in values.get("plan") or []]

    def selections(values: dict[str, Any]) -> dict[int, tuple[Any, ...]]:
        return {k: (v.model, v.backend, v.reason)
                for k, v in (values.get("selections") or {}).items()}

    found = []
    if plan(recorded) != plan(replayed):
        found.append(f"plan: recorded {plan(recorded)}, replayed {plan(replayed)}")
    if selections(recorded) != selections(replayed):
        found.append(f"selections: recorded {selections(recorded)}, "
                     f"replayed {selections(replayed)}")
    for key in ("status", "abort_reason", "response"):
        if stable_text(str(recorded.get(key))) != stable_text(str(replayed.get(key))):
            found.append(f"{key}: recorded {str(recorded.get(key))[:300]!r}, "
                         f"replayed {str(replayed.get(key))[:300]!r}")
    return found
