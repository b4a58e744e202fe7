"""Stage 4, response generation: the responder LLM explains what happened.

The LLM sees a digest of the results (text outputs, artifact paths, errors, and where a
model's quality is limited, from its card), never the bytes of an image or audio file.
With no responder LLM configured, or when it fails, the answer is written in words from
the results (:mod:`hugginggpt.nodes.responding`), and its last line says so; the digest
with scores and candidates is what ``--verbose`` and ``--json`` add.

Both ends of a run are here: :func:`respond` and :func:`abort`. Each leaves a result for
every planned subtask (one that never ran is skipped with the reason), so a finished
run always accounts for its whole plan, and sets the run's status from them (see
:data:`~hugginggpt.graph.state.RunStatus`).
"""

from __future__ import annotations

import json
from typing import Any

from langchain_core.messages import HumanMessage, SystemMessage
from langgraph.config import get_stream_writer
from langgraph.runtime import Runtime

from hugginggpt.graph.context import Caller, Context, context_of
from hugginggpt.graph.state import ChatTurn, Failure, State, SubtaskResult, outcome, streamed_for
from hugginggpt.nodes.conversation import reply_messages
from hugginggpt.nodes.demand import tier_needed
from hugginggpt.nodes.prompts import RESPONDER_SYSTEM, RESPONDER_USER
from hugginggpt.nodes.responding.advice import configure_llm, reason_and_fix, said
from hugginggpt.nodes.responding.answer import NO_RESPONDER, small_talk, template_answer
from hugginggpt.tools.artifacts import is_artifact_ref, where_shown
from hugginggpt.tools.errors import LLMNotConfiguredError
from hugginggpt.tools.experts.registry import find_tools
from hugginggpt.tools.llm.client import complete
from hugginggpt.tools.llm.config import ConfigError, routing_config
from hugginggpt.tools.llm.errors import describe_llm_error, llm_call_errors, llm_error_fix
from hugginggpt.tools.llm.records import LLMCall, run_spend
from hugginggpt.tools.llm.replies import reply_text
from hugginggpt.tools.llm.transcripts import keep
from hugginggpt.tools.text import MAX_MESSAGE, clip

__all__ = ["respond", "abort", "results_digest", "template_response", "unrun_results"]

_MAX_INLINE = 600
_MAX_WHY = MAX_MESSAGE
"""A responder LLM's failure is told whole in the answer's last line (up to this bound
on a pathological message)."""
NOT_ASKED = "The responder LLM was not asked: it is the planner's, which had just failed"
"""Why the template answers when the planner LLM just failed on the same endpoints."""
_MAX_ARG = 300
"""Argument values are shown cut to this length: the plan may carry long texts."""


def _show(value: Any, workspace: str | None) -> str:
    """An output as the LLM sees it: a file as its reference (id, kind, where the caller
    finds it, size and a short preview), never its bytes; long text cut to its
    beginning."""
    if is_artifact_ref(value):
        if workspace:
            value = {**value, "path": where_shown(value, workspace)}
        preview = f", preview {str(value['preview'])[:200]!r}" if "preview" in value else ""
        size = f", {value['bytes']} bytes" if "bytes" in value else ""
        return (f"{value['kind']} file {value['path']} "
                f"(artifact {value['artifact_id']}{size}{preview})")
    text = value if isinstance(value, str) else json.dumps(value)
    if len(text) > _MAX_INLINE:
        text = f"{text[:_MAX_INLINE]} ...(truncated: {len(text)} characters in all)"
    return text.replace("\n", "\n    ")  # continuation lines stay inside their subtask


def _limits(task: str, model: str | None, backend: str | None) -> str:
    """What the card of the model that ran says about its limits (the lite engines' cards
    do: a robotic voice, US English only), or ""."""
    if not model or not backend:
        return ""
    return next((card.limits for t in find_tools(task, model, [backend]) for card in t.cards
                 if card.id == model and card.task == task and card.limits), "")


def results_digest(state: State, workspace: str | None = None,
                   caller: Caller = "python") -> str:
    """What ran, with which model and why, what came out, what failed and its fix (said
    for ``caller``): one block per subtask, in plan order (files where the caller finds
    them, given ``workspace``)."""
    if not state.plan:
        return "No expert subtasks were needed for this request."
    lines = []
    for st in state.plan:
        selection = state.selections.get(st.id)
        result = state.results.get(st.id)
        args = {name: clip(value, _MAX_ARG) for name, value in st.args.items()}
        lines.append(f"Subtask {st.id}: {st.task} args={json.dumps(args)} dep={st.dep}")
        if selection and selection.model:
            fix = f"; {said(selection.fix, caller)}" if selection.fix else ""
            lines.append(f"  model: {selection.model} on {selection.backend} "
                         f"({selection.reason}{fix})")
        if result is None:
            reason = selection.reason if selection else "not run"
            lines.append(f"  status: not run ({reason})")
            continue
        if result.status == "done":
            if result.model and selection and result.model != selection.model:
                lines.append(f"  ran on fallback model {result.model} ({result.backend})")
            lines.append(f"  status: done in {result.latency_s:.2f}s, {result.attempts} attempt(s)")
            if limits := _limits(st.task, result.model, result.backend):
                lines.append(f"  quality: {limits}")
            if result.endpoint:
                lines.append(f"  answered by the LLM endpoint {result.endpoint}")
            if result.cached:
                lines.append("  from the result cache: an earlier run's output for the same "
                             "inputs; no model was called (say so)")
            for name, value in result.outputs.items():
                lines.append(f"  output {name}: {_show(value, workspace)}")
            if result.confidence is not None and result.confidence.uncertain:
                lines.append(f"  uncertain: {result.confidence.uncertain} (say so)")
        else:
            lines.append(f"  status: {result.status}: {result.error}")
            if result.failure is not None and result.failure.fix is not None:
                lines.append(f"  to fix it: {said(result.failure.fix, caller)}")
    return "\n".join(lines)


def template_response(state: State, why: str | None = None,
                      context: Context | None = None) -> str:
    """The answer in words from the results, used without a responder LLM
    (:mod:`hugginggpt.nodes.responding.answer`). ``why`` says why the responder LLM did
    not write it (it failed, or :data:`NOT_ASKED`); None means none is configured.
    ``context``: the run's, for where its files are and who asks (else a Python
    caller's answer, with the files' workspace paths)."""
    caller = context.caller if context else "python"
    notes = [state.planner_fallback + "."] if state.planner_fallback else []
    if why == NOT_ASKED and notes:  # the same LLM is down: one line says it for both
        notes, why = [f"{state.planner_fallback}, and this answer without an LLM."], ""
    if not state.plan:
        if not why:
            text = small_talk(state.request, caller)
        else:
            text = f"I could not answer this without the responder LLM. ({why})"
        return "\n\n".join([text, *(f"({note})" for note in notes)])
    if why is None:
        notes.append(f"{_capital(NO_RESPONDER)}; to have an LLM write the answer, "
                     f"{configure_llm(caller)}.")
    elif why:
        notes.append(f"{why.rstrip('.')}; this answer was {NO_RESPONDER}.")
    return template_answer(state.plan, state.results, state.request, notes,
                           context.workspace if context else None, state.selections, caller)


def _capital(text: str) -> str:
    return text[:1].upper() + text[1:]


def _planner_endpoint_down(state: State, context: Context) -> str | None:
    """Why the responder LLM is not asked, when the planner LLM just failed on the very
    endpoints it would use (the run has fallen back to the offline planner): asking
    again would make the user wait a second time for the same dead endpoint."""
    if not state.planner_fallback:
        return None
    if context.replay is not None:  # as recorded: the responder was asked, or it was not
        asked = any(call.role == "responder" for call in context.replay.calls)
        return None if asked else NOT_ASKED
    turn = len(state.history) // 2
    failed = {c.endpoint for c in state.llm_calls
              if c.turn == turn and c.role == "planner" and not c.ok}
    try:
        config = routing_config(context)
    except ConfigError:
        return None
    endpoints = {e.name for e in config.for_role("responder")} if config else set()
    if not endpoints or not endpoints <= failed:
        return None
    return NOT_ASKED


def unrun_results(state: State, why: str) -> dict[int, SubtaskResult]:
    """Results for the planned subtasks that have none: skipped, saying ``why`` (and
    the selection's reason when no model was chosen)."""
    missing: dict[int, SubtaskResult] = {}
    for st in state.plan:
        if st.id in state.results:
            continue
        selection = state.selections.get(st.id)
        reason = f"; {selection.reason}" if selection and not selection.model else ""
        missing[st.id] = SubtaskResult(id=st.id, task=st.task, status="skipped",
                                       error=f"not run: {why}{reason}",
                                       failure=Failure(reason=f"{why}{reason}"))
    return missing


def respond(state: State, runtime: Runtime[Context]) -> dict[str, Any]:
    """Write the answer, and set the run's status from its results."""
    context = context_of(runtime)
    get_stream_writer()({"type": "stage", "stage": "respond", "event": "start"})
    # execution leaves a result for every subtask; this only guards the invariant
    missing = unrun_results(state, "the run reached its answer before this subtask ran")
    if missing:
        state = state.model_copy(update={"results": state.results | missing})
    calls: list[LLMCall] = []
    failures = sum(r.status != "done" for r in state.results.values())
    if (down := _planner_endpoint_down(state, context)) is not None:
        responder = "template (responder LLM not asked: the planner's had just failed)"
        text = template_response(state, down, context)
    else:
        try:
            reply = complete(
                context, "responder",
                [SystemMessage(RESPONDER_SYSTEM),
                 HumanMessage(RESPONDER_USER.format(request=state.request,
                                                    results=results_digest(
                                                        state, context.workspace,
                                                        context.caller)))],
                calls=calls,
                need=tier_needed("responder", plan_size=len(state.plan), failures=failures),
                turn=len(state.history) // 2,
                spent=run_spend(state.llm_calls, len(state.history) // 2),
            )
            text = reply_text(reply)
            responder = f"llm: {calls[-1].llm}"
            if not text.strip():  # nothing said (a small local model may): said without it
                responder = f"template (the responder LLM {calls[-1].llm} replied nothing)"
                text = template_response(state, "The responder LLM replied nothing", context)
            elif state.planner_fallback:
                text += f"\n\n({state.planner_fallback}.)"
        except LLMNotConfiguredError:
            responder = "template (no LLM configured)"
            text = template_response(state, None, context)
        except llm_call_errors() as exc:
            responder = "template (responder LLM failed)"
            failure = Failure(reason=clip(describe_llm_error(exc, "responder"), _MAX_WHY),
                              fix=llm_error_fix(exc))  # variable names keep their case
            text = template_response(state, _capital(reason_and_fix(failure, context.caller)),
                                     context)
    return {
        "response": text,
        "responder": responder,
        "llm_calls": keep(calls),
        "results": missing,
        "status": outcome(state.plan, state.results),
        "plan_attempts": 0,
        "history": [ChatTurn(role="user", content=state.request),
                    ChatTurn(role="assistant", content=text)],
        "messages": reply_messages(state, text, context.workspace),
    }


def _ran(results: dict[int, SubtaskResult]) -> str:
    """What ran while the plan streamed, for an abort's reason ("" when nothing did)."""
    if not results:
        return ""
    return ("\nWhile the plan streamed, these subtasks ran: " + "; ".join(
        f"#{r.id} {r.task}: {r.status}" for r in results.values()) + ".")


def abort(state: State, runtime: Runtime[Context]) -> dict[str, Any]:
    """End the run with the reason, keeping everything computed so far; a planned
    subtask (a rejected plan's) is skipped with the reason."""
    context = context_of(runtime)
    why = state.why_aborted or Failure(reason=state.abort_reason or "no reason was given")
    # what ran while the plan streamed: the plan's subtasks, or a rejected plan's
    streamed = streamed_for(state.plan, state.streamed) if state.plan else state.streamed
    ran = {i: s.result for i, s in streamed.items() if s.result is not None}
    reason = reason_and_fix(why, context.caller) + _ran(ran)
    text = f"The run was aborted: {reason}"
    state = state.model_copy(update={"results": state.results | ran})
    return {
        "messages": reply_messages(state, text, context.workspace),
        "response": text,
        "abort_reason": reason,
        "results": ran | unrun_results(state, f"the run was aborted: {why.reason}"),
        "status": "aborted",
        "plan_attempts": 0,
        "history": [ChatTurn(role="user", content=state.request),
                    ChatTurn(role="assistant", content=text)],
    }
