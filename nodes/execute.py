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

Every tool output is checked against its task type's declared outputs (a missing,
empty, wrongly typed or malformed output, or a reference to a missing file, fails the
attempt like an exception). Per run, the execution is bounded in time (``max_run_s``:
subtasks not finished by then are abandoned, failed or skipped with the limit as the
reason, and the run still responds with what finished) and in downloaded bytes
(``max_download_total_mb`` over all URL inputs).

The node has a sync and an async implementation over the same logic, so the graph
works with ``invoke`` as well as ``ainvoke``, ``astream`` and the LangGraph server.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import math
import time
import uuid
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from langgraph.config import get_config, get_stream_writer
from langgraph.func import task
from langgraph.runtime import get_runtime

from hugginggpt.graph.context import Context, context_of
from hugginggpt.graph.state import Attempt, ResultStatus, State, SubtaskResult
from hugginggpt.tools.artifacts import ArtifactStore, is_artifact_ref
from hugginggpt.tools.errors import (
    ArgumentError,
    LimitExceededError,
    ToolTimeoutError,
    TransientToolError,
)
from hugginggpt.tools.experts.availability import model_cards
from hugginggpt.tools.experts.catalog import DEFAULT_CATALOG, load_catalog
from hugginggpt.tools.experts.registry import (
    ToolContext,
    find_tools,
    normalize_outputs,
    run_settings,
)
from hugginggpt.tools.experts.tasks import get_task_type
from hugginggpt.tools.fetch import DownloadBudget, FetchLimits, fetch_url
from hugginggpt.tools.inputs import resolve_input_file
from hugginggpt.tools.kinds import as_text, generated_ref, is_url
from hugginggpt.tools.redact import redact
from hugginggpt.tools.threads import in_thread

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
    """:class:`~hugginggpt.tools.fetch.FetchLimits` fields for URL inputs."""
    settings: dict[str, dict[str, Any]] = field(default_factory=dict)
    """The run's per-backend settings, given to tools through ``run_settings``."""
    max_file_bytes: int = 100 * 1024 * 1024
    """The largest local input file a subtask may read."""
    deadline: float | None = None
    """``time.monotonic()`` by which the run's execution must end (None: no limit)."""
    max_run_s: float = math.inf
    """The run's ``max_run_s``, for the message when the deadline is reached."""


DEADLINE_GRACE_S = 2.0
"""How much longer than the run's deadline a dependent waits for a dependency's result
(each subtask posts one by the deadline, unless a tool blocks its event loop)."""


def remaining_s(job: Job) -> float:
    """Seconds left before the run's deadline (infinite without one)."""
    return math.inf if job.deadline is None else job.deadline - time.monotonic()


def run_time_limit(job: Job, what: str) -> LimitExceededError:
    """The error that says the run's time limit ended ``what``."""
    return LimitExceededError(
        f"the run's time limit was reached {what}", setting="max_run_s",
        value=job.max_run_s, unit=" s", env="HUGGINGGPT_MAX_RUN_S", flag="--max-run-time")


class Board:
    """Where finished subtasks post their results for their dependents.

    One board per execution of the node; the thread-safe futures serve both the sync
    path (``wait``) and the async path (``await_all``).
    """

    _open: dict[str, Board] = {}

    def __init__(self, ids: list[int], downloads: DownloadBudget | None = None) -> None:
        self.key = uuid.uuid4().hex
        self.futures: dict[int, concurrent.futures.Future[dict[str, Any]]] = {
            i: concurrent.futures.Future() for i in ids
        }
        self.downloads = downloads
        """The run's download budget, shared by its subtasks."""
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

    def wait(self, ids: list[int], timeout: float | None = None) -> dict[int, dict[str, Any]]:
        """The results of ``ids``, waiting for them.

        Raises:
            TimeoutError: not all of them came within ``timeout`` seconds.
        """
        done, _ = concurrent.futures.wait([self.futures[i] for i in ids], timeout)
        if len(done) < len(set(ids)):
            raise TimeoutError(f"no result from subtasks {ids} within {timeout:g}s")
        return {i: self.futures[i].result() for i in ids}

    async def await_all(
        self, ids: list[int], timeout: float | None = None
    ) -> dict[int, dict[str, Any]]:
        """The async form of :meth:`wait` (the futures are not cancelled on a timeout:
        other dependents may still wait for them)."""
        if not ids:
            return {}
        waiting = {asyncio.wrap_future(self.futures[i]) for i in set(ids)}
        _, pending = await asyncio.wait(waiting, timeout=timeout)
        if pending:
            raise TimeoutError(f"no result from subtasks {ids} within {timeout:g}s")
        return {i: self.futures[i].result() for i in ids}


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
    within the size limit (see :func:`hugginggpt.tools.inputs.resolve_input_file`)."""
    return resolve_input_file(value, store.workspace, job.files, job.max_file_bytes)


def resolve_args(job: Job, deps: dict[int, dict[str, Any]], store: ArtifactStore,
                 downloads: DownloadBudget | None = None) -> dict[str, Any]:
    """Turn plan arguments into tool arguments: text as ``str``, files as ``Path``; URL
    inputs are downloaded within ``downloads``, the run's budget.

    Raises:
        ArgumentError: an input cannot be resolved (said why).
        LimitExceededError: the run's download budget is spent.
        TransientToolError: a download failed in a way that may pass.
    """
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
                resolved[name] = _read_text(path, ref) if kind == "text" else path
            elif kind in FILE_KINDS:
                raise ArgumentError(f"subtask {ref} gave no {kind} file for {name!r}, only "
                                    f"a {type(produced).__name__}")
            else:
                resolved[name] = as_text(produced) if kind == "text" else produced
        elif kind in FILE_KINDS:
            if is_url(value):
                fetched = fetch_url(value, kind, store, FetchLimits(**job.fetch), downloads)
                resolved[name] = store.resolve(fetched)
            else:
                resolved[name] = _resolve_file(value, job, store)
        else:
            resolved[name] = value
    return resolved


def _read_text(path: Path, source: int) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ArgumentError(f"the text output of subtask {source} cannot be read from "
                            f"{path.name}: {exc}") from exc


async def _call_tool(tool_fn: Callable[..., Any], is_async: bool, kwargs: dict[str, Any],
                     timeout_s: float) -> Any:
    """Call a tool within ``timeout_s``; a ``TimeoutError`` the tool raises itself stays
    what it is (it is not this timeout)."""
    try:
        async with asyncio.timeout(_finite(timeout_s)) as limit:
            if is_async:
                return await tool_fn(**kwargs)
            return await in_thread(tool_fn, **kwargs)
    except TimeoutError as exc:
        if limit.expired():
            raise ToolTimeoutError(
                f"no result within {timeout_s:g}s; the call was abandoned") from exc
        raise


def _finite(seconds: float) -> float | None:
    """A delay for ``asyncio.timeout``: None for no limit, never negative."""
    return None if math.isinf(seconds) else max(seconds, 0.0)


def describe_error(exc: BaseException) -> str:
    """``Type: message``, saying so when the message is empty, without secrets (an
    endpoint's error may echo a token)."""
    try:
        message = redact(str(exc).strip())
    except Exception:  # a broken __str__ must not hide the failure
        message = ""
    return f"{type(exc).__name__}: {message or '(no message)'}"


def _emit_end(job: Job, emit: Emit, status: ResultStatus, error: str) -> None:
    emit({"type": "subtask", "id": job.id, "task": job.task, "event": status, "error": error})


def _failed_inputs(job: Job, exc: Exception, emit: Emit) -> dict[str, Any]:
    error = describe_error(exc)
    _emit_end(job, emit, "failed", error)
    return _result(job, "failed", error=error)


def _not_started(job: Job, emit: Emit, what: str) -> dict[str, Any]:
    error = describe_error(run_time_limit(job, what))
    _emit_end(job, emit, "skipped", error)
    return _result(job, "skipped", error=error)


async def _resolve_inputs(job: Job, deps: dict[int, dict[str, Any]],
                          store: ArtifactStore) -> dict[str, Any]:
    """:func:`resolve_args` in a thread, retrying transient download failures, within
    the run's deadline.

    Raises:
        ArgumentError, LimitExceededError, TransientToolError (its retries spent).
    """
    downloads = Board.get(job.board).downloads
    attempt = 0
    while True:
        try:
            async with asyncio.timeout(_finite(remaining_s(job))) as limit:
                return await in_thread(resolve_args, job, deps, store, downloads)
        except TimeoutError as exc:
            if limit.expired():
                raise run_time_limit(job, "while its inputs were being resolved") from exc
            raise
        except TransientToolError:
            delay = job.backoff_s * 2**attempt
            if attempt == job.retries or delay >= remaining_s(job):
                raise
        await asyncio.sleep(delay)
        attempt += 1


async def run_job(job: Job, deps: dict[int, dict[str, Any]], emit: Emit) -> dict[str, Any]:
    """The per-subtask state machine: skip, or try models with retries, then fail; all
    within the run's deadline."""
    if (reason := _skip_reason(job, deps)) is not None:
        _emit_end(job, emit, "skipped", reason)
        return _result(job, "skipped", error=reason)
    if not job.candidates:
        _emit_end(job, emit, "failed", job.no_model_reason)
        return _result(job, "failed", error=job.no_model_reason)
    if remaining_s(job) <= 0:
        return _not_started(job, emit, "before this subtask could start")

    task_type = get_task_type(job.task)
    assert task_type is not None
    # File-system work runs in threads: an event loop (the LangGraph server's) never blocks.
    store = await in_thread(ArtifactStore, job.workspace, job.thread_id)
    started = time.monotonic()
    try:
        args = await _resolve_inputs(job, deps, store)
    except (ArgumentError, LimitExceededError, TransientToolError, OSError) as exc:
        return _failed_inputs(job, exc, emit)

    log: list[Attempt] = []
    stopped: LimitExceededError | None = None
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
            left = remaining_s(job)
            if left <= 0:
                stopped = run_time_limit(job, f"before attempt {len(log) + 1} could start")
                break
            context.extra["call"] = len(log)
            emit({"type": "subtask", "id": job.id, "task": job.task, "event": "started",
                  "model": model, "backend": backend, "attempt": len(log) + 1})
            t0, at = time.monotonic(), time.time()
            try:
                try:
                    value = await _call_tool(tool.fn, tool.is_async,
                                             tool.call_kwargs(args, model, context),
                                             min(job.timeout_s, left))
                except ToolTimeoutError as exc:
                    if job.timeout_s > left:  # the run's deadline, not the subtask timeout
                        raise run_time_limit(
                            job, f"while {model} ran; the call was abandoned") from exc
                    raise
                outputs = await in_thread(normalize_outputs, task_type, value, store)
            except Exception as exc:  # a tool's failure becomes data: the attempt log
                log.append(Attempt(model=model, backend=backend, ok=False,
                                   error=describe_error(exc).partition(": ")[2][:500],
                                   error_type=type(exc).__name__,
                                   latency_s=round(time.monotonic() - t0, 4), at=at))
                if isinstance(exc, LimitExceededError) and exc.setting == "max_run_s":
                    stopped = exc
                    break
                delay = job.backoff_s * 2**attempt
                if isinstance(exc, TRANSIENT_ERRORS) and attempt < job.retries:
                    if delay >= remaining_s(job):
                        stopped = run_time_limit(
                            job, f"before retry {attempt + 1} of {model} could start")
                        break
                    emit({"type": "subtask", "id": job.id, "task": job.task, "event": "retry",
                          "model": model, "error": describe_error(exc), "delay_s": delay})
                    await asyncio.sleep(delay)
                    continue
                emit({"type": "subtask", "id": job.id, "task": job.task, "event": "model_failed",
                      "model": model, "error": describe_error(exc)})
                break
            log.append(Attempt(model=model, backend=backend, ok=True,
                               latency_s=round(time.monotonic() - t0, 4), at=at))
            latency = round(time.monotonic() - started, 4)
            emit({"type": "subtask", "id": job.id, "task": job.task, "event": "done",
                  "model": model, "latency_s": latency})
            return _result(job, "done", model=model, backend=backend, outputs=outputs,
                           attempts=len(log), attempt_log=log, latency_s=latency)
        if stopped is not None:
            break

    last = log[-1] if log else None
    tried = ", ".join(dict.fromkeys(f"{a.model} ({a.error_type})" for a in log if not a.ok))
    if stopped is not None:
        error = describe_error(stopped)
    else:
        error = f"{last.error_type}: {last.error}" if last else "no candidate model"
    error += f" [tried: {tried}]" if tried else ""
    _emit_end(job, emit, "failed", error)
    return _result(job, "failed", model=last.model if last else None,
                   backend=last.backend if last else None, attempts=len(log),
                   attempt_log=log, error=error,
                   latency_s=round(time.monotonic() - started, 4))


def _job(data: dict[str, Any]) -> Job:
    return Job(**data)


def _dependency_wait_s(job: Job) -> float | None:
    """How long to wait for the dependencies: until the deadline and a grace period."""
    left = remaining_s(job)
    return None if math.isinf(left) else max(left, 0.0) + DEADLINE_GRACE_S


def _no_dependency_result(job: Job, emit: Emit) -> dict[str, Any]:
    return _not_started(job, emit, f"while it waited for subtasks {job.dep}")


@task(name="subtask")  # type: ignore[arg-type]  # langgraph types tasks loosely
def run_subtask(job_data: dict[str, Any]) -> dict[str, Any]:
    """One subtask, on the sync path: wait for dependencies, then run."""
    job = _job(job_data)
    emit = get_stream_writer()
    try:
        deps = Board.get(job.board).wait(job.dep, _dependency_wait_s(job))
    except TimeoutError:
        return _no_dependency_result(job, emit)
    with run_settings(job.settings):
        return asyncio.run(run_job(job, deps, emit))


@task(name="subtask")  # type: ignore[arg-type]
async def arun_subtask(job_data: dict[str, Any]) -> dict[str, Any]:
    """One subtask, on the async path: wait for dependencies, then run."""
    job = _job(job_data)
    emit = get_stream_writer()
    try:
        deps = await Board.get(job.board).await_all(job.dep, _dependency_wait_s(job))
    except TimeoutError:
        return _no_dependency_result(job, emit)
    with run_settings(job.settings):
        return await run_job(job, deps, emit)


def _jobs(state: State, context: Context, board: Board, deadline: float) -> list[Job]:
    catalog = load_catalog(context.catalog or DEFAULT_CATALOG)
    settings = context.backend_settings()
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
            settings=settings, deadline=deadline, max_run_s=context.max_run_s,
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


def _board(state: State, context: Context) -> tuple[Board, float]:
    """The run's board (with its download budget) and its deadline, from now."""
    budget = DownloadBudget(int(context.max_download_total_mb * 1024 * 1024))
    return Board([st.id for st in state.plan], budget), time.monotonic() + context.max_run_s


def execute(state: State) -> dict[str, Any]:
    """Run the plan (sync path). The node pairs it with :func:`aexecute` in a
    ``RunnableLambda``, so it reads the run's context with ``get_runtime``."""
    get_stream_writer()({"type": "stage", "stage": "execute", "event": "start"})
    context = context_of(get_runtime(Context))
    board, deadline = _board(state, context)
    try:
        jobs = _jobs(state, context, board, deadline)
        return _update([f.result() for f in _start(jobs, board, run_subtask)])
    finally:
        board.close()


async def aexecute(state: State) -> dict[str, Any]:
    """Run the plan (async path)."""
    get_stream_writer()({"type": "stage", "stage": "execute", "event": "start"})
    context = context_of(get_runtime(Context))
    board, deadline = _board(state, context)
    try:
        jobs = await in_thread(_jobs, state, context, board, deadline)  # reads the catalog
        return _update(list(await asyncio.gather(*_start(jobs, board, arun_subtask))))
    finally:
        board.close()
