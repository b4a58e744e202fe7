"""What one subtask needs to run, as plain data: it crosses the ``@task`` boundary and
is checkpointed with the task. Built from the state and the run's settings."""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from langgraph.config import get_config

from hugginggpt.graph.context import Context
from hugginggpt.graph.state import ResultStatus, State, SubtaskResult
from hugginggpt.nodes.execution.cache import CACHE_FILE
from hugginggpt.tools.errors import LimitExceededError
from hugginggpt.tools.experts.availability import model_cards
from hugginggpt.tools.experts.catalog import DEFAULT_CATALOG, load_catalog
from hugginggpt.tools.experts.local import LOCAL_BACKEND

__all__ = ["Job", "make_jobs", "remaining_s", "finite", "run_time_limit", "result"]


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
    no_model_fix: dict[str, Any] | None = None
    """What to do when no model was selected (a :class:`~hugginggpt.tools.errors.Fix`)."""
    languages: dict[str, list[str]] = field(default_factory=dict)
    """The languages each candidate's card lists (none: it reads any): a text known only
    at execution (``<GENERATED>-k``) goes to a candidate that can read it."""
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
    artifact_url: str | None = None
    """Where the server serves this run's artifacts (outputs then carry ``url``)."""
    cache: dict[str, Any] | None = None
    """:class:`~hugginggpt.nodes.execution.cache.CacheSettings` fields (None: the run
    does not use the result cache)."""
    key: str | None = None
    """A streamed subtask's :func:`~hugginggpt.graph.state.subtask_keys` key, carried
    into its result (None: started by the execute stage)."""


DEADLINE_GRACE_S = 2.0
"""How much longer than the run's deadline a dependent waits for a dependency's result
(each subtask posts one by the deadline, unless a tool blocks its event loop)."""


def remaining_s(job: Job) -> float:
    """Seconds left before the run's deadline (infinite without one)."""
    return math.inf if job.deadline is None else job.deadline - time.monotonic()


def finite(seconds: float) -> float | None:
    """A delay for ``asyncio.timeout``: None for no limit, never negative."""
    return None if math.isinf(seconds) else max(seconds, 0.0)


def run_time_limit(job: Job, what: str) -> LimitExceededError:
    """The error that says the run's time limit ended ``what``."""
    return LimitExceededError(
        f"the run's time limit was reached {what}", setting="max_run_s",
        value=job.max_run_s, unit=" s")


def result(job: Job, status: ResultStatus, **fields: Any) -> dict[str, Any]:
    return SubtaskResult(id=job.id, task=job.task, status=status, **fields).model_dump(mode="json")


def make_jobs(state: State, context: Context, board: str, deadline: float) -> list[Job]:
    catalog = load_catalog(context.catalog or DEFAULT_CATALOG)
    settings = context.backend_settings()
    settings[LOCAL_BACKEND] = {**settings.get(LOCAL_BACKEND, {}), "consented": sorted(
        model for model, yes in state.downloads.items() if yes)}  # downloads agreed to
    thread_id = str(get_config().get("configurable", {}).get("thread_id", "default"))
    workspace = str(Path(context.workspace).resolve())
    cache = ({"path": str(Path(workspace) / CACHE_FILE), "ttl_s": context.cache_ttl_s,
              "max_entries": context.cache_max_entries} if context.cache else None)
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
            no_model_fix=selection.fix.model_dump() if selection and selection.fix else None,
            files=list(state.files), workspace=workspace, thread_id=thread_id,
            board=board, timeout_s=context.subtask_timeout_s,
            retries=context.subtask_retries, backoff_s=context.retry_backoff_s,
            latency_scale=context.dry_run_latency_scale,
            max_models=context.max_models_per_subtask, latencies=latencies,
            languages={c["model"]: list(cards[c["model"]].languages)
                       for c in candidates if c["model"] in cards},
            fetch={"max_bytes": int(context.max_download_mb * 1024 * 1024),
                   "timeout_s": context.download_timeout_s,
                   "allow_private": context.allow_private_urls},
            settings=settings, deadline=deadline, max_run_s=context.max_run_s,
            artifact_url=context.artifact_url,
            max_file_bytes=int(context.max_file_mb * 1024 * 1024),
            cache=cache,
        ))
    return jobs


