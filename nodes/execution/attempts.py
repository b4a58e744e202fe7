"""The per-subtask state machine: skip when a dependency did not finish, else try each
candidate model in the selected order with a timeout, retrying transient errors with
exponential backoff, then fall back to the next model, then fail; all within the
run's deadline. A tool's failure is data (the attempt log), never an exception.

Just before a candidate's tool is called, the result cache is asked for the same call
(see :mod:`hugginggpt.nodes.execution.cache`): a hit is the subtask's result, marked
``cached``, and what succeeds is stored. One lookup per candidate, in order, so a
run's choice of model is what it would be without the cache."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from hugginggpt.graph.state import Attempt, Failure, Fix, ResultStatus
from hugginggpt.nodes.execution.arguments import resolve_inputs
from hugginggpt.nodes.execution.cache import (
    CacheSettings,
    MissingArtifact,
    ResultCache,
    adopt_outputs,
    cache_key,
)
from hugginggpt.nodes.execution.jobs import Job, finite, remaining_s, result, run_time_limit
from hugginggpt.tools.artifacts import ArtifactStore
from hugginggpt.tools.errors import (
    ArgumentError,
    LimitExceededError,
    ToolTimeoutError,
    TransientToolError,
)
from hugginggpt.tools.experts.confidence import (
    Confidence,
    from_labels,
    inherited,
    not_probabilities,
)
from hugginggpt.tools.experts.lite.languages import described, evidence, reads
from hugginggpt.tools.experts.outputs import normalize_outputs
from hugginggpt.tools.experts.registry import Tool, ToolContext, find_tools
from hugginggpt.tools.experts.tasks import TaskType, get_task_type
from hugginggpt.tools.kinds import generated_refs
from hugginggpt.tools.languages import name_of
from hugginggpt.tools.redact import redact
from hugginggpt.tools.text import MAX_MESSAGE, clip
from hugginggpt.tools.threads import in_thread

__all__ = ["run_job", "describe_error", "not_started", "TRANSIENT_ERRORS", "Emit"]

TRANSIENT_ERRORS: tuple[type[BaseException], ...] = (
    TransientToolError, TimeoutError, ConnectionError,
)

Emit = Callable[[dict[str, Any]], None]

CONFIDENCE_KEY = "__confidence__"
"""Where a cache entry keeps the result's confidence beside its outputs (no task type
declares an output by this name)."""


def _skip_reason(job: Job, deps: dict[int, dict[str, Any]]) -> Failure | None:
    """Why the subtask cannot run on its dependencies' results: one did not finish, or
    finished too unsure to be used (under its confidence floor)."""
    for dep_id in job.dep:
        dep = deps[dep_id]
        if dep["status"] != "done":
            why = (dep.get("failure") or {}).get("reason") or dep.get("error") or dep["status"]
            return Failure(reason=why, dependency=dep_id, dependency_ended=dep["status"])
        confidence = dep.get("confidence") or {}
        if confidence.get("unusable"):
            return Failure(reason=str(confidence.get("uncertain")), dependency=dep_id,
                           dependency_ended="unusable")
    return None


def _skipped_line(failure: Failure, deps: dict[int, dict[str, Any]]) -> str:
    dep = failure.dependency
    task = deps[dep]["task"] if dep is not None else "?"
    return f"skipped: dependency {dep} ({task}) {failure.dependency_ended}: {failure.reason}"


def failure_of(exc: BaseException) -> Failure:
    """An exception as a failure's fields: its message (without secrets), its class and
    its fix."""
    return Failure(reason=describe_error(exc).partition(": ")[2], error_type=type(exc).__name__,
                   fix=getattr(exc, "fix", None))


def _confidence(job: Job, task_type: TaskType, tool: Tool, model: str,
                reported: Confidence | None, outputs: dict[str, Any],
                deps: dict[int, dict[str, Any]]) -> Confidence | None:
    """The result's confidence: what the tool reported, else what its label
    probabilities say (:func:`from_labels`), marked uncertain when an input came from an
    uncertain result."""
    own = reported
    if own is None and not not_probabilities(tool.cards, model):
        own = from_labels(job.task, outputs.get(task_type.outputs[0].name))
    doubtful = {dep_id: f"{deps[dep_id]['task']} result" for dep_id in job.dep
                if ((deps[dep_id].get("confidence") or {}).get("uncertain"))}
    return inherited(own, doubtful)


def _with_confidence(confidence: Confidence | None) -> dict[str, Any]:
    return {} if confidence is None else {"confidence": confidence}


async def _call_tool(tool_fn: Callable[..., Any], is_async: bool, kwargs: dict[str, Any],
                     timeout_s: float) -> Any:
    """Call a tool within ``timeout_s``; a ``TimeoutError`` the tool raises itself stays
    what it is (it is not this timeout)."""
    try:
        async with asyncio.timeout(finite(timeout_s)) as limit:
            if is_async:
                return await tool_fn(**kwargs)
            return await in_thread(tool_fn, **kwargs)
    except TimeoutError as exc:
        if limit.expired():
            raise ToolTimeoutError(
                f"no result within {timeout_s:g}s; the call was abandoned") from exc
        raise


NO_MESSAGE = ("raised with no message: the tool gave no reason, which is a bug in the "
              "tool or in the model's code (see its logs)")
"""What an exception without a message is reported as: what happened and where to look,
never a bare placeholder."""


def describe_error(exc: BaseException) -> str:
    """``Type: message``, without secrets (an endpoint's error may echo a token); an
    exception with no message (or a broken ``__str__``) says so and where to look."""
    try:
        message = redact(str(exc).strip())
    except Exception:  # a broken __str__ must not hide the failure
        message = ""
    return f"{type(exc).__name__}: {message or NO_MESSAGE}"


def _emit_end(job: Job, emit: Emit, status: ResultStatus, error: str) -> None:
    emit({"type": "subtask", "id": job.id, "task": job.task, "event": status, "error": error})


def _failed_inputs(job: Job, exc: Exception, emit: Emit) -> dict[str, Any]:
    error = describe_error(exc)
    _emit_end(job, emit, "failed", error)
    return result(job, "failed", error=error, failure=failure_of(exc))


def not_started(job: Job, emit: Emit, what: str) -> dict[str, Any]:
    limit = run_time_limit(job, what)
    error = describe_error(limit)
    _emit_end(job, emit, "skipped", error)
    return result(job, "skipped", error=error, failure=failure_of(limit))


async def _cache_key(job: Job, tool: Tool, model: str, backend: str,
                     args: dict[str, Any]) -> str | None:
    """The call's key in the result cache, or None when the run uses no cache or the tool
    is not deterministic (asked here, inside the run's settings). A file that cannot be
    read for its digest leaves the call uncached: the tool will say what is wrong."""
    if job.cache is None:
        return None
    try:
        if not tool.is_deterministic(job.task):
            return None
    except Exception:  # a plugin's declaration that fails: not cached, the call still runs
        return None
    try:
        return await in_thread(cache_key, job.task, model, backend, tool.name, args,
                               job.settings.get(backend))
    except OSError:
        return None


async def _served_from_cache(job: Job, key: str, model: str, backend: str,
                             store: ArtifactStore, log: list[Attempt], emit: Emit,
                             started: float) -> dict[str, Any] | None:
    """The subtask's result from the cache, its files copied into this thread's folder;
    None on a miss, or when a file of the entry is gone (the entry is then forgotten)."""
    assert job.cache is not None
    cache = ResultCache(CacheSettings(**job.cache))
    t0, at = time.monotonic(), time.time()
    entry = await in_thread(cache.get, key)
    if entry is None:
        return None
    stored = dict(entry["outputs"])
    confidence = stored.pop(CONFIDENCE_KEY, None)
    try:
        outputs = await in_thread(adopt_outputs, stored, store)
    except (MissingArtifact, OSError):
        await in_thread(cache.forget, key)
        return None
    log.append(Attempt(model=model, backend=backend, ok=True, cached=True,
                       latency_s=round(time.monotonic() - t0, 4), at=at))
    latency = round(time.monotonic() - started, 4)
    emit({"type": "subtask", "id": job.id, "task": job.task, "event": "done",
          "model": model, "latency_s": latency, "cached": True})
    return result(job, "done", model=model, backend=backend, outputs=outputs,
                  attempts=len(log), attempt_log=log, latency_s=latency, cached=True,
                  confidence=confidence)


@dataclass(frozen=True)
class Unread:
    """The candidates that cannot read a subtask's text: what the text is ("Spanish"),
    and what each of them reads ("a reads English only")."""

    text_is: str = ""
    reads: dict[str, str] = field(default_factory=dict)

    def why(self, model: str) -> str:
        return f"{self.reads[model]}; the text is {self.text_is}"


def unreadable_by(job: Job, task_type: TaskType, args: dict[str, Any]) -> Unread:
    """The candidates that cannot read the subtask's text, when the text was generated
    by an earlier step: a literal text was already matched to the models at selection."""
    generated = [name for name, value in job.args.items() if generated_refs(value)
                 and (arg := task_type.arg(name)) is not None and arg.kind == "text"]
    text = " ".join(str(args[name]) for name in generated if isinstance(args.get(name), str))
    if not text.strip() or all(not langs or "multilingual" in langs
                               for langs in job.languages.values()):
        return Unread()
    found = evidence(text)
    if not found:
        return Unread()
    return Unread(described(found), {
        model: f"{model} reads {', '.join(name_of(c) for c in langs)} only"
        for model, langs in job.languages.items() if not reads(langs, found)})


def _none_reads(log: list[Attempt], unread: Unread) -> str | None:
    """One reason for a subtask whose every candidate could not read its text ("no model
    can read the text: the text is Spanish; a reads English only, b reads French only"),
    as selection words it for a literal text; None when some candidate failed otherwise."""
    if not log or any(a.error_type != "CannotRead" for a in log):
        return None
    models = ", ".join(dict.fromkeys(unread.reads[a.model] for a in log))
    return f"no model can read the text: the text is {unread.text_is}; {models}"


async def run_job(job: Job, deps: dict[int, dict[str, Any]], emit: Emit) -> dict[str, Any]:
    """The per-subtask state machine: skip, or try models with retries, then fail; all
    within the run's deadline."""
    if (skip := _skip_reason(job, deps)) is not None:
        line = _skipped_line(skip, deps)
        _emit_end(job, emit, "skipped", line)
        return result(job, "skipped", error=line, failure=skip)
    if not job.candidates:
        _emit_end(job, emit, "failed", job.no_model_reason)
        return result(job, "failed", error=job.no_model_reason, failure=Failure(
            reason=job.no_model_reason,
            fix=Fix.model_validate(job.no_model_fix) if job.no_model_fix else None))
    if remaining_s(job) <= 0:
        return not_started(job, emit, "before this subtask could start")

    task_type = get_task_type(job.task)
    assert task_type is not None
    # File-system work runs in threads: an event loop (the LangGraph server's) never blocks.
    store = await in_thread(ArtifactStore, job.workspace, job.thread_id, job.artifact_url)
    started = time.monotonic()
    try:
        args = await resolve_inputs(job, deps, store)
    except (ArgumentError, LimitExceededError, TransientToolError, OSError) as exc:
        return _failed_inputs(job, exc, emit)

    log: list[Attempt] = []
    stopped: LimitExceededError | None = None
    cannot_read = await in_thread(unreadable_by, job, task_type, args)
    for candidate in job.candidates[: job.max_models]:
        model, backend = candidate["model"], candidate["backend"]
        if model in cannot_read.reads:
            log.append(Attempt(model=model, backend=backend, ok=False,
                               error=cannot_read.why(model), error_type="CannotRead"))
            continue
        tools = find_tools(job.task, model, [backend])
        if not tools:
            log.append(Attempt(model=model, backend=backend, ok=False,
                               error="no tool registered", error_type="NoTool"))
            continue
        tool = tools[0]
        key = await _cache_key(job, tool, model, backend, args)
        if key is not None:
            hit = await _served_from_cache(job, key, model, backend, store, log, emit, started)
            if hit is not None:
                reported = hit.get("confidence")
                confidence = _confidence(
                    job, task_type, tool, model,
                    Confidence.model_validate(reported) if reported else None,
                    hit["outputs"], deps)
                return hit | {"confidence": confidence and confidence.model_dump(mode="json")}
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
            context.extra.pop("replica", None)
            context.confidence = None
            emit({"type": "subtask", "id": job.id, "task": job.task, "event": "started",
                  "model": model, "backend": backend, "attempt": len(log) + 1,
                  "streamed": job.key is not None, "at": time.time()})
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
                                   error=clip(describe_error(exc).partition(": ")[2], MAX_MESSAGE),
                                   error_type=type(exc).__name__, fix=getattr(exc, "fix", None),
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
            replica = context.extra.get("replica")
            log.append(Attempt(model=model, backend=backend, ok=True, replica=replica,
                               latency_s=round(time.monotonic() - t0, 4), at=at))
            latency = round(time.monotonic() - started, 4)
            emit({"type": "subtask", "id": job.id, "task": job.task, "event": "done",
                  "model": model, "latency_s": latency})
            if key is not None and job.cache is not None:
                kept = outputs if context.confidence is None else {
                    **outputs, CONFIDENCE_KEY: context.confidence.model_dump(mode="json")}
                await in_thread(ResultCache(CacheSettings(**job.cache)).put, key, job.task,
                                model, backend, kept, latency)
            confidence = _confidence(job, task_type, tool, model, context.confidence,
                                     outputs, deps)
            return result(job, "done", model=model, backend=backend, outputs=outputs,
                           attempts=len(log), attempt_log=log, latency_s=latency,
                           endpoint=context.endpoint, replica=replica,
                           **_with_confidence(confidence))
        if stopped is not None:
            break

    last = log[-1] if log else None
    failed = [a for a in log if not a.ok]
    if stopped is not None:
        failure = failure_of(stopped)
    elif (unread := _none_reads(log, cannot_read)) is not None:
        failure = Failure(reason=unread, error_type="CannotRead")
    elif last is not None:
        failure = Failure(reason=last.error or NO_MESSAGE, error_type=last.error_type,
                          fix=last.fix)
    else:
        failure = Failure(reason="no candidate model")
    failure.tried = list(dict.fromkeys(a.model for a in failed))
    failure.tried_types = list(dict.fromkeys(a.error_type for a in failed if a.error_type))
    tried = ", ".join(dict.fromkeys(f"{a.model} ({a.error_type})" for a in failed))
    typed = failure.error_type not in (None, "CannotRead")
    error = (f"{failure.error_type}: " if typed else "") + failure.reason + (
        f" [tried: {tried}]" if tried else "")
    _emit_end(job, emit, "failed", error)
    return result(job, "failed", model=last.model if last else None,
                   backend=last.backend if last else None, attempts=len(log),
                   attempt_log=log, error=error, failure=failure,
                   latency_s=round(time.monotonic() - started, 4))


