"""Streamed-execution benchmark: how much sooner a run ends when its subtasks start while
the planner's reply is still streaming (issue 16, item 3), against plan-then-execute.

The planner is a real HTTP endpoint: the local OpenAI-compatible ``ScriptedLLMServer``
(``tests/llm_server.py``), reached through the project's LLM client (``ChatOpenAI``,
structured output as a tool call, streamed). It streams a 6-subtask plan at 30 tokens/s,
the plan's token count taken as its JSON's length / 4 (about 5 s for the whole reply,
as a hosted model of medium size writes it). The experts are a benchmark tool on a
backend of its own that sleeps a fixed time per subtask: the first subtask is slow
(4 s, a text-to-image model's time), the others 0.5 s. The DAG::

    0 (4 s) -> 1 -> 5      2 -> 3 -> 5      4

so plan-then-execute cannot end before the reply (about 5 s) plus the critical path
0 -> 1 -> 5 (5 s), while streamed execution starts subtask 0 once its JSON is complete,
about a sixth of the way through the reply.

- **plan-then-execute**: ``stream_execution=False``, what a user gets with
  ``--no-stream-execution`` (and what every run did before).
- **streamed**: ``stream_execution=True`` (the default).

Each is run 3 times, interleaved (plan-then-execute, streamed, ...), after one warm-up
run of each (the first run pays imports and the example bank's embeddings); the figure
is the median end-to-end wall time of ``invoke`` (planning, selection, execution and the
responder's answer, also from the server). The result cache is off, so every subtask
really sleeps.

Then the invalid cases, streamed: a reply whose last subtask has an unknown task type.
With a repair allowed, the second reply is the valid plan: the run must complete, with
the five subtasks that ran during the first reply not run again (the tool counts its
calls). With no repair allowed (``max_plan_retries=0``), the run must abort cleanly: every
subtask it started finished, and the results and the abort's reason report them.

Verdict: FAIL (exit status 1) if streamed is not at least 1.3x faster than
plan-then-execute, or either invalid case misbehaves.

Usage: ``python benchmarks/streaming.py [--runs N]``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

from langgraph.checkpoint.memory import InMemorySaver

from hugginggpt import build_graph
from hugginggpt.graph.checkpoint import serializer
from hugginggpt.graph.context import Context
from hugginggpt.tools.experts.registry import ToolContext, register_tool

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from tests.llm_server import ScriptedLLMServer  # noqa: E402  (the repo's test server)

TARGET = 1.3
TOKENS_PER_S = 30.0
TASK = "text-generation"
BACKEND = "bench-stream"
MODEL = "bench/stream-expert"
SLOW_S, FAST_S = 4.0, 0.5

PLAN: list[dict[str, Any]] = [
    {"id": 0, "task": TASK, "dep": [], "args": {
        "text": "Paint a watercolour of a lighthouse on a cliff at dawn, gulls overhead"}},
    {"id": 1, "task": TASK, "dep": [0], "args": {
        "text": "Describe the mood of this picture in one sentence: <GENERATED>-0"}},
    {"id": 2, "task": TASK, "dep": [], "args": {
        "text": "List three facts about lighthouses on the Atlantic coast"}},
    {"id": 3, "task": TASK, "dep": [2], "args": {
        "text": "Turn these facts into a short caption for children: <GENERATED>-2"}},
    {"id": 4, "task": TASK, "dep": [], "args": {
        "text": "Suggest a title for an exhibition of coastal watercolours"}},
    {"id": 5, "task": TASK, "dep": [1, 3], "args": {
        "text": "Write a museum label from <GENERATED>-1 and <GENERATED>-3"}},
]
BAD_LAST = {"id": 5, "task": "paint-a-label", "dep": [1, 3], "args": {
    "text": "Write a museum label from <GENERATED>-1 and <GENERATED>-3"}}


class SleepExpert:
    """The benchmark's expert: sleeps the subtask's set time, counting calls by text."""

    def __init__(self) -> None:
        self.calls: Counter[str] = Counter()
        self.finished: Counter[str] = Counter()
        self._lock = threading.Lock()

    async def generate(self, text: str, ctx: ToolContext) -> str:
        """Sleep the subtask's time (the first subtask's is long) and say what ran."""
        with self._lock:
            self.calls[text] += 1
        await asyncio.sleep(SLOW_S if text.startswith("Paint") else FAST_S)
        with self._lock:
            self.finished[text] += 1
        return f"output {ctx.subtask_id} of {len(text)} chars"


EXPERT = SleepExpert()
register_tool(EXPERT.generate, TASK, backend=BACKEND, models=[MODEL], name="stream_expert",
              deterministic=True)


def _reply(plan: list[dict[str, Any]]) -> dict[str, Any]:
    """The planner's scripted reply: the plan as a tool call, streamed as len/4 tokens."""
    args = {"subtasks": plan}
    return {"tool_args": args, "tokens": max(1, len(json.dumps(args)) // 4)}


def _context(server: ScriptedLLMServer, folder: Path, **overrides: Any) -> Context:
    return Context(**({
        "llm": "bench-planner", "llm_base_url": server.url, "llm_max_retries": 0,
        "llm_timeout_s": 60.0, "workspace": str(folder / "ws"), "backend": BACKEND,
        "catalog": str(folder / "catalog.json"), "cache": False, "retry_backoff_s": 0.01,
    } | overrides))


def _run(compiled: Any, server: ScriptedLLMServer, folder: Path, thread: str,
         replies: list[dict[str, Any]], **overrides: Any) -> tuple[float, dict[str, Any]]:
    server.script("planner", *replies)
    started = time.perf_counter()
    out = compiled.invoke({"request": "a watercolour of a lighthouse, with its label"},
                          {"configurable": {"thread_id": thread}},
                          context=_context(server, folder, **overrides))
    return time.perf_counter() - started, out


def _check_done(out: dict[str, Any], label: str) -> None:
    results = out["results"]
    if out["status"] != "completed" or len(results) != len(PLAN) or any(
            r.status != "done" or r.model != MODEL for r in results.values()):
        raise SystemExit(f"{label}: the run did not complete on the benchmark tool: "
                         f"{out['status']} {out.get('abort_reason')}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=3, help="runs of each mode (median)")
    args = parser.parse_args()
    compiled = build_graph(checkpointer=InMemorySaver(serde=serializer()))
    server = ScriptedLLMServer(tokens_per_s=TOKENS_PER_S).start()
    try:
        with tempfile.TemporaryDirectory(prefix="hugginggpt-stream-bench-") as tmp:
            folder = Path(tmp)
            (folder / "ws").mkdir()
            (folder / "catalog.json").write_text(json.dumps({"version": 1, "models": [
                {"id": MODEL, "task": TASK, "description": "sleeps a set time"}]}))
            return _bench(compiled, server, folder, args.runs)
    finally:
        server.stop()


def _bench(compiled: Any, server: ScriptedLLMServer, folder: Path, runs: int) -> int:
    tokens = _reply(PLAN)["tokens"]
    print(f"streamed execution: a {len(PLAN)}-subtask plan of {tokens} tokens at "
          f"{TOKENS_PER_S:g} tokens/s ({tokens / TOKENS_PER_S:.1f} s of streaming), first "
          f"subtask {SLOW_S:g} s, the others {FAST_S:g} s; critical path 0 -> 1 -> 5 = "
          f"{SLOW_S + 2 * FAST_S:g} s; end-to-end medians of {runs} interleaved runs")
    modes = {"plan-then-execute": False, "streamed": True}
    for label, on in modes.items():  # warm-up
        _check_done(_run(compiled, server, folder, f"warm-{label}", [_reply(PLAN)],
                         stream_execution=on)[1], label)
    times: dict[str, list[float]] = {label: [] for label in modes}
    for i in range(runs):
        for label, on in modes.items():
            took, out = _run(compiled, server, folder, f"{label}-{i}", [_reply(PLAN)],
                             stream_execution=on)
            _check_done(out, label)
            if any(r.streamed for r in out["results"].values()) != on:
                raise SystemExit(f"{label}: subtasks streamed={not on}, not {on}")
            times[label].append(took)
    before, after = (statistics.median(times[label]) for label in modes)
    ratio = before / after
    print(f"{'mode':<20} {'median s':>9}  runs s")
    for label in modes:
        print(f"{label:<20} {statistics.median(times[label]):>9.2f}  "
              + " ".join(f"{t:.2f}" for t in times[label]))
    print(f"{'speed-up':<20} {ratio:>8.2f}x  (target >= {TARGET:g}x)")

    bad = [*PLAN[:5], BAD_LAST]
    EXPERT.calls.clear()
    asked = len(server.calls("planner"))
    took, out = _run(compiled, server, folder, "repair", [_reply(bad), _reply(PLAN)])
    reran = [t for t, n in EXPERT.calls.items() if n > 1]
    repair_ok = (out["status"] == "completed" and not reran
                 and len(server.calls("planner")) == asked + 2
                 and sum(EXPERT.calls.values()) == len(PLAN))
    print(f"\ninvalid last subtask, repair allowed: {out['status']} in {took:.2f} s, "
          f"{sum(EXPERT.calls.values())} tool calls for {len(PLAN)} subtasks, "
          f"re-run: {reran or 'none'}")

    EXPERT.calls.clear()
    EXPERT.finished.clear()
    took, out = _run(compiled, server, folder, "abort", [_reply(bad)], max_plan_retries=0)
    ran = {i: r.status for i, r in out["results"].items()}
    abort_ok = (out["status"] == "aborted" and "unknown task type" in out["abort_reason"]
                and EXPERT.calls == EXPERT.finished and len(ran) == 5
                and set(ran.values()) == {"done"}
                and "While the plan streamed, these subtasks ran" in out["response"])
    print(f"invalid last subtask, no repair: {out['status']} in {took:.2f} s, "
          f"{sum(EXPERT.finished.values())}/{sum(EXPERT.calls.values())} started subtasks "
          f"finished, reported: {ran}")

    print()
    print(f"{'PASS' if ratio >= TARGET else 'FAIL'} streamed is {ratio:.2f}x faster than "
          f"plan-then-execute (target >= {TARGET:g}x)")
    print(f"{'PASS' if repair_ok else 'FAIL'} an invalid last subtask is repaired without "
          "re-running the subtasks that finished")
    print(f"{'PASS' if abort_ok else 'FAIL'} an invalid last subtask with no repair left "
          "aborts cleanly, reporting what ran")
    return 0 if ratio >= TARGET and repair_ok and abort_ok else 1


if __name__ == "__main__":
    sys.exit(main())
