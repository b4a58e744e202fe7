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

Subtasks that already have a result (the plan stage ran them while the plan streamed,
see :mod:`hugginggpt.nodes.streaming`) are not run again: their results are on the
board for their dependents from the start.

The node has a sync and an async implementation over the same logic, so the graph
works with ``invoke`` as well as ``ainvoke``, ``astream`` and the LangGraph server.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

from langgraph.config import get_stream_writer
from langgraph.runtime import get_runtime

from hugginggpt.graph.context import Context, context_of
from hugginggpt.graph.state import State, SubtaskResult, streamed_for
from hugginggpt.nodes.execution.board import Board
from hugginggpt.nodes.execution.jobs import Job, make_jobs
from hugginggpt.nodes.execution.subtasks import (
    arun_subtask,
    result_calls,
    run_subtask,
    start_subtasks,
)
from hugginggpt.tools.fetch import DownloadBudget
from hugginggpt.tools.llm.expert import ExpertLLM
from hugginggpt.tools.llm.records import run_spend
from hugginggpt.tools.llm.transcripts import akeep, keep
from hugginggpt.tools.threads import in_thread

__all__ = ["execute", "aexecute"]


def _ran(state: State) -> dict[int, SubtaskResult]:
    """The plan's subtasks that ran while the plan streamed (the plan stage's)."""
    return {i: s.result for i, s in streamed_for(state.plan, state.streamed).items()
            if s.result is not None}


def _update(state: State, results: list[dict[str, Any]]) -> dict[str, Any]:
    """Every planned subtask's result (those run while the plan streamed, then those run
    here), and the LLM calls the subtasks run here made, in plan order."""
    return {"results": _ran(state) | {r["id"]: SubtaskResult.model_validate(r)
                                      for r in results},
            "llm_calls": result_calls(results)}


def _board(state: State, context: Context) -> tuple[Board, float]:
    """The run's board (with its download budget and its LLM, holding what the run
    spent on LLMs so far) and its deadline, from now."""
    budget = DownloadBudget(int(context.max_download_total_mb * 1024 * 1024))
    turn = len(state.history) // 2
    llm = ExpertLLM(context, turn=turn, spent=run_spend(state.llm_calls, turn))
    board = Board([st.id for st in state.plan], budget, llm)
    for subtask_id, done in _ran(state).items():
        board.post(subtask_id, done.model_dump(mode="json"))
    return board, time.monotonic() + context.max_run_s


def _to_run(jobs: list[Job], state: State) -> list[Job]:
    """The jobs of the subtasks that did not run while the plan streamed."""
    ran = _ran(state)
    return [job for job in jobs if job.id not in ran]


def execute(state: State) -> dict[str, Any]:
    """Run the plan (sync path). The node pairs it with :func:`aexecute` in a
    ``RunnableLambda``, so it reads the run's context with ``get_runtime``."""
    get_stream_writer()({"type": "stage", "stage": "execute", "event": "start"})
    context = context_of(get_runtime(Context))
    board, deadline = _board(state, context)
    try:
        jobs = _to_run(make_jobs(state, context, board.key, deadline), state)
        update = _update(state, [f.result() for f in start_subtasks(jobs, board, run_subtask)])
        return update | {"llm_calls": keep(update["llm_calls"])}
    finally:
        board.close()


async def aexecute(state: State) -> dict[str, Any]:
    """Run the plan (async path)."""
    get_stream_writer()({"type": "stage", "stage": "execute", "event": "start"})
    context = context_of(get_runtime(Context))
    board, deadline = _board(state, context)
    try:
        jobs = _to_run(await in_thread(make_jobs, state, context, board.key, deadline), state)
        futures = start_subtasks(jobs, board, arun_subtask)
        update = _update(state, list(await asyncio.gather(*futures)))
        return update | {"llm_calls": await akeep(update["llm_calls"])}
    finally:
        board.close()
