"""Stage 1, task planning: the planner LLM turns the request into a DAG of subtasks.

The reply is read with structured output where the endpoint supports it, else with a
tolerant parser; the DAG is then checked in code. An invalid plan goes back to the LLM
with the problems (the ``plan`` edge loops), at most ``max_plan_retries`` times.

With ``stream_execution`` (and ``approval`` ``never`` or ``risky``) each subtask is handed
over, once its JSON is complete and valid, to the execute stage's streamed execution
(:class:`~hugginggpt.nodes.planning.incremental.HandingOver`; the builder gives it this
node): the stage neither selects nor runs anything. It waits for what was handed over and
leaves what was done in ``streamed`` for the next stages and a repair.

With ``planner = "auto"`` (the default) a planner LLM that cannot be called (no key or
token, unreachable, failing after its retries) hands over to the offline planner, and
``why_offline`` says why (``planner_fallback``: in a sentence). ``planner = "llm"`` aborts,
as does a plan that stays invalid (``why_aborted``: a ``Failure``).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, Literal

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from langgraph.config import get_stream_writer
from langgraph.runtime import Runtime
from pydantic import BaseModel, Field

from hugginggpt.graph.context import Context, context_of
from hugginggpt.graph.recorded import settings_of
from hugginggpt.graph.state import Failure, State
from hugginggpt.nodes.conversation import check_served_files, message_turn
from hugginggpt.nodes.demand import tier_needed
from hugginggpt.nodes.planning.bank import DEFAULT_BANK, load_bank
from hugginggpt.nodes.planning.grammar import plan_grammar
from hugginggpt.nodes.planning.incremental import HandingOver, Handover
from hugginggpt.nodes.planning.offline import CannotPlanOffline, offline_plan
from hugginggpt.nodes.planning.runnable import asks_an_image, runnable_instead
from hugginggpt.nodes.planning.validation import (
    PlanParseError,
    limit_fix,
    parse_plan_text,
    plan_object,
    validate_plan,
)
from hugginggpt.nodes.prompts import PLANNER_EXAMPLES, PLANNER_REPAIR, PLANNER_SYSTEM, PLANNER_USER
from hugginggpt.nodes.responding.advice import fallen_back
from hugginggpt.tools.blocks import message_text
from hugginggpt.tools.errors import (
    NO_LLM,
    ArgumentError,
    Fix,
    LLMBudgetError,
    LLMCredentialsError,
    LLMNotConfiguredError,
    NotInstalledError,
    joined,
    setting,
)
from hugginggpt.tools.experts.availability import runnable
from hugginggpt.tools.experts.catalog import DEFAULT_CATALOG, load_catalog
from hugginggpt.tools.experts.tasks import task_types
from hugginggpt.tools.llm.breaker import LLMNotAnsweringError
from hugginggpt.tools.llm.client import StreamListener, complete
from hugginggpt.tools.llm.config import NOT_CONFIGURED, ConfigError, has_llm, routing_config
from hugginggpt.tools.llm.errors import describe_llm_error, llm_call_errors, llm_error_fix
from hugginggpt.tools.llm.records import LLMCall, run_spend
from hugginggpt.tools.llm.replay import ReplayedFailureError
from hugginggpt.tools.llm.replies import reply_text
from hugginggpt.tools.llm.transcripts import keep
from hugginggpt.tools.redact import redact
from hugginggpt.tools.text import MAX_MESSAGE, clip

__all__ = ["plan", "route_after_plan", "ask_planner", "PlanReply", "uses_llm_planner",
           "HandoverFactory"]

_HISTORY_CHARS = 500
"""Earlier turns reach the planner clipped to this: an answer may quote long outputs."""


class SubtaskReply(BaseModel):
    id: int = Field(description="unique id, from 0, in list order")
    task: str = Field(description="a task type name")
    dep: list[int] = Field(description="ids of earlier subtasks this one needs; [] if none")
    args: dict[str, str] = Field(
        description="argument name -> value or <GENERATED>-k (text may embed several)")


class PlanReply(BaseModel):
    """The plan: subtasks in dependency order (empty when no expert is needed)."""

    subtasks: list[SubtaskReply]


HandoverFactory = Callable[[State, Context], Handover]
"""Makes a plan stage's :class:`~hugginggpt.nodes.planning.incremental.Handover` for a
run's state and settings (the graph's builder gives the plan node the execute stage's)."""


def _few_shot(request: str, context: Context) -> str:
    """The bank's examples nearest to the request, as prompt text ("" without a bank).

    They go in the user message, not the system prompt: they change with the request, and
    the system prompt stays the same bytes so that a provider can cache it.
    """
    if context.few_shot <= 0:
        return ""
    try:
        shots = load_bank(context.plan_bank or DEFAULT_BANK).nearest(request, k=context.few_shot)
    except (OSError, NotInstalledError):  # no bank file, or no MiniLM to search it by:
        return ""  # plan without examples rather than fail
    return PLANNER_EXAMPLES.format(examples="\n".join(
        f"Request: {example.request}\nPlan: {json.dumps({'subtasks': example.plan})}"
        for example, _ in shots
    ))


def _messages(state: State, context: Context) -> list[BaseMessage]:
    history = "".join(f"{turn.role}: {clip(turn.content, _HISTORY_CHARS)}\n"
                      for turn in state.history[-6:])
    messages: list[BaseMessage] = [
        SystemMessage(PLANNER_SYSTEM.format(
            task_types="\n".join(t.describe() for t in task_types()),
            image_reader=next(t.name for t in task_types() if t.planning.reads == "image"),
            max_subtasks=context.max_subtasks,
        )),
        HumanMessage(PLANNER_USER.format(
            history=f"Conversation so far:\n{history}\n" if history else "",
            examples=_few_shot(state.request, context),
            request=state.request,
            files=", ".join(state.files) or "none",
        )),
    ]
    if state.plan_errors:
        messages += [
            AIMessage(state.plan_reply or "(no reply)"),
            HumanMessage(PLANNER_REPAIR.format(
                errors="\n".join(f"- {e}" for e in state.plan_errors),
                reply=state.plan_reply[:2000] or "(empty)",
            )),
        ]
    return messages


def ask_planner(
    state: State, context: Context, calls: list[LLMCall] | None = None,
    on_stream: StreamListener | None = None,
) -> tuple[list[Any], str]:
    """Ask the planner LLM once; returns the raw plan items (not yet validated) and the
    reply text. The call is recorded in ``calls`` when given; ``on_stream`` is told
    the reply as it streams.

    A repair (the previous plan was rejected) asks for a large model whatever the
    request: the router then sends it to the strongest endpoint.

    Raises:
        LLMNotConfiguredError, PlanParseError, or one of ``llm_call_errors()``.
    """
    # A JSON schema rather than the pydantic class: every chat model integration takes it,
    # and the validator, not pydantic, decides what is wrong with a plan.
    raw = complete(
        context, "planner", _messages(state, context),
        calls=calls if calls is not None else [],
        need=tier_needed("planner", request=state.request, files=state.files,
                         attempt=state.plan_attempts + 1),
        schema=PlanReply.model_json_schema(),
        grammar=plan_grammar(state.files, context.max_subtasks),  # a local model's
        turn=len(state.history) // 2, spent=run_spend(state.llm_calls, len(state.history) // 2),
        on_stream=on_stream,
    )
    text = reply_text(raw)
    try:
        return parse_plan_text(text), text
    except PlanParseError as exc:
        exc.reply = text
        raise


def plan(state: State, runtime: Runtime[Context],
         handover: HandoverFactory | None = None) -> dict[str, Any]:
    """Ask for a plan (or take the fixed one), validate it, and record the outcome;
    with ``handover``, hand the subtasks over while the plan streams."""
    calls: list[LLMCall] = []
    update = _plan(state, context_of(runtime), calls, handover)
    # a run that starts with no LLM call clears the previous run's records
    first = state.plan_attempts == 0
    return update | {"llm_calls": keep(calls) if calls or not first else None}


def _plan(state: State, context: Context, calls: list[LLMCall],
          handover: HandoverFactory | None) -> dict[str, Any]:
    attempt = state.plan_attempts + 1
    get_stream_writer()({"type": "stage", "stage": "plan", "event": "start", "attempt": attempt})
    update: dict[str, Any] = {"plan_attempts": attempt}
    if attempt == 1:  # a new request on this thread starts from a clean slate
        update |= {"selections": None, "results": None, "streamed": {}, "status": "running",
                   "abort_reason": None, "why_aborted": None, "response": "",
                   "approved": False, "planner_fallback": "", "why_offline": None,
                   "settings": settings_of(context)}
        try:  # a chat turn: the request and files come from the human message
            turn = message_turn(state, context)
        except (ArgumentError, OSError) as exc:
            taken = state.messages[-1]
            return update | {"request": message_text(taken.content), "files": [],
                             "message_id": taken.id} | _abort(
                _failure(exc, "the message cannot be used: "), planner="none")
        if turn is not None:
            update |= turn
            state = state.model_copy(update=turn)
        try:
            check_served_files(state.files, context)
        except ArgumentError as exc:
            return update | _abort(_failure(exc), planner="none")
        if not state.request.strip():
            return update | _abort(Failure(reason="the request is empty", fix=Fix(
                say="say what you want done (the request, or a human message's text)")),
                planner="none")
        try:  # checked at entry by the CLI and the API; a server run's context here
            if context.replay is None:
                routing_config(context)
        except ConfigError as exc:
            return update | _abort(_failure(exc), planner="none")

    if context.plan is not None:
        planner = "fixed plan"
        try:
            items, reply = plan_object(context.plan, "the plan setting"), json.dumps(context.plan)
        except PlanParseError as exc:
            return update | _abort(_failure(exc, "the plan file is invalid:\n- "),
                                   planner=planner, plan_errors=[str(exc)])
    elif not uses_llm_planner(context):
        return update | _plan_offline(state, context)
    elif handover is not None and _streams(context):
        taker = handover(state, context)
        found = _plan_llm(state, context, calls, attempt,
                          HandingOver(taker, context.max_subtasks))
        found["streamed"], made = taker.finish(found.get("plan") or [])
        calls += made
        return update | found
    else:
        return update | _plan_llm(state, context, calls, attempt)
    subtasks, problems = validate_plan(items, max_subtasks=context.max_subtasks)
    if problems:
        why = Failure(reason="the plan file is invalid:\n" + "\n".join(f"- {p}" for p in problems),
                      error_type="PlanParseError", fix=limit_fix(items, context.max_subtasks))
        return update | _abort(why, planner=planner, plan_errors=problems)
    return update | {"plan": subtasks, "plan_errors": [], "plan_reply": reply[:4000],
                     "planner": planner}


def _streams(context: Context) -> bool:
    """Whether subtasks start while the plan streams: the setting, and an approval
    policy that does not show the whole plan first (a replay's replies do not stream)."""
    return (context.stream_execution and context.approval in ("never", "risky")
            and context.replay is None)


def _plan_llm(state: State, context: Context, calls: list[LLMCall], attempt: int,
              on_stream: StreamListener | None = None) -> dict[str, Any]:
    """The planner LLM's plan, validated; or its problems (repair or abort), or the
    offline planner's plan when the LLM cannot be called (``planner = "auto"``)."""
    planner = "llm"
    try:
        items, reply = ask_planner(state, context, calls, on_stream)
        planner = f"llm: {calls[-1].llm}"
    except LLMNotConfiguredError as exc:
        return _abort(_failure(exc), planner="none")
    except llm_call_errors() as exc:
        if context.planner == "auto" and not isinstance(exc, LLMBudgetError):
            why = _fallback(exc, calls)  # a spent budget is the user's limit: no fallback
            if calls:  # the trace tells it, and a replay tells it the same
                calls[-1] = calls[-1].model_copy(update={"outcome": why.reason, "fix": why.fix})
            return _plan_offline(state, context, fallback=why)
        return _abort(Failure(reason=describe_llm_error(exc, "planner"), fix=llm_error_fix(exc),
                              error_type=type(exc).__name__), planner=planner)
    except PlanParseError as exc:
        planner = f"llm: {calls[-1].llm}" if calls else planner
        return _rejected(state, context, attempt, [str(exc)], exc.reply, planner)

    subtasks, problems = validate_plan(items, max_subtasks=context.max_subtasks)
    if problems:
        return _rejected(state, context, attempt, problems, reply, planner, items)
    items, moved = _runnable_items(items, context) if on_stream is None else (items, [])
    if moved:  # (streamed subtasks have started as planned)
        subtasks, _ = validate_plan(items, max_subtasks=context.max_subtasks)
        planner += f" ({'; '.join(moved)})"
    return {"plan": subtasks, "plan_errors": [], "plan_reply": reply[:4000], "planner": planner}


def uses_llm_planner(context: Context) -> bool:
    """``auto`` plans with the LLM when one is configured, else offline."""
    if context.planner == "auto":
        return has_llm(context, "planner")
    return context.planner == "llm"


def _fallback(exc: BaseException, calls: list[LLMCall]) -> Failure:
    """Why the planner LLM was given up for the offline planner (a replay's, as the
    recorded run said it)."""
    kind = type(exc).__name__
    if isinstance(exc, ReplayedFailureError) and exc.description:
        return Failure(reason=exc.description, error_type=kind, fix=exc.fix)
    if isinstance(exc, LLMCredentialsError):
        return Failure(reason="No credentials for the planner LLM", error_type=kind, fix=exc.fix)
    where = f" {calls[-1].llm}" if calls else ""
    if isinstance(exc, LLMNotAnsweringError):  # timed out or refused: say which, and why
        return Failure(reason=f"The planner LLM {exc.down.llm} {clip(exc.down.said(), 400)}",
                       error_type=kind, fix=exc.down.fix)
    reached = isinstance(exc, (TimeoutError, ConnectionError)) or any(
        word in type(exc).__name__ for word in ("Connect", "Timeout"))
    said = redact(" ".join(str(exc).split())).rstrip(".")  # an endpoint may echo a key
    if reached:
        what = f"could not be reached: {said or kind}"
    else:
        what = f"failed: {kind}" + (f": {said}" if said else "")
    return Failure(reason=f"The planner LLM{where} {clip(what, MAX_MESSAGE)}", error_type=kind)


def _plan_offline(state: State, context: Context,
                  fallback: Failure | None = None) -> dict[str, Any]:
    """The offline planner's plan; ``fallback`` says why it stands in for the LLM's."""
    label = "offline (fallback)" if fallback else "offline"
    told = {"why_offline": fallback,
            "planner_fallback": fallen_back(fallback, context.caller) if fallback else ""}
    try:
        bank = load_bank(context.plan_bank or DEFAULT_BANK)
        found = offline_plan(state.request, state.files, bank,
                             max_subtasks=context.max_subtasks)
    except (OSError, CannotPlanOffline, NotInstalledError) as exc:
        fix = getattr(exc, "fix", None)
        if fallback:
            return _abort(fallback.model_copy(update={
                "reason": f"{fallback.reason}, and the offline planner could not plan the "
                          f"request either: {exc}.", "fix": joined([fallback.fix, fix])}),
                planner=label, **told)
        return _abort(_failure(exc, suffix=f". {NOT_CONFIGURED}", fix=joined([NO_LLM, fix])),
                      planner=label)
    items, moved = _runnable_items(found.items, context)
    subtasks, _ = validate_plan(items, max_subtasks=context.max_subtasks)
    how = found.describe().replace("offline", label, 1)
    return {"plan": subtasks, "plan_errors": [], "plan_reply": json.dumps(items),
            "planner": how + (f" ({'; '.join(moved)})" if moved else "")} | told


def _runnable_items(items: list[dict[str, Any]], context: Context
                    ) -> tuple[list[dict[str, Any]], list[str]]:
    """A plan (offline, or the LLM's when it does not stream) with each image question
    that cannot run here planned as a task that can answer it
    (:func:`~hugginggpt.nodes.planning.runnable.runnable_instead`); the plan as it was
    when the moved one would not validate."""
    if not any(asks_an_image(str(i.get("task"))) for i in items):
        return items, []
    try:
        catalog = load_catalog(context.catalog or DEFAULT_CATALOG)
    except (OSError, ValueError):  # selection reports a broken catalog
        return items, []
    moved, notes = runnable_instead(items, lambda task: runnable(task, catalog,
                                                                 context.backend))
    if not notes or validate_plan(moved, max_subtasks=context.max_subtasks)[1]:
        return items, []
    return moved, notes


def _rejected(state: State, context: Context, attempt: int, problems: list[str], reply: str,
              planner: str, items: list[Any] | None = None) -> dict[str, Any]:
    update = {"plan": [], "plan_errors": problems, "plan_reply": reply[:4000], "planner": planner}
    if attempt > context.max_plan_retries:
        reason = (f"the planner gave no valid plan in {attempt} attempts. Last problems:\n"
                  + "\n".join(f"- {p}" for p in problems))
        return update | _abort(Failure(reason=reason, error_type="PlanParseError", fix=joined([
            limit_fix(items or [], context.max_subtasks),
            Fix(say="try rephrasing the request, a stronger {}, or a plan file ({})",
                controls=[setting("planner_llm"), setting("plan")])])),
            planner=planner, plan_errors=problems)
    return update


def _failure(exc: BaseException, prefix: str = "", suffix: str = "",
             fix: Fix | None = None) -> Failure:
    """An exception as an abort's reason: its message, its class and its fix."""
    return Failure(reason=f"{prefix}{exc}{suffix}", error_type=type(exc).__name__,
                   fix=fix or getattr(exc, "fix", None))


def _abort(why: Failure, **extra: Any) -> dict[str, Any]:
    return {"status": "aborted", "why_aborted": why, "plan": [], **extra}


def route_after_plan(state: State) -> Literal["select", "respond", "plan", "abort"]:
    """Abort, retry planning, answer directly (empty plan) or go on to selection."""
    if state.status == "aborted":
        return "abort"
    if state.plan_errors:
        return "plan"
    return "select" if state.plan else "respond"
