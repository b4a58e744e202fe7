"""Where finished subtasks post their results for their dependents, within a run."""

from __future__ import annotations

import asyncio
import concurrent.futures
import math
import uuid
from typing import Any

from hugginggpt.nodes.execution.jobs import Job, remaining_s
from hugginggpt.tools.fetch import DownloadBudget
from hugginggpt.tools.llm.expert import ExpertLLM

__all__ = ["Board", "DEADLINE_GRACE_S", "dependency_wait_s"]

DEADLINE_GRACE_S = 2.0
"""How much longer than the run's deadline a dependent waits for a dependency's result
(each subtask posts one by the deadline, unless a tool blocks its event loop)."""


class Board:
    """Where finished subtasks post their results for their dependents.

    One board per execution of the node; the thread-safe futures serve both the sync
    path (``wait``) and the async path (``await_all``).
    """

    _open: dict[str, Board] = {}

    def __init__(self, ids: list[int], downloads: DownloadBudget | None = None,
                 llm: ExpertLLM | None = None) -> None:
        self.key = uuid.uuid4().hex
        self.futures: dict[int, concurrent.futures.Future[dict[str, Any]]] = {
            i: concurrent.futures.Future() for i in ids
        }
        self.downloads = downloads
        """The run's download budget, shared by its subtasks."""
        self.llm = llm
        """The run's LLM, lent to the subtasks that the ``llm`` backend runs (with the
        run's LLM budget, shared by them)."""
        Board._open[self.key] = self

    def expect(self, subtask_id: int) -> None:
        """Make room for a subtask that was not known when the board opened (a streamed
        plan's subtasks arrive one by one)."""
        self.futures.setdefault(subtask_id, concurrent.futures.Future())

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


def dependency_wait_s(job: Job) -> float | None:
    """How long to wait for the dependencies: until the deadline and a grace period."""
    left = remaining_s(job)
    return None if math.isinf(left) else max(left, 0.0) + DEADLINE_GRACE_S
