"""Stage 2, model selection: one model (and its fallbacks) per subtask.

Candidates are filtered by task type and by the backends this run may use, then ranked
on model-card facts. The selector LLM is asked only when the top candidates are close;
otherwise the ranking decides, and the reason says so (:mod:`hugginggpt.nodes.selection`).
Subtasks chosen already, while the plan streamed, keep their choice.
"""

from __future__ import annotations

from typing import Any, Literal

from langgraph.config import get_stream_writer
from langgraph.runtime import Runtime

from hugginggpt.graph.context import Context, context_of
from hugginggpt.graph.state import State, streamed_for
from hugginggpt.nodes.selection import ModelChoice, Selector, signature
from hugginggpt.tools.llm.transcripts import keep

__all__ = ["select", "route_after_select", "ModelChoice", "signature"]


def select(state: State, runtime: Runtime[Context]) -> dict[str, Any]:
    """Assign a model, a backend and ordered fallbacks to every subtask that has none
    yet (a streamed plan's subtasks were given theirs as they arrived).

    Subtasks with the same :func:`signature` get the same choice (one ranking, at most
    one selector call).
    """
    context = context_of(runtime)
    get_stream_writer()({"type": "stage", "stage": "select", "event": "start"})
    selector = Selector(state, context)
    kept = {i: s.selection for i, s in streamed_for(state.plan, state.streamed).items()}
    todo = [s for s in state.plan if s.id not in kept]
    selections = kept | (selector.select(todo) if todo else {})
    return {"selections": selections, "selector": selector.label,
            "llm_calls": keep(selector.calls)}


def route_after_select(state: State) -> Literal["approve", "execute"]:
    """Ask for approval only when some subtask got a model; with nothing to run,
    execution still gives every subtask its result (failed: no model, with the reason;
    its dependents skipped), as it does in a plan where only some can run."""
    runnable = any(s.model for s in state.selections.values())
    return "approve" if runnable else "execute"
