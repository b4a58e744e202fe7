"""Stage 3, task execution: dataflow over the plan's DAG.

Every subtask is one LangGraph ``@task``, so its result is checkpointed the moment it
finishes: after a crash, resuming re-runs only the subtasks that had not finished.
The tasks are *called* in plan order (task ids depend on call order, so the order must
be the same on resume) and each one waits, inside itself, for the results of its
dependencies on a per-run :class:`Board`. A subtask therefore starts as soon as its own
dependencies finish, and the wall time is the DAG's critical path, not a sum of waves.

Per subtask: resolve the arguments (``<GENERATED>-k`` from dependency outputs, whole or
filled into a text in place; files only inside the workspace or attached), then for
each candidate model in the selected order try the tool with a timeout, retrying
transient errors with exponential backoff; a model that keeps failing hands over to the
next candidate; when none is left the subtask fails. A subtask whose dependency did not
finish is skipped with the reason. A failing subtask never cancels its siblings.

Every tool output is checked against its task type's declared outputs (a missing,
empty, wrongly typed or malformed output, or a reference to a missing file, fails the
attempt like an exception). Per run, the execution is bounded in time (``max_run_s``:
subtasks not finished by then are abandoned, failed or skipped with the limit as the
reason, and the run still responds with what finished) and in downloaded bytes
(``max_download_total_mb`` over all URL inputs and the models the local backend
downloads, whose progress goes out as ``download`` events).

The run's LLM is lent to the subtasks the ``llm`` backend runs: their calls share the
run's LLM budget with the stages', travel with each subtask's result (so a resumed run
still counts them) and join the thread's LLM calls.

The node has a sync and an async implementation over the same logic, so the graph
works with ``invoke`` as well as ``ainvoke``, ``astream`` and the LangGraph server.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import asdict
from typing import Any

from langgraph.config import get_stream_writer
from langgraph.func import task
from langgraph.runtime import get_runtime

from hugginggpt.graph.context import Context, context_of
from hugginggpt.graph.state import State, SubtaskResult
from hugginggpt.nodes.execution.attempts import Emit, not_started, run_job
from hugginggpt.nodes.execution.board import Board, dependency_wait_s
from hugginggpt.nodes.execution.jobs import Job, make_jobs, result
from hugginggpt.tools.experts.llm import controller_llm
from hugginggpt.tools.experts.local.download import downloading
from hugginggpt.tools.experts.registry import run_settings
from hugginggpt.tools.fetch import DownloadBudget
from hugginggpt.tools.llm.expert import ExpertLLM, SubtaskLLM
from hugginggpt.tools.llm.records import LLMCall, run_spend
from hugginggpt.tools.llm.transcripts import akeep, keep
from hugginggpt.tools.threads import in_thread

__all__ = ["execute", "aexecute"]


def _job(data: dict[str, Any]) -> Job:
    return Job(**data)


def _downloads(job: Job, emit: Emit) -> Any:
    """Model downloads of this subtask: within the run's budget, progress as events."""
    return downloading(Board.get(job.board).downloads,
                       lambda event: emit({**event, "id": job.id, "task": job.task}))


def _no_dependency_result(job: Job, emit: Emit) -> dict[str, Any]:
    return not_started(job, emit, f"while it waited for subtasks {job.dep}")


def _lent_llm(job: Job) -> SubtaskLLM | None:
    board = Board.get(job.board)
    return board.llm.for_subtask(job.id) if board.llm is not None else None


def _with_calls(result: dict[str, Any], llm: SubtaskLLM | None) -> dict[str, Any]:
    """The result with the subtask's LLM calls, which are checkpointed with it."""
    if llm is None or not llm.calls:
        return result
    return {**result, "llm_calls": [c.model_dump(mode="json") for c in llm.calls]}


@task(name="subtask")  # type: ignore[arg-type]  # langgraph types tasks loosely
def run_subtask(job_data: dict[str, Any]) -> dict[str, Any]:
    """One subtask, on the sync path: wait for dependencies, then run."""
    job = _job(job_data)
    emit = get_stream_writer()
    try:
        deps = Board.get(job.board).wait(job.dep, dependency_wait_s(job))
    except TimeoutError:
        return _no_dependency_result(job, emit)
    llm = _lent_llm(job)
    with run_settings(job.settings), controller_llm(llm), _downloads(job, emit):
        return _with_calls(asyncio.run(run_job(job, deps, emit)), llm)


@task(name="subtask")  # type: ignore[arg-type]
async def arun_subtask(job_data: dict[str, Any]) -> dict[str, Any]:
    """One subtask, on the async path: wait for dependencies, then run."""
    job = _job(job_data)
    emit = get_stream_writer()
    try:
        deps = await Board.get(job.board).await_all(job.dep, dependency_wait_s(job))
    except TimeoutError:
        return _no_dependency_result(job, emit)
    llm = _lent_llm(job)
    with run_settings(job.settings), controller_llm(llm), _downloads(job, emit):
        return _with_calls(await run_job(job, deps, emit), llm)


def _post_when_done(board: Board, job: Job) -> Callable[[Any], None]:
    def post(future: Any) -> None:
        if future.cancelled() or future.exception() is not None:
            error = "cancelled" if future.cancelled() else repr(future.exception())
            board.post(job.id, result(job, "failed", error=f"internal error: {error}"))
        else:
            done = future.result()
            if board.llm is not None and done.get("llm_calls"):
                board.llm.settle(job.id, _calls([done]))
            board.post(job.id, done)

    return post


def _calls(results: list[dict[str, Any]]) -> list[LLMCall]:
    return [LLMCall.model_validate(c) for r in results for c in r.get("llm_calls", [])]


def _update(results: list[dict[str, Any]]) -> dict[str, Any]:
    """The results, and the LLM calls the subtasks made, in plan order."""
    return {"results": {r["id"]: SubtaskResult.model_validate(r) for r in results},
            "llm_calls": _calls(results)}


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
    """The run's board (with its download budget and its LLM, holding what the run
    spent on LLMs so far) and its deadline, from now."""
    budget = DownloadBudget(int(context.max_download_total_mb * 1024 * 1024))
    turn = len(state.history) // 2
    llm = ExpertLLM(context, turn=turn, spent=run_spend(state.llm_calls, turn))
    board = Board([st.id for st in state.plan], budget, llm)
    return board, time.monotonic() + context.max_run_s


def execute(state: State) -> dict[str, Any]:
    """Run the plan (sync path). The node pairs it with :func:`aexecute` in a
    ``RunnableLambda``, so it reads the run's context with ``get_runtime``."""
    get_stream_writer()({"type": "stage", "stage": "execute", "event": "start"})
    context = context_of(get_runtime(Context))
    board, deadline = _board(state, context)
    try:
        jobs = make_jobs(state, context, board.key, deadline)
        update = _update([f.result() for f in _start(jobs, board, run_subtask)])
        return update | {"llm_calls": keep(update["llm_calls"])}
    finally:
        board.close()


async def aexecute(state: State) -> dict[str, Any]:
    """Run the plan (async path)."""
    get_stream_writer()({"type": "stage", "stage": "execute", "event": "start"})
    context = context_of(get_runtime(Context))
    board, deadline = _board(state, context)
    try:
        jobs = await in_thread(make_jobs, state, context, board.key, deadline)  # reads the catalog
        update = _update(list(await asyncio.gather(*_start(jobs, board, arun_subtask))))
        return update | {"llm_calls": await akeep(update["llm_calls"])}
    finally:
        board.close()
