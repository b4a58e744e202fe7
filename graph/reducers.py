"""How writes to a state key merge: the reducers of :class:`~hugginggpt.graph.state.State`.

A key written by parallel work (the subtasks of one step) or by every turn on a thread
has a reducer, documented here: how the values merge, and what clears them.
"""

from __future__ import annotations

from typing import Any

from langchain_core.messages import AnyMessage
from langgraph.graph.message import add_messages

__all__ = ["merge_by_id", "append", "append_all", "add_all_messages", "this_run"]


def merge_by_id(current: dict[int, Any] | None, update: dict[int, Any] | None) -> dict[int, Any]:
    """Reducer for maps keyed by subtask id.

    Updates from parallel writers merge key by key, the later write winning for the same
    subtask. ``None`` clears the map: the planner sends it when a new plan starts, so
    results of an earlier turn on the thread never mix with this one's.
    """
    if update is None:
        return {}
    return {**(current or {}), **update}


def append(current: list[Any] | None, update: list[Any] | None) -> list[Any]:
    """Reducer for the thread's logs (conversation turns, approvals): an
    update's items are appended after the current ones, in the order the node gives
    them; nothing is ever replaced or removed. Parallel writers in one step are appended
    in the order LangGraph applies their writes."""
    return [*(current or []), *(update or [])]


def append_all(current: list[Any], updates: list[list[Any] | None]) -> list[Any]:
    """:func:`append` over a batch of updates: the reducer of the logs (``history``,
    ``approvals``), each a LangGraph ``DeltaChannel``. A checkpoint then stores the
    updates of its own step, not the whole log again, so a thread's checkpoints grow with
    what each turn adds, not with the square of its turns. LangGraph rebuilds a log from
    the writes since its last full snapshot (one every 100 updates)."""
    return [*current, *(item for update in updates for item in update or [])]


def add_all_messages(current: list[AnyMessage], updates: list[Any]) -> list[AnyMessage]:
    """LangChain's ``add_messages`` over a batch of updates (ids, replacements by id,
    ``RemoveMessage``), for ``messages`` as a ``DeltaChannel``."""
    merged: Any = current
    for update in updates:
        merged = add_messages(merged, update)
    return list(merged)



def _turn(call: Any) -> int:
    return int(call.get("turn", 0) if isinstance(call, dict) else call.turn)


def this_run(current: list[Any] | None, update: list[Any] | None) -> list[Any]:
    """Reducer for ``llm_calls``: the records of the newest run on the thread only.

    An update's records are appended; those of an earlier run (a lower ``turn``) are
    dropped, and ``None`` clears the list (the planner sends it when a run begins with
    no LLM call, so a run's list never shows the previous run's calls). The SQLite
    checkpointer stores every channel again in every checkpoint, so a channel that kept
    the whole thread's records would still grow each checkpoint with the thread's
    length (checkpoint bytes with the square of its turns, issue 16). The records of an
    earlier run are in that run's own checkpoints, which the trace reads
    (:func:`hugginggpt.trace.thread_runs`); and a run's budget counts only its own.
    """
    if update is None:
        return []
    merged = [*(current or []), *update]
    newest = max((_turn(c) for c in merged), default=0)
    return [c for c in merged if _turn(c) == newest]
