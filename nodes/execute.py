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

Execution also starts while the plan streams (``stream_execution``, the default, with an
LLM planner on a streaming endpoint and ``approval`` ``never`` or ``risky``): the plan
stage hands each subtask over as soon as its JSON is complete and valid, and
:class:`StreamedExecution`, which the graph's builder gives the plan node, selects it
(the select stage's :class:`~hugginggpt.nodes.selection.Selector`, one subtask at a
time) and starts it as below, unless ``risky`` approval holds it (its tool does more
than read) or it depends on a held one: those wait for approval as without streaming.
When the reply ends, the plan stage waits for what was started and leaves it in
``streamed`` (by subtask id, with each one's :func:`~hugginggpt.graph.state.subtask_keys`
key): select and execute take what matches the plan and choose and run only the rest;
their results are on the board for their dependents from the start. In a repaired plan
a subtask with the key of one that is done keeps its result, whatever its id.

The streamed subtasks are tasks of the plan node, which re-asks the planner when a run
that stopped mid-stream resumes: they are called in the order they arrive, so those of an
identical reply get their checkpointed results back (a result whose key is not the
subtask's is not taken: it runs again here). The run's ``max_run_s`` counts from the
start of the stream.

The node has a sync and an async implementation over the same logic, so the graph
works with ``invoke`` as well as ``ainvoke``, ``astream`` and the LangGraph server.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextvars
import time
from typing import Any

from langgraph.config import get_stream_writer
from langgraph.runtime import get_runtime

from hugginggpt.graph.context import Context, context_of
from hugginggpt.graph.state import (
    Failure,
    Selection,
    State,
    Streamed,
    Subtask,
    SubtaskResult,
    streamed_for,
    subtask_keys,
)
from hugginggpt.nodes.execution.board import DEADLINE_GRACE_S, Board
from hugginggpt.nodes.execution.jobs import Job, make_jobs
from hugginggpt.nodes.execution.subtasks import (
    arun_subtask,
    result_calls,
    run_subtask,
    start_subtask,
    start_subtasks,
)
from hugginggpt.nodes.selection import Selector, risk_of
from hugginggpt.tools.fetch import DownloadBudget
from hugginggpt.tools.llm.expert import ExpertLLM
from hugginggpt.tools.llm.records import LLMCall, run_spend
from hugginggpt.tools.llm.transcripts import akeep, keep
from hugginggpt.tools.threads import in_thread

__all__ = ["execute", "aexecute", "StreamedExecution"]


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


_SELECTOR = -1
"""Where the streamed selector's LLM calls are counted in the run's LLM budget (no
subtask has a negative id)."""


class StreamedExecution:
    """Execution while the plan streams: the plan stage's
    :class:`~hugginggpt.nodes.plan.Handover`, taking each subtask as it arrives, then
    :meth:`finish`.

    An endpoint that fails mid-stream is followed by the next one's reply, handed over
    from its start (a new ``reply``): a subtask of it with the key of one already started
    takes that one's result instead of running twice.
    """

    def __init__(self, state: State, context: Context) -> None:
        self.state = state
        self.context = context
        self.budget = DownloadBudget(int(context.max_download_total_mb * 1024 * 1024))
        turn = len(state.history) // 2
        calls, tokens = run_spend(state.llm_calls, turn)
        # the planner's call is still streaming: it counts as one call already (its
        # tokens are known when it ends); the selector's calls count for the experts
        # (as subtask _SELECTOR's) and the experts' for the selector
        self.llm = ExpertLLM(context, turn=turn, spent=(calls + 1, tokens))
        self.selector = Selector(state, context, spent=lambda: self.llm.spent(_SELECTOR))
        self.deadline = time.monotonic() + context.max_run_s
        self.emit = get_stream_writer()
        self.earlier = {s.key: s for s in state.streamed.values()
                        if s.result is not None and s.result.status == "done"}
        """Done subtasks of the plan stage's earlier attempts, by key (a repair keeps them)."""
        self.futures: list[Any] = []
        """Every subtask task started, whichever endpoint's reply it came from."""
        self.started: dict[str, Any] = {}
        self.boards: list[Board] = []
        self._outside = contextvars.copy_context()
        """The plan stage's own context, where the streamed subtasks are selected and
        started: inside the planner's LLM call, a selector call would be reported to
        the planner call's callbacks (its tokens mixed into the plan's)."""
        self._reply = 0
        self._announced = False
        self._reset(1)

    def _reset(self, reply: int) -> None:
        """A new reply, from its start: one board per reply."""
        self._reply = reply
        self.board = Board([], self.budget, self.llm)
        self.boards.append(self.board)
        self.subtasks: list[Subtask] = []
        self.keys: dict[int, str] = {}
        self.selections: dict[int, Selection] = {}
        self.held: set[int] = set()
        self.running: set[int] = set()
        self.claimed: set[str] = set()

    def take(self, reply: int, subtask: Subtask) -> None:
        """Select ``subtask`` and start it, or hold it for approval."""
        if reply != self._reply:
            self._reset(reply)
        self._outside.run(self._arrive, subtask)

    def _arrive(self, subtask: Subtask) -> None:
        self.subtasks.append(subtask)
        key = self.keys[subtask.id] = subtask_keys(self.subtasks)[subtask.id]
        selection = self.selector.select([subtask])[subtask.id]
        self.llm.settle(_SELECTOR, list(self.selector.calls))
        self.selections[subtask.id] = selection
        held = any(d in self.held for d in subtask.dep) or (
            self.context.approval == "risky" and risk_of(subtask, selection) is not None)
        if held:
            self.held.add(subtask.id)
            return
        self._start(subtask, key, selection)

    def _start(self, subtask: Subtask, key: str, selection: Selection) -> None:
        board = self.board
        board.expect(subtask.id)
        self.running.add(subtask.id)
        if not self._announced:
            self._announced = True
            self.emit({"type": "stage", "stage": "execute", "event": "start", "streamed": True})
        if key not in self.claimed:  # the same subtask twice in one plan runs twice
            self.claimed.add(key)
            if (earlier := self.earlier.get(key)) is not None and earlier.result is not None:
                board.post(subtask.id, _relabeled(earlier.result.model_dump(mode="json"),
                                                  subtask.id, key))
                return
            if (future := self.started.get(key)) is not None:  # an earlier reply's
                future.add_done_callback(lambda f: board.post(
                    subtask.id, _relabeled(_outcome(f, subtask), subtask.id, key)))
                return
        view = self.state.model_copy(update={"plan": [subtask],
                                             "selections": {subtask.id: selection}})
        job = make_jobs(view, self.context, board.key, self.deadline)[0]
        job.key = key
        future = start_subtask(job, board, run_subtask)
        self.started.setdefault(key, future)
        self.futures.append(future)

    def finish(self, plan: list[Subtask]) -> tuple[dict[int, Streamed], list[LLMCall]]:
        """Wait for every started subtask; what was done for ``plan`` (see
        :meth:`~hugginggpt.nodes.plan.Handover.finish`), and the LLM calls made: the
        selector's, then the subtasks'."""
        try:
            done = [f.result() for f in self.futures]
            concurrent.futures.wait(  # the results reach the board in done-callbacks
                [self.board.futures[i] for i in self.running],
                timeout=max(self.deadline - time.monotonic(), 0) + DEADLINE_GRACE_S)
            calls = [*self.selector.calls, *result_calls(done)]
            if plan:
                return self._for(plan), calls
            return self._for(self.subtasks, only_ran=True), calls
        finally:
            for board in self.boards:
                board.close()

    def _for(self, plan: list[Subtask], only_ran: bool = False) -> dict[int, Streamed]:
        keys = subtask_keys(plan)
        found: dict[int, Streamed] = {}
        for subtask in plan:
            key = keys[subtask.id]
            selection = self.selections.get(subtask.id) if self.keys.get(
                subtask.id) == key else None
            result = self._result(subtask.id) if selection is not None else None
            if result is None and (earlier := self.earlier.get(key)) is not None:
                selection = selection or earlier.selection  # a repaired plan, not streamed
                result = earlier.result
            if result is not None:
                result = result.model_copy(update={"id": subtask.id, "streamed": True})
            if selection is None or (only_ran and result is None):
                continue
            found[subtask.id] = Streamed(
                key=key, selection=selection.model_copy(update={"subtask_id": subtask.id}),
                result=result)
        return found

    def _result(self, subtask_id: int) -> SubtaskResult | None:
        """What the subtask started for this id did, unless it was skipped."""
        future = self.board.futures.get(subtask_id)
        if subtask_id not in self.running or future is None or not future.done():
            return None
        posted = SubtaskResult.model_validate(future.result())
        # a skipped one runs again in the execute stage (skipped here: a dependency that
        # failed, which is skipped there too, or a stale result on resume)
        return None if posted.status == "skipped" else posted


def _outcome(future: Any, subtask: Subtask) -> dict[str, Any]:
    if future.cancelled() or future.exception() is not None:
        error = "cancelled" if future.cancelled() else repr(future.exception())
        return SubtaskResult(id=subtask.id, task=subtask.task, status="failed",
                             error=f"internal error: {error}",
                             failure=Failure(reason=f"internal error: {error}")
                             ).model_dump(mode="json")
    return dict(future.result())


def _relabeled(result: dict[str, Any], subtask_id: int, key: str) -> dict[str, Any]:
    """Another subtask's result, as this one's (same key: the same tool on the same
    inputs). Its LLM calls were counted where it ran."""
    return {k: v for k, v in result.items() if k != "llm_calls"} | {"id": subtask_id,
                                                                     "key": key}
