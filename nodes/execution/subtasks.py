"""The subtask as a LangGraph ``@task`` (sync and async bodies), and how its result
reaches its dependents: every finished subtask posts its result on the run's
:class:`~hugginggpt.nodes.execution.board.Board`. Shared by the execute stage and by
the plan stage when it starts subtasks while the plan streams."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import asdict
from typing import Any

from langgraph.config import get_stream_writer
from langgraph.func import task

from hugginggpt.graph.state import Failure
from hugginggpt.nodes.execution.attempts import Emit, not_started, run_job
from hugginggpt.nodes.execution.board import Board, dependency_wait_s
from hugginggpt.nodes.execution.jobs import Job, result
from hugginggpt.tools.experts.llm import controller_llm
from hugginggpt.tools.experts.local.download import downloading
from hugginggpt.tools.experts.registry import run_settings
from hugginggpt.tools.llm.expert import SubtaskLLM
from hugginggpt.tools.llm.records import LLMCall

__all__ = ["run_subtask", "arun_subtask", "start_subtask", "start_subtasks", "result_calls"]


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


def _with_calls(result: dict[str, Any], llm: SubtaskLLM | None, job: Job) -> dict[str, Any]:
    """The result with the subtask's LLM calls, which are checkpointed with it, and the
    streamed subtask's key (a resumed plan stage checks that a saved result is the same
    subtask's)."""
    if job.key is not None:
        result = {**result, "key": job.key}
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
        return _with_calls(asyncio.run(run_job(job, deps, emit)), llm, job)


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
        return _with_calls(await run_job(job, deps, emit), llm, job)


STALE = ("not run here: the checkpointed result of this task call was another subtask's "
         "(the planner's reply changed on resume); it runs after planning")


def post_when_done(board: Board, job: Job) -> Callable[[Any], None]:
    """Post the job's result when its future finishes. A streamed subtask's result whose
    key is not its own (a resumed plan stage whose reply differed got another subtask's
    checkpointed result back) is posted as skipped, so its dependents do not run on it."""
    def post(future: Any) -> None:
        if future.cancelled() or future.exception() is not None:
            error = "cancelled" if future.cancelled() else repr(future.exception())
            board.post(job.id, result(job, "failed", error=f"internal error: {error}",
                                      failure=Failure(reason=f"internal error: {error}")))
        else:
            done = future.result()
            if job.key is not None and done.get("key", job.key) != job.key:
                board.post(job.id, result(job, "skipped", error=STALE,
                                          failure=Failure(reason=STALE)) | {"key": job.key})
                return
            if board.llm is not None and done.get("llm_calls"):
                board.llm.settle(job.id, result_calls([done]))
            board.post(job.id, done)

    return post


def result_calls(results: list[dict[str, Any]]) -> list[LLMCall]:
    """The LLM calls that subtasks of the ``llm`` backend made, from their results."""
    return [LLMCall.model_validate(c) for r in results for c in r.get("llm_calls", [])]


def start_subtask(job: Job, board: Board, subtask_task: Any) -> Any:
    """Call the subtask task for ``job``; its result is posted on the board for its
    dependents when it finishes. Returns the task's future."""
    future = subtask_task(asdict(job))
    future.add_done_callback(post_when_done(board, job))
    return future


def start_subtasks(jobs: list[Job], board: Board, subtask_task: Any) -> list[Any]:
    """Call the subtask task for every job, in plan order (the same task ids on resume)."""
    return [start_subtask(job, board, subtask_task) for job in jobs]
