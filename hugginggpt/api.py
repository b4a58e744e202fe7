"""The Python API: run a request end to end and get a typed result back.

::

    import hugginggpt

    result = hugginggpt.run("Summarise this: ...", backend="lite")
    print(result.status, result.response)
    for path in result.artifacts:          # output files, absolute paths
        print(path)

    # approvals: the run stops before anything runs, then resumes with the decision
    pending = hugginggpt.run("Caption photo.jpg", files=["photo.jpg"], approval="plan")
    if pending.status == "waiting":
        done = hugginggpt.resume(pending.thread_id, {"action": "approve", "who": "ana"})

Settings are the fields of :class:`~hugginggpt.graph.context.Context` (``backend``,
``llm``, ``max_subtasks``, ...), given as keywords or as a ``context``. Every run is
checkpointed (by default in ``<workspace>/checkpoints.sqlite``, as the CLI does), so a
thread can be resumed later with its settings, and traced from the command line with
``--checkpoint-url`` (a Python run saves no settings file for the CLI).
``arun`` and ``aresume`` are the async forms; the sync ones also work where an event
loop is already running (a notebook).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import uuid
from collections.abc import Callable, Coroutine, Iterable
from pathlib import Path
from typing import Any, Literal, TypeVar

from langchain_core.runnables import RunnableConfig
from langgraph.types import Command
from pydantic import BaseModel, Field

from hugginggpt.graph.builder import build_graph
from hugginggpt.graph.checkpoint import aopen_checkpointer
from hugginggpt.graph.context import Context
from hugginggpt.graph.state import FINISHED, Approval, Selection, Subtask, SubtaskResult
from hugginggpt.nodes.responding.advice import told
from hugginggpt.tools.artifacts import is_artifact_ref
from hugginggpt.tools.errors import ArgumentError
from hugginggpt.tools.kinds import is_url
from hugginggpt.tools.llm.config import ConfigError, routing_config
from hugginggpt.tools.llm.providers import saved_object
from hugginggpt.tools.llm.records import LLMCall, usage_totals
from hugginggpt.tools.redact import redact

__all__ = ["RunResult", "Outcome", "run", "arun", "resume", "aresume", "make_context", "drive",
           "attached_files", "RECURSION_LIMIT"]

T = TypeVar("T")
OnEvent = Callable[[str, Any], None]
"""Called with each ``(mode, chunk)`` of the graph's stream (``updates`` and
``custom``), e.g. :meth:`hugginggpt.progress.Progress.handle`."""

RECURSION_LIMIT = 50
"""Graph steps a run may take (plan retries loop; nothing else does)."""


Outcome = Literal["completed", "partial", "failed", "aborted", "waiting", "interrupted"]
"""How a run ended (see :class:`RunResult`)."""


class RunResult(BaseModel):
    """How a run ended, with everything it produced.

    ``status`` is one of:

    - ``completed``: every planned subtask done (or none was needed: an empty plan,
      the request answered directly);
    - ``partial``: some done, the others failed or skipped;
    - ``failed``: there was a plan, but no subtask was done;
    - ``aborted``: nothing could go on: no valid plan, the LLM planner down (with
      ``planner="llm"``; ``auto`` plans offline, see ``planner_fallback``), the plan
      rejected (``abort_reason`` says why);
    - ``waiting``: for a human's approval (``approval`` is the question; answer with
      :func:`resume`);
    - ``interrupted``: stopped before its end (Ctrl-C, a cancellation, a crash): resume
      the thread and only what had not finished runs again.

    Every planned subtask of a finished run has its result in ``results`` (done, failed
    or skipped, with the reason in ``error``).
    """

    thread_id: str
    status: Outcome
    response: str = ""
    request: str = ""
    workspace: Path
    plan: list[Subtask] = Field(default_factory=list)
    selections: dict[int, Selection] = Field(default_factory=dict)
    results: dict[int, SubtaskResult] = Field(default_factory=dict)
    abort_reason: str | None = None
    plan_errors: list[str] = Field(default_factory=list)
    approvals: list[Approval] = Field(default_factory=list)
    approval: dict[str, Any] | None = None
    """The pending question when the run waits for a human (answer with :func:`resume`)."""
    llm_calls: list[LLMCall] = Field(default_factory=list)
    planner: str = ""
    planner_fallback: str = ""
    """Why the offline planner stood in for the planner LLM (``planner="auto"``), if it did."""
    selector: str = ""
    responder: str = ""

    @property
    def artifacts(self) -> list[Path]:
        """The output files of the finished subtasks, as absolute paths, in plan order."""
        found: list[Path] = []
        for subtask_id in sorted(self.results):
            for value in self.results[subtask_id].outputs.values():
                if is_artifact_ref(value):
                    path = (self.workspace / value["path"]).resolve()
                    if path not in found:
                        found.append(path)
        return found

    @property
    def usage(self) -> dict[str, Any]:
        """LLM calls, tokens, estimated cost and waiting time of the run (the state keeps
        the latest run's calls only; the trace has every run's)."""
        return usage_totals(self.llm_calls)

    @classmethod
    def from_snapshot(cls, thread_id: str, snapshot: Any, workspace: str | Path,
                      interrupted: bool = False) -> RunResult:
        """The result as the thread's latest checkpoint has it."""
        values = dict(snapshot.values)
        pending = snapshot.interrupts[0].value if snapshot.interrupts else None
        status = values.get("status")
        if interrupted or status not in FINISHED or snapshot.next:
            status = "waiting" if pending is not None and not interrupted else "interrupted"
        fields = {name: values[name] for name in cls.model_fields if name in values}
        return cls(**fields | {"thread_id": thread_id, "status": status,
                               "workspace": Path(workspace), "approval": pending})

    def document(self) -> dict[str, Any]:
        """The result as plain JSON data (``hugginggpt run --json``); artifact paths are
        relative to ``workspace``, prompts and replies are left to the trace."""
        return {
            "thread_id": self.thread_id,
            "status": self.status,
            "workspace": str(self.workspace),
            "request": self.request,
            "plan": [s.model_dump(mode="json") for s in self.plan],
            "selections": {str(k): v.model_dump(mode="json") for k, v in self.selections.items()},
            "results": {str(k): v.model_dump(mode="json") for k, v in self.results.items()},
            "artifacts": [str(p) for p in self.artifacts],
            "response": self.response,
            "abort_reason": self.abort_reason,
            "plan_errors": self.plan_errors,
            "approvals": [a.model_dump(mode="json") for a in self.approvals],
            "llm_calls": [c.model_dump(mode="json", exclude={"request", "reply"})
                          for c in self.llm_calls],
            "usage": self.usage,
            "planner": self.planner,
            "planner_fallback": self.planner_fallback,
            "selector": self.selector,
            "responder": self.responder,
            "interrupt": self.approval,
        }


def make_context(context: Context | None = None, **settings: Any) -> Context:
    """The run's settings: ``context`` (or the environment's defaults) with ``settings``
    on top, the workspace made absolute (so a thread resumes from any folder), the LLM
    configuration checked.

    Raises:
        TypeError: a setting that is not a :class:`Context` field.
        SettingsError: a setting with a value it cannot have (the message names it, the
            value and what it may be).
        ConfigError: the LLM configuration is invalid (the message says where).
    """
    known = set(Context.model_fields)
    if unknown := sorted(set(settings) - known):
        raise TypeError(f"unknown setting(s) {unknown}: settings are the fields of "
                        "hugginggpt.Context")
    base = context if context is not None else Context()
    context = base.replace(**settings)
    context = context.replace(workspace=str(Path(context.workspace).resolve()))
    try:
        routing_config(context)
    except ConfigError as exc:  # naming the problem, and its fix as the caller sets it
        raise ConfigError(told(exc, context.caller), fix=exc.fix) from None
    return context


def attached_files(paths: Iterable[str | Path], *,
                   folder_fix: str = "attach files, not folders") -> list[str]:
    """Files to attach, as absolute paths (URLs as they are).

    Args:
        folder_fix: what to do about a folder, in the caller's terms (the CLI's
            ``--file``, the Python API's ``files``).

    Raises:
        ArgumentError: a path that is not a file (a folder, or nothing).
    """
    files = []
    for item in paths:
        text = str(item)
        if is_url(text):
            files.append(text)
        elif Path(text).is_file():
            files.append(str(Path(text).resolve()))
        elif Path(text).is_dir():
            raise ArgumentError(f"{text}: is a directory; {folder_fix}")
        else:
            raise ArgumentError(f"{text}: no such file")
    return files


def _config(thread_id: str) -> RunnableConfig:
    return {"configurable": {"thread_id": thread_id}, "recursion_limit": RECURSION_LIMIT}


async def drive(app: Any, graph_input: Any, thread_id: str, context: Context,
                on_event: OnEvent | None = None) -> tuple[Any, bool]:
    """Stream one leg of a run (to its end or to an interrupt) on a compiled graph.

    Returns:
        The thread's latest snapshot, and whether the run was cut short (Ctrl-C or a
        cancellation); what finished before is checkpointed either way.
    """
    config = _config(thread_id)
    interrupted = False
    try:
        async for mode, chunk in app.astream(graph_input, config, context=context,
                                             stream_mode=["updates", "custom"]):
            if on_event is not None:
                on_event(mode, chunk)
    except (KeyboardInterrupt, asyncio.CancelledError):
        interrupted = True
    return await app.aget_state(config), interrupted


_LLM_SETTINGS = ("llm", "planner_llm", "selector_llm", "responder_llm", "expert_llm")


def objects_not_passed_again(thread_id: str, saved: dict[str, Any],
                             context: Context) -> str | None:
    """Why a thread cannot be resumed with these settings: its LLM was a chat-model
    object (never saved with it), and the resume gives no LLM for that role, so it
    would go on without one. None when it can."""
    if context.offline or context.llm_config or context.llm_endpoints or context.llm:
        return None
    for name in _LLM_SETTINGS:
        label = saved_object(str(saved.get(name) or ""))
        if label is None or getattr(context, name) is not None:
            continue
        again = (f"resume it from Python with hugginggpt.resume({thread_id!r}, "
                 f"{name}=...), or give --{name.replace('_', '-')} to go on with another"
                 if context.caller == "cli" else
                 f"pass it again: resume({thread_id!r}, {name}=...), or offline=True to "
                 "go on without an LLM")
        return (f"thread {thread_id!r} was run with the chat model {label} passed as "
                f"{name}=; chat-model objects are never saved in a checkpoint: {again}")
    return None


async def _run(graph_input: Any, thread_id: str, context: Context, checkpoint_url: str | None,
               on_event: OnEvent | None) -> RunResult:
    from hugginggpt.llm_weights import fetch_llm_weights, missing_llm_weights

    if missing_llm_weights(context):  # a local LLM: its weights, as ``download`` allows
        await asyncio.to_thread(fetch_llm_weights, context)
    url = checkpoint_url or f"sqlite:///{context.workspace}/checkpoints.sqlite"
    async with aopen_checkpointer(url) as saver:
        app = build_graph(checkpointer=saver)
        if isinstance(graph_input, Command) or graph_input is None:
            before = await app.aget_state(_config(thread_id))
            if not before.values:
                raise ArgumentError(f"thread {thread_id!r} has no checkpoint in {redact(url)}")
            if isinstance(graph_input, Command) and not before.interrupts:
                raise ArgumentError(f"thread {thread_id!r} is not waiting for an approval")
            if why := objects_not_passed_again(
                    thread_id, before.values.get("settings") or {}, context):
                raise ArgumentError(why)
        snapshot, interrupted = await drive(app, graph_input, thread_id, context, on_event)
    # abort_reason and planner_fallback are said for context.caller by the stages
    return RunResult.from_snapshot(thread_id, snapshot, context.workspace, interrupted)


async def arun(
    request: str,
    files: Iterable[str | Path] = (),
    *,
    thread_id: str | None = None,
    checkpoint_url: str | None = None,
    context: Context | None = None,
    on_event: OnEvent | None = None,
    **settings: Any,
) -> RunResult:
    """Run ``request`` through plan, select, (approve,) execute and respond.

    Args:
        files: input files (paths) or URLs to attach.
        thread_id: continue this thread (a new one when None); earlier turns are context.
        checkpoint_url: ``memory``, ``sqlite:///FILE`` or ``postgresql://...``; by default
            ``<workspace>/checkpoints.sqlite``.
        context: the run's settings; ``settings`` keywords override its fields.
        on_event: gets every stream event (stage starts and ends, subtask progress).

    Raises:
        ArgumentError: an empty request, or a file that does not exist or is a folder.
        TypeError, SettingsError, ConfigError: invalid settings (see
            :func:`make_context`).
        LLMWeightsError: a local LLM (``llm="transformers:REPO"``) is not cached and
            ``download`` is not ``yes`` (nobody is here to ask), or its download failed.
    """
    if not request.strip():
        raise ArgumentError("the request is empty: say what you want done")
    run_context = make_context(context, **settings)
    try:
        attached = attached_files(files, folder_fix=(
            "pass the files in it, not the folder (for example "
            "files=sorted(Path(folder).glob('*.png')))"))
    except ArgumentError as exc:
        raise ArgumentError(f"files: {exc}") from None
    graph_input = {"request": request, "files": attached}
    return await _run(graph_input, thread_id or uuid.uuid4().hex[:12], run_context,
                      checkpoint_url, on_event)


async def aresume(
    thread_id: str,
    decision: dict[str, Any] | str | None = None,
    *,
    checkpoint_url: str | None = None,
    context: Context | None = None,
    on_event: OnEvent | None = None,
    **settings: Any,
) -> RunResult:
    """Continue a thread: answer its pending approval (``"approve"``, ``{"action":
    "reject", "reason": ...}``, ``{"action": "edit", "plan": [...]}``), or with no
    decision resume it from its last checkpoint (after a crash or Ctrl-C: only the
    unfinished subtasks run again). Give the settings the run was started with.

    Raises:
        ArgumentError: the thread has no checkpoint, or a decision for a thread that is
            not waiting for one.
    """
    run_context = make_context(context, **settings)
    graph_input: Command[Any] | None = (
        Command(resume=decision) if decision is not None else None)
    return await _run(graph_input, thread_id, run_context, checkpoint_url, on_event)


def _sync(coro: Coroutine[Any, Any, T]) -> T:
    """Run a coroutine to its end from sync code, also inside a running event loop."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coro)
    with concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="hugginggpt") as pool:
        return pool.submit(asyncio.run, coro).result()


def run(request: str, files: Iterable[str | Path] = (), **kwargs: Any) -> RunResult:
    """The sync form of :func:`arun` (same arguments)."""
    return _sync(arun(request, files, **kwargs))


def resume(thread_id: str, decision: dict[str, Any] | str | None = None,
           **kwargs: Any) -> RunResult:
    """The sync form of :func:`aresume` (same arguments)."""
    return _sync(aresume(thread_id, decision, **kwargs))

