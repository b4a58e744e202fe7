"""Human approval between selection and execution, by the run's approval policy.

``plan``: the validated plan and the selected models are shown (a LangGraph interrupt);
the human approves, edits the plan (re-validated, then selected again) or rejects it
(the run ends with the reason). ``risky``: the same, but only when a selected tool does
more than read its inputs (its declared risk level). ``never``: straight on.

A resume value is ``"approve"``, ``{"action": "approve"}``, ``{"action": "reject",
"reason": "..."}`` or ``{"action": "edit", "plan": [...]}``, optionally with ``"who"``;
an edited plan is a plan object (a list of subtasks or ``{"subtasks": [...]}``), never
JSON text to be guessed at.
Before any of that, when the run allows downloads (``download`` ``ask``, or ``yes`` for a
model that runs its own code), the stage asks for consent to download each selected
local model missing from the cache: the question (an interrupt of ``type`` ``download``)
shows each model's size, files, license and gating, as the Hub says; the answer is
``"approve"`` (every download), ``{"action": "reject"}`` (none) or ``{"downloads":
{"MODEL": true | false}}``. Consent is kept in ``downloads`` for the thread; a refused
model leaves the subtask's candidates (the next one runs, or the subtask fails saying
how to get the model).
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
from hugginggpt.graph.state import Approval, Failure, Selection, State
from hugginggpt.nodes.planning.validation import PlanParseError, plan_object, validate_plan
from hugginggpt.nodes.selection import READ_ONLY, risk_of
from hugginggpt.tools.errors import Control, Fix, TransientToolError, joined
from hugginggpt.tools.experts.local import LOCAL_BACKEND
from hugginggpt.tools.experts.local.download import DownloadError, DownloadPlan, plan_download
from hugginggpt.tools.experts.local.hub_cache import card_for, is_cached, is_hub_id

__all__ = ["approve", "risky_subtasks", "READ_ONLY"]

Next = Literal["approve", "execute", "select", "abort"]


def risky_subtasks(state: State) -> list[dict[str, Any]]:
    """Subtasks whose selected tool declares a risk above read-only."""
    found = []
    for subtask in state.plan:
        selection = state.selections.get(subtask.id)
        if selection is not None and (risk := risk_of(subtask, selection)) is not None:
            found.append({"id": subtask.id, "task": subtask.task, "model": selection.model,
                          "backend": selection.backend, "risk": risk})
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


# ----------------------------------------------------------------------------- downloads


def _needs_download(model: str, task: str, catalog: str | None) -> bool:
    card = card_for(model, task, catalog)
    return is_hub_id(model) and not is_cached(model, card.revision if card else None)


def _to_ask(state: State, context: Context) -> dict[str, str]:
    """Selected local models to download whose consent is not yet known: model -> task.
    With ``ask`` every one; with ``yes`` those that run their own code."""
    mode = context.download or "no"
    if mode == "no":
        return {}
    found: dict[str, str] = {}
    for subtask in state.plan:
        chosen = state.selections.get(subtask.id)
        if chosen is None or chosen.backend != LOCAL_BACKEND or chosen.model is None:
            continue
        model = chosen.model
        if model in state.downloads or not _needs_download(model, subtask.task, context.catalog):
            continue
        card = card_for(model, subtask.task, context.catalog)
        if mode == "ask" or (card is not None and card.trust_remote_code):
            found.setdefault(model, subtask.task)
    return found


def _without(selections: dict[int, Selection], drop: dict[str, str],
             fixes: dict[str, Fix] | None = None) -> dict[int, Selection]:
    """The selections whose local candidates in ``drop`` (model -> why) are removed: the
    next candidate takes the place of a dropped choice; none left, the subtask has no
    model, the reason says why and the fix how to get it (``fixes``: model -> how)."""
    changed: dict[int, Selection] = {}
    for subtask_id, chosen in selections.items():
        kept = [c for c in chosen.candidates
                if not (c.backend == LOCAL_BACKEND and c.model in drop)]
        if len(kept) == len(chosen.candidates):
            continue
        dropped = [c.model for c in chosen.candidates
                   if c.backend == LOCAL_BACKEND and c.model in drop]
        why = "; ".join(dict.fromkeys(drop[model] for model in dropped))
        top = kept[0] if kept else None
        reason = (f"{why}; next candidate {top.model} ({top.backend})" if top else
                  f"{why}; no other model can run {chosen.task}")
        changed[subtask_id] = chosen.model_copy(update={
            "candidates": kept, "model": top.model if top else None,
            "backend": top.backend if top else None, "reason": reason,
            "fix": chosen.fix if top else joined((fixes or {}).get(m) for m in dropped)})
    return changed


def _unasked(state: State, context: Context) -> dict[str, str]:
    """Fallback local candidates that would need a download nobody agreed to (with
    ``ask``; with ``yes``, those that run their own code): they are never tried."""
    mode = context.download or "no"
    drop: dict[str, str] = {}
    if mode == "no":
        return drop
    for subtask in state.plan:
        chosen = state.selections.get(subtask.id)
        for candidate in (chosen.candidates[1:] if chosen else []):
            model = candidate.model
            if candidate.backend != LOCAL_BACKEND or state.downloads.get(model) or \
                    not _needs_download(model, subtask.task, context.catalog):
                continue
            card = card_for(model, subtask.task, context.catalog)
            if mode == "ask" or (card is not None and card.trust_remote_code):
                drop[model] = f"{model} is not cached and its download was not asked for"
    return drop


def _download_answers(answer: Any, models: list[str]) -> dict[str, bool] | None:
    """Consent per model from a resume value; None when it is not an answer."""
    action, fields = _decision(answer)
    if action == "approve":
        return dict.fromkeys(models, True)
    if action == "reject":
        return dict.fromkeys(models, False)
    given = fields.get("downloads") if isinstance(answer, dict) else None
    if isinstance(given, dict):
        return {m: given.get(m) is True for m in models}
    return None


def _ask_downloads(state: State, context: Context, asks: dict[str, str]) -> Command[Next]:
    """One consent question for the downloads in ``asks``, shown with what the Hub says
    each costs; a model the Hub cannot plan leaves the candidates with the reason."""
    plans: dict[str, DownloadPlan] = {}
    failed: dict[str, str] = {}
    for model, task in asks.items():
        try:
            plans[model] = plan_download(model, card_for(model, task, context.catalog))
        except (DownloadError, TransientToolError) as exc:
            failed[model] = f"{model} cannot be downloaded: {exc}"
    if not plans:
        return Command(goto="approve", update={
            "selections": _without(state.selections, failed), "status": "running"})
    problems: list[str] = []
    while True:
        answer = interrupt({
            "type": "download", "policy": "download", "request": state.request,
            "downloads": [p.as_dict() | {"task": asks[m]} for m, p in plans.items()],
            "not_downloadable": list(failed.values()), "problems": problems,
            "answer_with": ['"approve" (every download)', '{"action": "reject"} (none)',
                            '{"downloads": {"MODEL": true | false}}']})
        consent = _download_answers(answer, list(plans))
        if consent is not None:
            break
        problems = [f"unknown answer {answer!r}: approve, reject or downloads"]
    fields = answer if isinstance(answer, dict) else {}
    refused = {m: f"the download of {plans[m].model} ({plans[m].size_mb:.2f} MB) was refused"
               for m, yes in consent.items() if not yes}
    later = {m: Fix(say="get it later with {}",
                    controls=[Control(kind="models", name="download", value=m)])
             for m in refused}
    detail = "; ".join(f"{'yes' if yes else 'no'}: {plans[m].describe()}"
                       for m, yes in consent.items())
    return Command(goto="approve", update={
        "downloads": {**state.downloads, **consent}, "status": "running",
        "selections": _without(state.selections, {**failed, **refused}, later),
        "approvals": [_record("download", "approve" if any(consent.values()) else "reject",
                              fields, detail)]})


def _record(policy: str, action: str, answer: dict[str, Any], detail: str) -> Approval:
    return Approval(
        policy=policy,  # type: ignore[arg-type]
        action=action,  # type: ignore[arg-type]
        who=str(answer.get("who") or "unknown"),
        at=datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        detail=detail,
    )


def approve(state: State, runtime: Runtime[Context]) -> Command[Next]:
    """Ask for consent to downloads, then for approval when the policy wants it; go on,
    re-select or abort."""
    context = context_of(runtime)
    if asks := _to_ask(state, context):
        if state.status != "waiting":
            return Command(goto="approve", update={"status": "waiting"})
        get_stream_writer()({"type": "stage", "stage": "approve", "event": "start"})
        return _ask_downloads(state, context, asks)
    if unasked := _without(state.selections, _unasked(state, context)):
        return Command(goto="approve", update={"selections": unasked})
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
                "why_aborted": Failure(reason=f"the plan was rejected: {reason}"),
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
