"""A thread's trace: every run on it, with its LLM calls, tool calls and how it stopped.

Nothing is logged separately: the checkpoints are the trace. Each run's last checkpoint
holds its plan, selections, results (with every tool attempt), status and the records of
its LLM calls (``llm_calls``, each with its ``turn``; a thread written before issue 16
holds every run's there, filtered by turn all the same); the calls' prompts and replies
are in the graph's store, by thread and call id (:mod:`hugginggpt.tools.llm.transcripts`),
or inline in records written without one. :func:`thread_runs` reads them back and
:func:`render` shows them readably (``hugginggpt trace``).
"""

from __future__ import annotations

import json
import time
from typing import Any

from hugginggpt.graph.state import FINISHED, SubtaskResult
from hugginggpt.tools.artifacts import is_artifact_ref
from hugginggpt.tools.llm.records import LLMCall, usage_totals
from hugginggpt.tools.llm.transcripts import ahydrate

__all__ = ["thread_runs", "render", "run_trace"]


def _stop(values: dict[str, Any], snapshot: Any) -> str:
    """Why the run stopped, in words."""
    if snapshot.next:
        if snapshot.interrupts:
            return "waiting for a human approval (hugginggpt resume --approve | --reject)"
        return (f"stopped before {', '.join(snapshot.next)} (crashed or interrupted): "
                "continue with hugginggpt resume")
    status = values.get("status", "running")
    if status == "aborted":
        return f"aborted: {values.get('abort_reason')}"
    results = list((values.get("results") or {}).values())
    done = sum(r.status == "done" for r in results)
    return f"{status}: {done} of {len(values.get('plan') or [])} subtasks done"


def run_trace(values: dict[str, Any], snapshot: Any, turn: int) -> dict[str, Any]:
    """One run as plain data: request, plan with selections, events, stop reason."""
    calls: list[LLMCall] = [c for c in values.get("llm_calls") or [] if c.turn == turn]
    results: dict[int, SubtaskResult] = values.get("results") or {}
    selections = values.get("selections") or {}
    events: list[dict[str, Any]] = [
        {"at": c.at, "type": "llm"} | c.model_dump(mode="json") for c in calls
    ]
    for subtask in values.get("plan") or []:
        result = results.get(subtask.id)
        if result is None:
            continue
        if not result.attempt_log:  # skipped, or failed before any model ran
            events.append({"at": 0.0, "type": "tool", "id": subtask.id, "task": subtask.task,
                           "args": subtask.args, "ok": False, "status": result.status,
                           "error": result.error})
        for attempt in result.attempt_log:
            events.append({
                "at": attempt.at, "type": "tool", "id": subtask.id, "task": subtask.task,
                "args": subtask.args, "model": attempt.model, "backend": attempt.backend,
                "ok": attempt.ok, "error": attempt.error, "latency_s": attempt.latency_s,
                "cached": attempt.cached,
                "outputs": result.outputs if attempt.ok else {},
                "uncertain": (result.confidence.uncertain
                              if attempt.ok and result.confidence else None),
            })
    events.sort(key=lambda e: e["at"] or float("inf"))
    return {
        "turn": turn,
        "request": values.get("request"),
        "files": values.get("files") or [],
        "planner": values.get("planner", ""),
        "plan": [s.model_dump(mode="json") for s in values.get("plan") or []],
        "plan_errors": values.get("plan_errors") or [],
        "selections": {str(k): v.model_dump(mode="json") for k, v in selections.items()},
        "events": events,
        "status": values.get("status"),
        "stopped": _stop(values, snapshot),
        "response": values.get("response", ""),
        "usage": usage_totals(calls),
    }


async def thread_runs(compiled: Any, config: Any) -> list[dict[str, Any]]:
    """Every run on the thread, oldest first: each finished run's last checkpoint, and
    the latest checkpoint when the newest run has not finished."""
    latest = await compiled.aget_state(config)
    if not latest.values:
        return []
    store, thread = getattr(compiled, "store", None), str(config["configurable"]["thread_id"])

    async def with_texts(values: dict[str, Any], turn: int) -> dict[str, Any]:
        calls = [c for c in values.get("llm_calls") or [] if c.turn == turn]
        return values | {"llm_calls": await ahydrate(store, thread, calls)}

    runs = []
    async for snapshot in compiled.aget_state_history(config):
        if not snapshot.next and snapshot.values.get("status") in FINISHED:
            turn = len(snapshot.values.get("history") or []) // 2 - 1
            values = await with_texts(dict(snapshot.values), turn)
            runs.append(run_trace(values, snapshot, turn))
    runs.reverse()
    if latest.next:
        turn = len(latest.values.get("history") or []) // 2
        runs.append(run_trace(await with_texts(dict(latest.values), turn), latest, turn))
    return runs


def _clock(at: float) -> str:
    if not at:
        return " " * 12
    return time.strftime("%H:%M:%S", time.localtime(at)) + f".{int(at % 1 * 1000):03d}"


def _short(value: Any, limit: int) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _output(value: Any) -> str:
    if is_artifact_ref(value):
        return f"{value.get('kind')} {value.get('artifact_id')} ({value.get('path')})"
    return _short(value, 80)


def _llm_line(e: dict[str, Any], full: bool) -> list[str]:
    outcome = "ok" if e["ok"] else f"FAILED {e['error']}"
    ttft = f", first token {e['ttft_s']:.2f}s" if e.get("ttft_s") is not None else ""
    lines = [
        f"  {_clock(e['at'])} LLM  {e['role']:<9} {e['llm']} (tier {e['tier']}, needed "
        f"{e['need']}{', fallback ' + str(e['attempt'] - 1) if e['attempt'] > 1 else ''}"
        f"{', replayed' if e.get('replayed') else ''}) {outcome} in {e['latency_s']:.2f}s"
        f"{ttft}, tokens {e['prompt_tokens']} in / {e['completion_tokens']} out"
        + (f", cost {e['cost']:.6f}" if e.get("cost") else ""),
    ]
    reply = e.get("reply") or {}
    said = (json.dumps(reply["tool_calls"][0]["args"], ensure_ascii=False)
            if reply.get("tool_calls") else reply.get("content", ""))
    if full:
        for message in e.get("request") or []:
            lines.append(f"      > {message['role']}: " + message["content"].replace(
                "\n", "\n        "))
        if reply:
            lines.append("      < " + str(said).replace("\n", "\n        "))
    elif reply:
        lines.append(f"      reply: {_short(said, 160)}")
    return lines


def _tool_line(e: dict[str, Any]) -> list[str]:
    where = f" on {e['model']} ({e['backend']})" if e.get("model") else ""
    if e["ok"] and e.get("cached"):
        outcome = "ok from the cache (no call)"
    elif e["ok"]:
        outcome = "ok" + (f" in {e['latency_s']:.2f}s" if e.get("latency_s") else "")
    else:
        outcome = f"{e.get('status', 'failed').upper()} {e.get('error')}"
    lines = [f"  {_clock(e['at'])} tool #{e['id']} {e['task']}{where} "
             f"args {_short(e['args'], 100)} {outcome}"]
    for name, value in (e.get("outputs") or {}).items():
        lines.append(f"      output {name}: {_output(value)}")
    if e.get("uncertain"):
        lines.append(f"      uncertain: {e['uncertain']}")
    return lines


def render(thread_id: str, runs: list[dict[str, Any]], *, full: bool = False) -> str:
    """The trace as text; ``full`` shows whole prompts and replies."""
    if not runs:
        return f"Thread {thread_id} has no runs."
    out = [f"Thread {thread_id}: {len(runs)} run(s)"]
    for number, run in enumerate(runs, 1):
        files = f" (files: {', '.join(run['files'])})" if run["files"] else ""
        out += ["", f"Run {number}: {run['request']!r}{files}"]
        if run["planner"]:
            out.append(f"  planner: {run['planner']}")
        for step in run["plan"]:
            chosen = run["selections"].get(str(step["id"]), {})
            model = (f" -> {chosen.get('model')} ({chosen.get('backend')}): "
                     f"{_short(chosen.get('reason', ''), 100)}") if chosen else ""
            out.append(f"  plan #{step['id']} {step['task']} {_short(step['args'], 80)} "
                       f"dep={step['dep']}{model}")
        out += [f"  plan problem: {p}" for p in run["plan_errors"]]
        for event in run["events"]:
            out += _llm_line(event, full) if event["type"] == "llm" else _tool_line(event)
        usage = run["usage"]
        out.append(f"  LLM totals: {usage['calls']} calls ({usage['failed']} failed), tokens "
                   f"{usage['prompt_tokens']} in / {usage['completion_tokens']} out, "
                   f"cost {usage['cost']:.6f}, {usage['latency_s']:.2f}s waiting")
        out.append(f"  stopped: {run['stopped']}")
        if run["response"]:
            out.append(f"  answer: {_short(run['response'], 300 if not full else 10_000)}")
    return "\n".join(out)
