"""Stage 3, task execution: dataflow over the plan's DAG.

Every subtask is one LangGraph ``@task``, so its result is checkpointed the moment it
finishes: after a crash, resuming re-runs only the subtasks that had not finished.
The tasks are *called* in plan order (task ids depend on call order, so the order must
be the same on resume) and each one waits, inside itself, for the results of its
dependencies on a per-run :class:`Board`. A subtask therefore starts as soon as its own
dependencies finish, and the wall time is the DAG's critical path, not a sum of waves.

Per subtask: resolve the arguments (``<GENERATED>-k`` from dependency outputs, files
only inside the workspace or attached), then for each candidate model in the selected
order try the tool with a timeout, retrying transient errors with exponential backoff;
a model that keeps failing hands over to the next candidate; when none is left the
subtask fails. A subtask whose dependency did not finish is skipped with the reason.
A failing subtask never cancels its siblings.

The node has a sync and an async implementation over the same logic, so the graph
works with ``invoke`` as well as ``ainvoke``, ``astream`` and the LangGraph server.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import time
import uuid
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from langgraph.config import get_config, get_stream_writer
from langgraph.func import task
from langgraph.runtime import Runtime

from graph.context import Context, context_of
from graph.state import Attempt, ResultStatus, State, SubtaskResult
from tools.artifacts import ArtifactStore, is_artifact_ref
from tools.catalog import DEFAULT_CATALOG, load_catalog
from tools.errors import ArgumentError, ToolTimeoutError, TransientToolError
from tools.fetch import FetchLimits, fetch_url
from tools.inputs import resolve_input_file
from tools.kinds import as_text, generated_ref, is_url
from tools.registry import ToolContext, find_tools, normalize_outputs, run_settings
from tools.selection import model_cards
from tools.tasks import get_task_type
from tools.threads import in_thread

__all__ = ["execute", "aexecute", "Job", "Board", "run_job"]

TRANSIENT_ERRORS: tuple[type[BaseException], ...] = (
    TransientToolError, TimeoutError, ConnectionError,
)

Emit = Callable[[dict[str, Any]], None]

FILE_KINDS = frozenset({"image", "audio", "video", "table"})
"""Argument kinds whose values are files (paths, URLs or artifact references)."""


@dataclass
class Job:
    """Everything one subtask needs, as plain data (it crosses the ``@task`` boundary)."""

    id: int
    task: str
    dep: list[int]
    args: dict[str, str]
    candidates: list[dict[str, Any]]
    no_model_reason: str
    files: list[str]
    workspace: str
    thread_id: str
    board: str
    timeout_s: float
    retries: int
    backoff_s: float
    latency_scale: float
    max_models: int
    latencies: dict[str, float] = field(default_factory=dict)
    fetch: dict[str, Any] = field(default_factory=dict)
    """:class:`~tools.fetch.FetchLimits` fields for URL inputs."""
    settings: dict[str, dict[str, Any]] = field(default_factory=dict)
    """The run's per-backend settings, given to tools through ``run_settings``."""
    max_file_bytes: int = 100 * 1024 * 1024
    """The largest local input file a subtask may read."""


class Board:
    """Where finished subtasks post their results for their dependents.

    One board per execution of the node; the thread-safe futures serve both the sync
    path (``wait``) and the async path (``await_all``).
    """

    _open: dict[str, Board] = {}

    def __init__(self, ids: list[int]) -> None:
        self.key = uuid.uuid4().hex
        self.futures: dict[int, concurrent.futures.Future[dict[str, Any]]] = {
            i: concurrent.futures.Future() for i in ids
        }
        Board._open[self.key] = self

    @classmethod
    def get(cls, key: str) -> Board:
        return cls._open[key]

    def close(self) -> None:
        Board._open.pop(self.key, None)

    def post(self, subtask_id: int, result: dict[str, Any]) -> None:
        future = self.futures[subtask_id]
        if not future.done():
            future.set_result(result)

    def wait(self, ids: list[int]) -> dict[int, dict[str, Any]]:
        return {i: self.futures[i].result() for i in ids}

    async def await_all(self, ids: list[int]) -> dict[int, dict[str, Any]]:
        results = await asyncio.gather(*(asyncio.wrap_future(self.futures[i]) for i in ids))
        return dict(zip(ids, results, strict=True))


def _result(job: Job, status: ResultStatus, **fields: Any) -> dict[str, Any]:
    return SubtaskResult(id=job.id, task=job.task, status=status, **fields).model_dump(mode="json")


def _skip_reason(job: Job, deps: dict[int, dict[str, Any]]) -> str | None:
    for dep_id in job.dep:
        dep = deps[dep_id]
        if dep["status"] != "done":
            why = dep.get("error") or dep["status"]
            return f"skipped: dependency {dep_id} ({dep['task']}) {dep['status']}: {why}"
    return None


def _resolve_file(value: str, job: Job, store: ArtifactStore) -> Path:
    """A literal file argument: an attached file or a regular file inside the workspace,
    within the size limit (see :func:`tools.inputs.resolve_input_file`)."""
    return resolve_input_file(value, store.workspace, job.files, job.max_file_bytes)


def resolve_args(job: Job, deps: dict[int, dict[str, Any]], store: ArtifactStore) -> dict[str, Any]:
    """Turn plan arguments into tool arguments: text as ``str``, files as ``Path``."""
    task_type = get_task_type(job.task)
    assert task_type is not None, "validated plans name known task types"
    resolved: dict[str, Any] = {}
    for name, value in job.args.items():
        arg = task_type.arg(name)
        kind = str(arg.kind) if arg else "param"
        ref = generated_ref(value)
        if ref is not None:
            if ref not in deps:
                raise ArgumentError(f"argument {name!r} refers to subtask {ref}, which is not "
                                    "among this subtask's dependencies")
            source = deps[ref]
            source_type = get_task_type(source["task"])
            output = source_type.output_for(kind) if source_type else None
            if output is None or output.name not in source["outputs"]:
                raise ArgumentError(f"subtask {ref} produced no {kind} output for {name!r}")
            produced = source["outputs"][output.name]
            if is_artifact_ref(produced):
                path = store.resolve(produced)
                resolved[name] = path.read_text(encoding="utf-8") if kind == "text" else path
            elif kind in FILE_KINDS:
                raise ArgumentError(f"subtask {ref} gave no {kind} file for {name!r}, only "
                                    f"a {type(produced).__name__}")
            else:
                resolved[name] = as_text(produced) if kind == "text" else produced
        elif kind in FILE_KINDS:
            if is_url(value):
                fetched = fetch_url(value, kind, store, FetchLimits(**job.fetch))
                resolved[name] = store.resolve(fetched)
            else:
                resolved[name] = _resolve_file(value, job, store)
        else:
            resolved[name] = value
    return resolved


async def _call_tool(tool_fn: Callable[..., Any], is_async: bool, kwargs: dict[str, Any],
                     timeout_s: float) -> Any:
    try:
        if is_async:
            return await asyncio.wait_for(tool_fn(**kwargs), timeout_s)
        return await asyncio.wait_for(in_thread(tool_fn, **kwargs), timeout_s)
    except TimeoutError as exc:
        raise ToolTimeoutError(
            f"no result within {timeout_s:g}s; the call was abandoned"
        ) from exc


def _failed_inputs(job: Job, exc: Exception, emit: Emit) -> dict[str, Any]:
    error = f"{type(exc).__name__}: {exc}"
    emit({"type": "subtask", "id": job.id, "task": job.task, "event": "failed", "error": error})
    return _result(job, "failed", error=error)


async def run_job(job: Job, deps: dict[int, dict[str, Any]], emit: Emit) -> dict[str, Any]:
    """The per-subtask state machine: skip, or try models with retries, then fail."""
    if (reason := _skip_reason(job, deps)) is not None:
        emit({"type": "subtask", "id": job.id, "task": job.task, "event": "skipped",
              "error": reason})
        return _result(job, "skipped", error=reason)
    if not job.candidates:
        emit({"type": "subtask", "id": job.id, "task": job.task, "event": "failed",
              "error": job.no_model_reason})
        return _result(job, "failed", error=job.no_model_reason)

    task_type = get_task_type(job.task)
    assert task_type is not None
    # File-system work runs in threads: an event loop (the LangGraph server's) never blocks.
    store = await in_thread(ArtifactStore, job.workspace, job.thread_id)
    started = time.monotonic()
    for attempt in range(job.retries + 1):  # downloads of URL inputs may fail transiently
        try:
            args = await in_thread(resolve_args, job, deps, store)
            break
        except TransientToolError as exc:
            if attempt == job.retries:
                return _failed_inputs(job, exc, emit)
            await asyncio.sleep(job.backoff_s * 2**attempt)
        except ArgumentError as exc:
            return _failed_inputs(job, exc, emit)

    log: list[Attempt] = []
    for candidate in job.candidates[: job.max_models]:
        model, backend = candidate["model"], candidate["backend"]
        tools = find_tools(job.task, model, [backend])
        if not tools:
            log.append(Attempt(model=model, backend=backend, ok=False,
                               error="no tool registered", error_type="NoTool"))
            continue
        tool = tools[0]
        context = ToolContext(
            subtask_id=job.id, task=job.task, model=model, artifacts=store,
            expected_latency_s=job.latencies.get(model, 1.0),
            latency_scale=job.latency_scale,
        )
        for attempt in range(job.retries + 1):
            emit({"type": "subtask", "id": job.id, "task": job.task, "event": "started",
                  "model": model, "backend": backend, "attempt": len(log) + 1})
            t0, at = time.monotonic(), time.time()
            try:
                value = await _call_tool(
                    tool.fn, tool.is_async, tool.call_kwargs(args, model, context), job.timeout_s
                )
                outputs = await in_thread(normalize_outputs, task_type, value, store)
            except Exception as exc:  # a tool's failure becomes data: the attempt log
                transient = isinstance(exc, TRANSIENT_ERRORS)
                log.append(Attempt(model=model, backend=backend, ok=False,
                                   error=str(exc)[:500], error_type=type(exc).__name__,
                                   latency_s=round(time.monotonic() - t0, 4), at=at))
                if transient and attempt < job.retries:
                    delay = job.backoff_s * 2**attempt
                    emit({"type": "subtask", "id": job.id, "task": job.task, "event": "retry",
                          "model": model, "error": f"{type(exc).__name__}: {exc}",
                          "delay_s": delay})
                    await asyncio.sleep(delay)
                    continue
                emit({"type": "subtask", "id": job.id, "task": job.task, "event": "model_failed",
                      "model": model, "error": f"{type(exc).__name__}: {exc}"})
                break
            log.append(Attempt(model=model, backend=backend, ok=True,
                               latency_s=round(time.monotonic() - t0, 4), at=at))
            latency = round(time.monotonic() - started, 4)
            emit({"type": "subtask", "id": job.id, "task": job.task, "event": "done",
                  "model": model, "latency_s": latency})
            return _result(job, "done", model=model, backend=backend, outputs=outputs,
                           attempts=len(log), attempt_log=log, latency_s=latency)

    last = log[-1] if log else None
    tried = ", ".join(dict.fromkeys(f"{a.model} ({a.error_type})" for a in log if not a.ok))
    error = f"{last.error_type}: {last.error}" if last else "no candidate model"
    error += f" [tried: {tried}]" if tried else ""
    emit({"type": "subtask", "id": job.id, "task": job.task, "event": "failed", "error": error})
    return _result(job, "failed", model=last.model if last else None,
                   backend=last.backend if last else None, attempts=len(log),
                   attempt_log=log, error=error,
                   latency_s=round(time.monotonic() - started, 4))


def _job(data: dict[str, Any]) -> Job:
    return Job(**data)


@task(name="subtask")  # type: ignore[arg-type]  # langgraph types tasks loosely
def run_subtask(job_data: dict[str, Any]) -> dict[str, Any]:
    """One subtask, on the sync path: wait for dependencies, then run."""
    job = _job(job_data)
    deps = Board.get(job.board).wait(job.dep)
    with run_settings(job.settings):
        return asyncio.run(run_job(job, deps, get_stream_writer()))


@task(name="subtask")  # type: ignore[arg-type]
async def arun_subtask(job_data: dict[str, Any]) -> dict[str, Any]:
    """One subtask, on the async path: wait for dependencies, then run."""
    job = _job(job_data)
    deps = await Board.get(job.board).await_all(job.dep)
    with run_settings(job.settings):
        return await run_job(job, deps, get_stream_writer())


def _jobs(state: State, context: Context, board: Board) -> list[Job]:
    catalog = load_catalog(context.catalog or DEFAULT_CATALOG)
    thread_id = str(get_config().get("configurable", {}).get("thread_id", "default"))
    workspace = str(Path(context.workspace).resolve())
    jobs = []
    for st in state.plan:
        selection = state.selections.get(st.id)
        candidates = [c.model_dump() for c in selection.candidates] if selection else []
        cards = {card.id: card for card in model_cards(st.task, catalog)}
        latencies = {
            c["model"]: cards[c["model"]].expected_latency_s
            for c in candidates if c["model"] in cards
        }
        jobs.append(Job(
            id=st.id, task=st.task, dep=list(st.dep), args=dict(st.args),
            candidates=candidates,
            no_model_reason=selection.reason if selection else "no model was selected",
            files=list(state.files), workspace=workspace, thread_id=thread_id,
            board=board.key, timeout_s=context.subtask_timeout_s,
            retries=context.subtask_retries, backoff_s=context.retry_backoff_s,
            latency_scale=context.dry_run_latency_scale,
            max_models=context.max_models_per_subtask, latencies=latencies,
            fetch={"max_bytes": int(context.max_download_mb * 1024 * 1024),
                   "timeout_s": context.download_timeout_s,
                   "allow_private": context.allow_private_urls},
            settings=context.backend_settings(),
            max_file_bytes=int(context.max_file_mb * 1024 * 1024),
        ))
    return jobs


def _post_when_done(board: Board, job: Job) -> Callable[[Any], None]:
    def post(future: Any) -> None:
        if future.cancelled() or future.exception() is not None:
            error = "cancelled" if future.cancelled() else repr(future.exception())
            board.post(job.id, _result(job, "failed", error=f"internal error: {error}"))
        else:
            board.post(job.id, future.result())

    return post


def _update(results: list[dict[str, Any]]) -> dict[str, Any]:
    return {"results": {r["id"]: SubtaskResult.model_validate(r) for r in results}}


def _start(jobs: list[Job], board: Board, subtask_task: Any) -> list[Any]:
    """Call the subtask task for every job, in plan order (the same task ids on resume),
    each posting its result on the board for its dependents when it finishes."""
    futures = []
    for job in jobs:
        future = subtask_task(asdict(job))
        future.add_done_callback(_post_when_done(board, job))
        futures.append(future)
    return futures


def execute(state: State, runtime: Runtime[Context]) -> dict[str, Any]:
    """Run the plan (sync path)."""
    get_stream_writer()({"type": "stage", "stage": "execute", "event": "start"})
    board = Board([st.id for st in state.plan])
    try:
        jobs = _jobs(state, context_of(runtime), board)
        return _update([f.result() for f in _start(jobs, board, run_subtask)])
    finally:
        board.close()


async def aexecute(state: State, runtime: Runtime[Context]) -> dict[str, Any]:
    """Run the plan (async path)."""
    get_stream_writer()({"type": "stage", "stage": "execute", "event": "start"})
    board = Board([st.id for st in state.plan])
    try:
        jobs = await in_thread(_jobs, state, context_of(runtime), board)  # reads the catalog
        return _update(list(await asyncio.gather(*_start(jobs, board, arun_subtask))))
    finally:
        board.close()
