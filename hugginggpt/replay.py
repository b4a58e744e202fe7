"""Replaying a thread's latest run from its recorded LLM replies (``hugginggpt replay``).

The run's settings come from its state; a :class:`~hugginggpt.tools.llm.replay.Recording`
of its LLM calls stands in for the endpoints; the experts run again for real. Then the
outcome is compared with the recording.
"""

from __future__ import annotations

from dataclasses import fields
from typing import Any

from hugginggpt.graph.context import Context
from hugginggpt.graph.state import FINISHED
from hugginggpt.tools.llm.records import stable_text
from hugginggpt.tools.llm.replay import Recording

__all__ = ["replay_setup", "differences"]


def replay_setup(values: dict[str, Any]) -> tuple[dict[str, Any], Any, Recording]:
    """What a replay of a thread's latest run needs, from the thread's state: the graph
    input (that run's request and files, and the conversation before it), the run's
    settings with the recording in place of the LLMs, and the recording.

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
    recording = Recording([c for c in values.get("llm_calls") or [] if c.turn == turn])
    known = {f.name for f in fields(Context)}
    context = Context(**({k: v for k, v in settings.items() if k in known}
                         | {"replay": recording, "approval": "never"}))
    graph_input = {"request": values["request"], "files": list(values.get("files") or []),
                   "history": history[: 2 * turn]}
    return graph_input, context, recording


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
