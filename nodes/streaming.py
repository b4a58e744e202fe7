"""Execution that starts while the plan streams (issue 16, item 3).

Without it, nothing runs until the planner's whole reply has arrived and been
validated. With ``stream_execution`` (the default; LLM planner, a streaming endpoint,
``approval`` ``never`` or ``risky``) the plan stage hands :class:`StreamedPlan` to the
LLM client, which tells it the reply's text as it streams. Each subtask object is
taken as soon as its JSON is complete
(:class:`~hugginggpt.nodes.planning.incremental.SubtaskScanner`) and, in turn:

- validated with the earlier valid subtasks, by the plan validator itself
  (:func:`~hugginggpt.nodes.planning.validation.validate_plan` on the prefix: one set of
  rules); an invalid one is not started, nor is anything that depends on it;
- given its model (:class:`~hugginggpt.nodes.selection.Selector`, the select stage's
  choice, one subtask at a time);
- started as the execute stage would start it (the same ``@task``, board, result
  cache, retries and timeouts), unless ``risky`` approval holds it (its tool does more
  than read) or it depends on a held one: those wait for approval as today.

It waits for its dependencies on the board inside its task, so it starts as soon as
they allow. When the reply ends, the plan stage reads and validates the whole reply as
before, and :meth:`StreamedPlan.finish` waits for the started subtasks and returns what
they did as ``streamed`` (by subtask id, with each one's
:func:`~hugginggpt.graph.state.subtask_keys` key). select and execute take from it what
matches the plan and choose and run only the rest. A rejected plan goes through the
repair loop as today; in the repaired plan a subtask with the key of one that is done
keeps its result and does not run again, whatever its id (with or without the result
cache). A run that aborts still reports what ran.

Resuming a plan stage that stopped mid-stream asks the planner again; the subtasks are
called in the order they arrive, so those of an identical reply get their checkpointed
results back (a result whose key is not the subtask's is not taken: it runs again in
the execute stage). The run's ``max_run_s`` counts from the start of the stream.
"""

from __future__ import annotations

import concurrent.futures
import contextvars
import time
from typing import Any

from langgraph.config import get_stream_writer

from hugginggpt.graph.context import Context
from hugginggpt.graph.state import (
    Failure,
    Selection,
    State,
    Streamed,
    Subtask,
    SubtaskResult,
    subtask_keys,
)
from hugginggpt.nodes.execution.board import DEADLINE_GRACE_S, Board
from hugginggpt.nodes.execution.jobs import make_jobs
from hugginggpt.nodes.execution.subtasks import result_calls, run_subtask, start_subtask
from hugginggpt.nodes.planning.incremental import SubtaskScanner
from hugginggpt.nodes.planning.validation import validate_plan
from hugginggpt.nodes.selection import Selector, risk_of
from hugginggpt.tools.fetch import DownloadBudget
from hugginggpt.tools.llm.expert import ExpertLLM
from hugginggpt.tools.llm.records import LLMCall, run_spend

__all__ = ["StreamedPlan", "ran_summary"]

_SELECTOR = -1
"""Where the streamed selector's LLM calls are counted in the run's LLM budget (no
subtask has a negative id)."""


class StreamedPlan:
    """One plan stage's streamed execution: a stream listener for
    :func:`hugginggpt.tools.llm.client.complete`, then :meth:`finish`.

    An endpoint that fails mid-stream is followed by the next one's reply, read from its
    start (a new ``attempt``): a subtask of it with the key of one already started takes
    that one's result instead of running twice.
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
        """Every subtask task started, whichever endpoint's stream it came from."""
        self.started: dict[str, Any] = {}
        self.boards: list[Board] = []
        self.calls: list[LLMCall] = []
        """The LLM calls the started subtasks made (``llm`` backend), after :meth:`finish`."""
        self._outside = contextvars.copy_context()
        """The plan stage's own context, where the streamed subtasks are selected and
        started: inside the planner's LLM call, a selector call would be reported to
        the planner call's callbacks (its tokens mixed into the plan's)."""
        self._attempt = 0
        self._announced = False
        self._reset(1)

    def _reset(self, attempt: int) -> None:
        """Read a new reply from its start: one board, one scanner per reply."""
        self._attempt = attempt
        self.board = Board([], self.budget, self.llm)
        self.boards.append(self.board)
        self.scanner = SubtaskScanner()
        self.items: list[Any] = []
        self.subtasks: list[Subtask] = []
        self.keys: dict[int, str] = {}
        self.selections: dict[int, Selection] = {}
        self.held: set[int] = set()
        self.running: set[int] = set()
        self.claimed: set[str] = set()

    def __call__(self, attempt: int, text: str) -> None:
        """The stream listener: the reply of endpoint ``attempt`` so far."""
        if attempt != self._attempt:
            self._reset(attempt)
        for item in self.scanner.feed(text):
            self._outside.run(self._arrive, item)

    def _arrive(self, item: Any) -> None:
        if len(self.items) >= self.context.max_subtasks:
            return  # the whole reply's validation says the plan is too long
        subtasks, problems = validate_plan([*self.items, item],
                                           max_subtasks=self.context.max_subtasks)
        if problems:  # not started; the whole reply's validation names the problem
            return
        subtask = subtasks[-1]
        self.items.append(item)
        self.subtasks.append(subtask)
        key = self.keys[subtask.id] = subtask_keys(subtasks)[subtask.id]
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

    def finish(self, plan: list[Subtask]) -> dict[str, Any]:
        """Wait for every started subtask; the ``streamed`` update for ``plan`` (the
        validated plan; empty when the reply was rejected: then what the last reply's
        valid subtasks did, for the repair and for the abort's report)."""
        try:
            done = [f.result() for f in self.futures]
            self.calls = result_calls(done)
            concurrent.futures.wait(  # the results reach the board in done-callbacks
                [self.board.futures[i] for i in self.running],
                timeout=max(self.deadline - time.monotonic(), 0) + DEADLINE_GRACE_S)
            if plan:
                return {"streamed": self._for(plan)}
            return {"streamed": self._for(self.subtasks, only_ran=True)}
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


def ran_summary(streamed: dict[int, Streamed]) -> str:
    """What ran while the plan streamed, for an abort's reason ("" when nothing did)."""
    ran = [s.result for s in streamed.values() if s.result is not None]
    if not ran:
        return ""
    return ("\nWhile the plan streamed, these subtasks ran: " + "; ".join(
        f"#{r.id} {r.task}: {r.status}" for r in ran) + ".")
