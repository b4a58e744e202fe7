"""Human approval between selection and execution, by the run's approval policy.

``plan``: the validated plan and the selected models are shown (a LangGraph interrupt);
the human approves, edits the plan (re-validated, then selected again) or rejects it
(the run ends with the reason). ``risky``: the same, but only when a selected tool does
more than read its inputs (its declared risk level). ``never``: straight on.

A resume value is ``"approve"``, ``{"action": "approve"}``, ``{"action": "reject",
"reason": "..."}`` or ``{"action": "edit", "plan": [...]}``, optionally with ``"who"``;
an edited plan is a plan object (a list of subtasks or ``{"subtasks": [...]}``), never
JSON text to be guessed at.
Every decision is appended to ``approvals``, the run's audit trail. Before it asks,
the stage sets the run's status to ``waiting`` (a step of its own, since an interrupted
step writes nothing), so the thread's state says so, on the LangGraph server too.
"""

from __future__ import annotations

import datetime
from typing import Any, Literal

from langgraph.config import get_stream_writer
from langgraph.runtime import Runtime
from langgraph.types import Command, interrupt

from hugginggpt.graph.context import Context, context_of
from hugginggpt.graph.state import Approval, State
from hugginggpt.nodes.planning.validation import PlanParseError, plan_object, validate_plan
from hugginggpt.tools.experts.registry import find_tools

__all__ = ["approve", "risky_subtasks", "READ_ONLY"]

READ_ONLY = "read-only"
Next = Literal["approve", "execute", "select", "abort"]


def risky_subtasks(state: State) -> list[dict[str, Any]]:
    """Subtasks whose selected tool declares a risk above read-only."""
    found = []
    for subtask in state.plan:
        selection = state.selections.get(subtask.id)
        if selection is None or selection.model is None or selection.backend is None:
            continue
        tools = find_tools(subtask.task, selection.model, [selection.backend])
        if tools and tools[0].risk != READ_ONLY:
            found.append({"id": subtask.id, "task": subtask.task, "model": selection.model,
                          "backend": selection.backend, "risk": tools[0].risk})
    return found


def _request(state: State, policy: str, risky: list[dict[str, Any]],
             problems: list[str]) -> dict[str, Any]:
    """What the human is shown."""
    return {
        "type": "approval",
        "policy": policy,
        "request": state.request,
        "plan": [s.model_dump() for s in state.plan],
        "selections": {str(k): {"model": v.model, "backend": v.backend, "reason": v.reason}
                       for k, v in state.selections.items()},
        "risky": risky,
        "problems": problems,
        "answer_with": ['"approve"', '{"action": "reject", "reason": "..."}',
                        '{"action": "edit", "plan": [...]}'],
    }


def _decision(answer: Any) -> tuple[str, dict[str, Any]]:
    if isinstance(answer, str):
        return answer.strip().lower(), {}
    if isinstance(answer, dict):
        return str(answer.get("action", "")).strip().lower(), answer
    if answer is True:
        return "approve", {}
    return "", {}


def _record(policy: str, action: str, answer: dict[str, Any], detail: str) -> Approval:
    return Approval(
        policy=policy,  # type: ignore[arg-type]
        action=action,  # type: ignore[arg-type]
        who=str(answer.get("who") or "unknown"),
        at=datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        detail=detail,
    )


def approve(state: State, runtime: Runtime[Context]) -> Command[Next]:
    """Ask for approval when the policy wants it; go on, re-select or abort."""
    context = context_of(runtime)
    policy = context.approval
    risky = risky_subtasks(state) if policy == "risky" else []
    if policy == "never" or state.approved or (policy == "risky" and not risky):
        return Command(goto="execute")
    if state.status != "waiting":
        return Command(goto="approve", update={"status": "waiting"})
    get_stream_writer()({"type": "stage", "stage": "approve", "event": "start"})
    problems: list[str] = []
    while True:  # each pass is one interrupt; an invalid edit is shown back with its problems
        action, answer = _decision(interrupt(_request(state, policy, risky, problems)))
        if action == "approve":
            return Command(goto="execute", update={
                "approved": True, "status": "running",
                "approvals": [_record(policy, "approve", answer, "")]})
        if action == "reject":
            reason = str(answer.get("reason") or "no reason given")
            return Command(goto="abort", update={
                "status": "aborted", "approved": False,
                "abort_reason": f"the plan was rejected: {reason}",
                "approvals": [_record(policy, "reject", answer, reason)]})
        if action == "edit":
            try:
                items = plan_object(answer.get("plan"), "the edited plan")
            except PlanParseError as exc:
                problems = [str(exc)]
                continue
            subtasks, problems = validate_plan(items, max_subtasks=context.max_subtasks)
            if problems:
                continue
            return Command(goto="select", update={
                "plan": subtasks, "approved": True, "selections": None, "results": None,
                "status": "running",
                "approvals": [_record(policy, "edit", answer,
                                      f"{len(subtasks)} subtask(s): "
                                      + ", ".join(s.task for s in subtasks))]})
        problems = [f"unknown answer {answer or action!r}: approve, reject or edit"]
