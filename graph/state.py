"""The typed state the stages share, and its input and output views.

The stages are the graph's nodes: plan, select, approve, execute, respond (and abort).
State holds references (artifact paths inside the workspace), never bytes: checkpoints
stay small and prompts stay short. The LLM call record is the LLM client's own type
(:class:`~hugginggpt.tools.llm.records.LLMCall`), reused here.
"""

from __future__ import annotations

import hashlib
import json
import re
from typing import Annotated, Any, Literal

from langchain_core.messages import AnyMessage
from langgraph.channels.delta import DeltaChannel
from pydantic import BaseModel, Field, field_validator

from hugginggpt.graph.reducers import (
    add_all_messages,
    append,
    append_all,
    merge_by_id,
    this_run,
)
from hugginggpt.tools.errors import Control, Fix
from hugginggpt.tools.experts.confidence import Confidence
from hugginggpt.tools.llm.records import LLMCall

__all__ = [
    "MAX_SUBTASK_ID",
    "ResultStatus",
    "ChatTurn",
    "Subtask",
    "Candidate",
    "Selection",
    "Attempt",
    "Replica",
    "Failure",
    "Fix",
    "Control",
    "SubtaskResult",
    "Approval",
    "Streamed",
    "subtask_keys",
    "streamed_for",
    "LLMCall",
    "Confidence",
    "InputState",
    "State",
    "OutputState",
    "RunStatus",
    "FINISHED",
    "outcome",
    "merge_by_id",
    "append",
    "this_run",
    "STATE_TYPES",
]

MAX_SUBTASK_ID = 2**31 - 1
"""Subtask ids are small in practice; the bound keeps them storable by every checkpointer."""

RunStatus = Literal["running", "waiting", "completed", "partial", "failed", "aborted"]
"""Where a run is, as its state says (and the LangGraph server shows):

- ``running``: under way; a run that stopped before its end (Ctrl-C, a crash) stays
  ``running`` with steps still to take, and resumes from there;
- ``waiting``: for a human's approval of the plan;
- ``completed``: every planned subtask done, or no subtask was needed (an empty plan:
  the request was answered directly);
- ``partial``: some subtasks done, the others failed or skipped;
- ``failed``: there was a plan, but no subtask was done;
- ``aborted``: nothing could go on: no valid plan, the LLM planner down (with
  ``planner="llm"``; ``auto`` plans offline), the plan rejected (``abort_reason`` says
  why).

Every planned subtask of a finished run has a result (done, failed or skipped, with
the reason)."""
ResultStatus = Literal["done", "failed", "skipped"]

FINISHED: tuple[RunStatus, ...] = ("completed", "partial", "failed", "aborted")
"""The statuses of a run that has ended."""


class ChatTurn(BaseModel):
    role: Literal["user", "assistant"]
    content: str


class Subtask(BaseModel):
    """One node of the plan's DAG, in HuggingGPT's format.

    ``dep`` lists the ids this subtask needs (HuggingGPT's ``[-1]`` means none); an
    argument value ``<GENERATED>-k`` stands for an output of subtask ``k``; a text
    argument may embed several in its text, each filled in with that output's text.
    """

    id: int = Field(ge=0, le=MAX_SUBTASK_ID)
    task: str = Field(min_length=1, max_length=200)
    dep: list[int] = Field(default_factory=list)
    args: dict[str, str] = Field(default_factory=dict)

    @field_validator("dep", mode="before")
    @classmethod
    def _normalize_dep(cls, value: Any) -> Any:
        if value is None:
            return []
        if isinstance(value, (int, str)):
            value = [value]
        if isinstance(value, list):
            return [d for d in value if not (isinstance(d, (int, str)) and str(d) == "-1")]
        return value

    @field_validator("args", mode="before")
    @classmethod
    def _stringify_args(cls, value: Any) -> Any:
        """Numbers become text and a list of scalars a comma-separated text (labels);
        anything else that is not a string (null, an object, nested lists) is left for
        the type check to refuse: it is a planning error, not a value."""
        def scalar(v: Any) -> bool:
            return isinstance(v, (str, int, float)) and not isinstance(v, bool)

        if isinstance(value, dict):
            return {
                str(k): ", ".join(map(str, v)) if isinstance(v, list) and all(map(scalar, v))
                else str(v) if scalar(v) else v
                for k, v in value.items()
            }
        return value


class Candidate(BaseModel):
    model: str
    backend: str
    score: float


class Selection(BaseModel):
    """The model chosen for a subtask, why, and the fallbacks in order."""

    subtask_id: int
    task: str
    model: str | None
    backend: str | None
    reason: str
    candidates: list[Candidate] = Field(default_factory=list)
    fix: Fix | None = None
    """What to do when no model was chosen (another backend, a model to download), or
    when a better one is a download away (with downloads off)."""
    asked: str | None = None
    """For a classification task type (sentiment, language, emotion, ...), the kind of
    answer the request's words ask for; None when they do not say (the answer then says
    what the result is, and that nothing else was asked)."""


class Replica(BaseModel):
    """Where a call of a shared expert tier ran: the replica, the model's load time there
    (0 when a replica already held it: warm) and the call's own time on the replica."""

    replica: str
    pid: int | None = None
    """The replica's process id (on its node)."""
    load_s: float = 0.0
    warm: bool = False
    run_s: float = 0.0


class Attempt(BaseModel):
    model: str
    backend: str
    ok: bool
    error: str | None = None
    error_type: str | None = None
    latency_s: float = 0.0
    at: float = 0.0
    """When the attempt started (Unix time), for the thread's trace."""
    cached: bool = False
    """Served from the result cache: no tool was called (``latency_s`` is the lookup's)."""
    fix: Fix | None = None
    """What the error said to do about it, when it said something."""
    replica: Replica | None = None
    """The expert tier's replica that answered (the ``ray`` backend)."""


class Failure(BaseModel):
    """Why a subtask did not finish, in fields: the answer is written from them, never
    from a message's text."""

    reason: str
    """What went wrong, whole: no exception type, no list of models tried."""
    error_type: str | None = None
    """The exception's class (``ToolTimeoutError``, ``ArgumentError``, ...), None when
    nothing was raised (a skip, no model to run)."""
    dependency: int | None = None
    """The subtask it was skipped for (its id)."""
    dependency_ended: str | None = None
    """How that one ended: ``failed``, ``skipped``, or ``unusable`` (done, but too unsure
    for a later step to run on)."""
    tried: list[str] = Field(default_factory=list)
    """The models tried, each once, in order."""
    tried_types: list[str] = Field(default_factory=list)
    """The errors the models tried raised (their classes, each once)."""
    fix: Fix | None = None
    """What to do about it, set where it was raised (said for whoever asked, at the
    answer); None when the failure says nothing to do."""


class SubtaskResult(BaseModel):
    """How a subtask ended. Outputs are inline text and numbers, or artifact refs."""

    id: int
    task: str
    status: ResultStatus
    model: str | None = None
    backend: str | None = None
    outputs: dict[str, Any] = Field(default_factory=dict)
    attempts: int = 0
    attempt_log: list[Attempt] = Field(default_factory=list)
    error: str | None = None
    """The failure as one line (``Type: message [tried: ...]``), for logs and traces."""
    failure: Failure | None = None
    """The failure in fields, for the answer."""
    latency_s: float = 0.0
    endpoint: str | None = None
    """Where the model ran, when its id does not say: the LLM endpoint that answered a
    subtask of the ``llm`` backend (shown as endpoints are, without secrets)."""
    replica: Replica | None = None
    """The expert tier's replica that ran it (the ``ray`` backend), its load time, whether
    the model was warm."""
    cached: bool = False
    """The outputs came from the result cache (an earlier run's call of the same tool on
    the same inputs), not from a call in this run."""
    streamed: bool = False
    """The subtask started while the plan was still streaming (the plan stage ran it)."""
    confidence: Confidence | None = None
    """How sure the engine was (its own score, and ``uncertain``: why the result may be
    wrong), or that the result was computed from an uncertain one; None when the engine
    reports nothing and its inputs were sure enough
    (:mod:`hugginggpt.tools.experts.confidence`)."""


class Streamed(BaseModel):
    """A subtask of a streamed plan, as the plan stage left it: selected as soon as its
    JSON was complete, and run (``result``) unless it waited for approval or a plan
    problem stopped it. ``key`` (:func:`subtask_keys`) says which subtask it was, so
    that the next stages, and a repaired plan, take it only for the same subtask."""

    key: str
    selection: Selection
    result: SubtaskResult | None = None


_REF = re.compile(r"<GENERATED>-(\d+)")


def subtask_keys(plan: list[Subtask]) -> dict[int, str]:
    """What each subtask of a plan is, whatever its id: a digest of its task type, its
    arguments and, in place of the ids it uses, its dependencies' own keys. Two subtasks
    with one key run the same tool on the same inputs (given the same request files)."""
    keys: dict[int, str] = {}
    for st in plan:
        def named(match: re.Match[str]) -> str:
            return f"<{keys.get(int(match[1]), '?' + match[1])}>"

        data = json.dumps([st.task, sorted((k, _REF.sub(named, v)) for k, v in st.args.items()),
                           sorted(keys.get(d, f"?{d}") for d in st.dep)])
        keys[st.id] = hashlib.sha256(data.encode()).hexdigest()[:24]
    return keys


def streamed_for(plan: list[Subtask], streamed: dict[int, Streamed]) -> dict[int, Streamed]:
    """The entries of ``streamed`` that are this plan's subtasks (same id, same key)."""
    keys = subtask_keys(plan)
    return {i: s for i, s in streamed.items() if keys.get(i) == s.key}


class Approval(BaseModel):
    """One human decision on a run: the audit record."""

    policy: Literal["plan", "risky", "download"]
    """The approval policy that asked, or ``download``: consent to download models."""
    action: Literal["approve", "edit", "reject"]
    who: str
    at: str
    """When, as an ISO 8601 UTC timestamp."""
    detail: str = ""


def outcome(plan: list[Subtask], results: dict[int, SubtaskResult]) -> RunStatus:
    """A finished run's status from its results: ``completed`` when every planned
    subtask is done (or none was planned), ``partial`` when some are, else ``failed``."""
    done = sum(1 for st in plan if (r := results.get(st.id)) is not None and r.status == "done")
    if done == len(plan):
        return "completed"
    return "partial" if done else "failed"


class InputState(BaseModel):
    """What a user gives: the request, attached files or URLs, earlier turns; or chat
    messages, the last a human's request with its images and recordings as content
    blocks (the plan stage turns it into the request and files)."""

    request: str = Field(default="", description=(
        "What the user asks for (or send messages instead)."))
    files: list[str] = Field(
        default_factory=list, description="Paths (inside the workspace) or URLs of inputs."
    )
    history: Annotated[list[ChatTurn], DeltaChannel(append_all)] = Field(
        default_factory=list, description="Earlier turns, for a thread's first request."
    )
    messages: Annotated[list[AnyMessage], DeltaChannel(add_all_messages)] = Field(
        default_factory=list, description=(
            "The conversation: a human message's text is the request, its image, audio "
            "and file blocks (base64 or URL) the inputs; each run adds the answer as an "
            "AI message with the outputs as image and audio blocks."))


class State(InputState):
    """The full state of one run."""

    plan: list[Subtask] = Field(default_factory=list)
    plan_attempts: int = 0
    plan_errors: list[str] = Field(default_factory=list)
    plan_reply: str = ""
    planner: str = ""
    planner_fallback: str = ""
    """Why the offline planner stood in for the configured planner LLM (no credentials,
    unreachable), in one sentence the answer repeats; empty when it did not."""
    why_offline: Failure | None = None
    """The same, in fields (written by the plan stage)."""
    selector: str = ""
    selections: Annotated[dict[int, Selection], merge_by_id] = Field(default_factory=dict)
    results: Annotated[dict[int, SubtaskResult], merge_by_id] = Field(default_factory=dict)
    response: str = ""
    responder: str = ""
    status: RunStatus = "running"
    abort_reason: str | None = None
    """Why the run aborted, as the abort stage said it to whoever asked."""
    why_aborted: Failure | None = None
    """Why the run aborted, in fields: what went wrong, the exception's class, the fix
    (written by the stage that stopped the run: plan, approve)."""
    approved: bool = False
    """Whether the approval policy has been satisfied for the current plan."""
    approvals: Annotated[list[Approval], DeltaChannel(append_all)] = Field(default_factory=list)
    downloads: dict[str, bool] = Field(default_factory=dict)
    """Consent to download a model missing from the local cache, by model id (True:
    given, False: refused), kept for the thread; written by the approve stage only."""
    streamed: dict[int, Streamed] = Field(default_factory=dict)
    """What was selected and run while the latest plan streamed, by subtask id (written
    by the plan stage only, whole, on every attempt, from what the execute stage's
    :class:`~hugginggpt.nodes.execute.StreamedExecution` did with the subtasks it was
    handed): select and execute take what matches the plan
    (by :func:`subtask_keys`) instead of choosing and running it again."""
    llm_calls: Annotated[list[LLMCall], this_run] = Field(default_factory=list)
    """The LLM calls of the thread's latest run, oldest first: their accounting records.
    Their prompts and replies are in the graph's store when it has one
    (:mod:`hugginggpt.tools.llm.transcripts`); an earlier run's calls are in its own
    checkpoints (the trace reads them there)."""
    message_id: str | None = None
    """The id of the last human message a run took as its request (a chat turn; see
    :mod:`hugginggpt.nodes.conversation`)."""
    settings: dict[str, Any] = Field(default_factory=dict)
    """The latest run's settings (:func:`hugginggpt.graph.recorded.settings_of`): a replay
    reuses them."""


class OutputState(BaseModel):
    """What a run returns."""

    plan: list[Subtask] = Field(default_factory=list)
    selections: dict[int, Selection] = Field(default_factory=dict)
    results: dict[int, SubtaskResult] = Field(default_factory=dict)
    response: str = ""
    status: RunStatus = "running"
    abort_reason: str | None = None
    plan_errors: list[str] = Field(default_factory=list)
    planner: str = ""
    planner_fallback: str = ""
    selector: str = ""
    responder: str = ""
    approvals: list[Approval] = Field(default_factory=list)
    llm_calls: list[LLMCall] = Field(default_factory=list)
    messages: list[AnyMessage] = Field(default_factory=list)


STATE_TYPES: tuple[type[BaseModel], ...] = (
    ChatTurn, Subtask, Candidate, Selection, Attempt, Replica, Failure, SubtaskResult,
    Approval,
    Streamed,
    LLMCall, Confidence, Fix, Control,
    InputState, State, OutputState,
)
"""Types that checkpoints may deserialize (the msgpack allowlist)."""
