"""Scheduling benchmark: how close does the execute stage get to the critical path?

A HuggingGPT plan is a DAG of subtasks. However many workers there are, a run cannot
finish before its *critical path* (the longest chain of durations through the DAG), so
``wall / critical path`` measures how much time an executor loses to scheduling. The
execute node (``nodes/execute.py``) claims a dataflow schedule: each subtask starts as
soon as its own dependencies finish, so the ratio should stay close to 1 (the target
here is <= 1.10) whatever the DAG's shape.

Three executors run the same DAGs with simulated experts that sleep a fixed duration:

- ``dataflow``: the project's real graph (``hugginggpt.build_graph``) on a fixed plan, on
  its sync path (``stream``/``invoke``) and its async path (``astream``, what the CLI
  and the LangGraph server use), with
  a benchmark tool registered for ``text-generation`` on its own backend (``bench``),
  so every subtask sleeps exactly the duration this script gives it. The wall time is
  the execute stage's: from its ``stage start`` event to its state update, i.e. without
  the plan and select stages. The graph stops after execute, so no LLM is ever called.
- ``superstep``: a small LangGraph graph that runs the DAG in waves: a router picks
  every subtask whose dependencies are done and fans them out with ``Send``; the next
  wave starts only when the whole wave has finished (a barrier), so a short subtask
  waits for the slowest subtask of the wave before its successors may start.
- ``sequential``: one subtask after another in plan order; the wall time is the sum.

The shapes: a fan-out (all independent), a chain (nothing to overlap), a diamond, and
an unbalanced DAG whose slow branch (a 4-unit step) sits beside a longer chain of
1-unit steps: the superstep executor makes every fast step wait for a wave that holds
the slow one, while dataflow lets the fast chain run alongside it.

Each cell is the median of 3 runs with a 0.25 s unit, after a warm-up run of each
executor (the first graph run pays import and compile costs). The dataflow graph adds a
roughly fixed 10-20 ms per run (threads, checkpoint writes), so the smaller the unit,
the more that weighs in the ratio. Exits with status 1 when a dataflow ratio misses
the target.

Usage: ``python benchmarks/scheduling.py [--quick]`` (``--quick``: 1 run per cell).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import operator
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Annotated, Any, TypedDict

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.types import Send

from hugginggpt import build_graph
from hugginggpt.graph.context import Context
from hugginggpt.tools.experts.registry import ToolContext, register_tool

TARGET_RATIO = 1.10
TASK = "text-generation"
BENCH_BACKEND = "bench"
BENCH_MODEL = "bench/sleep-expert"
CATALOG_FILE = "catalog.json"

DataflowGraph = CompiledStateGraph[Any, Context, Any, Any]


@dataclass(frozen=True)
class Shape:
    """A DAG: subtask ``i`` lasts ``units[i]`` units and needs ``deps[i]``, in
    topological order (every dependency has a lower id)."""

    name: str
    units: tuple[float, ...]
    deps: tuple[tuple[int, ...], ...]

    def durations(self, unit_s: float) -> dict[int, float]:
        return {i: u * unit_s for i, u in enumerate(self.units)}

    def critical_path(self, unit_s: float) -> float:
        finish: dict[int, float] = {}
        for i, seconds in self.durations(unit_s).items():
            finish[i] = seconds + max((finish[d] for d in self.deps[i]), default=0.0)
        return max(finish.values())

    def plan(self) -> list[dict[str, Any]]:
        """The DAG as a HuggingGPT plan; a subtask reads its first dependency's text."""
        return [
            {"id": i, "task": TASK, "dep": list(deps),
             "args": {"text": f"<GENERATED>-{deps[0]}" if deps else "benchmark input"}}
            for i, deps in enumerate(self.deps)
        ]


SHAPES = (
    Shape("fan-out 8", (1,) * 8, ((),) * 8),
    Shape("chain 5", (1,) * 5, ((), (0,), (1,), (2,), (3,))),
    Shape("diamond", (1, 1, 1, 1), ((), (0,), (0,), (1, 2))),
    # 0 -> 1 (slow, 4u) -> 3 -> 7 and 0 -> 2 -> 4 -> 5 -> 6 -> 7: critical path 7u,
    # superstep waves {0} {1,2} {3,4} {5} {6} {7} cost 9u.
    Shape("unbalanced", (1, 4, 1, 1, 1, 1, 1, 1),
          ((), (0,), (0,), (1,), (2,), (4,), (5,), (3, 6))),
)


@dataclass
class SleepExpert:
    """The benchmark's expert: sleeps the duration set for the subtask it is given."""

    durations: dict[int, float] = field(default_factory=dict)
    ran: set[int] = field(default_factory=set)

    async def generate(self, text: str, ctx: ToolContext) -> str:
        """Sleep the subtask's planned duration and say what ran."""
        await asyncio.sleep(self.durations[ctx.subtask_id])
        self.ran.add(ctx.subtask_id)
        return f"subtask {ctx.subtask_id} by {ctx.model} after {len(text)} chars of input"


EXPERT = SleepExpert()
register_tool(EXPERT.generate, TASK, backend=BENCH_BACKEND, models=[BENCH_MODEL],
              name="sleep_expert")


# --- dataflow: the project's graph -------------------------------------------------


def write_catalog(folder: Path) -> None:
    """A catalog with the benchmark model only, so selection has exactly one candidate."""
    card = {"id": BENCH_MODEL, "task": TASK,
            "description": "sleeps the duration the scheduling benchmark sets"}
    (folder / CATALOG_FILE).write_text(json.dumps({"version": 1, "models": [card]}),
                                       encoding="utf-8")


def check_dataflow(shape: Shape, results: dict[int, Any]) -> str:
    """Fail loudly unless every subtask finished on the benchmark tool."""
    wrong = [
        f"{i}: {r.status} on {r.model}/{r.backend} {r.error or ''}"
        for i, r in results.items()
        if (r.status, r.model, r.backend) != ("done", BENCH_MODEL, BENCH_BACKEND)
    ]
    if wrong or set(results) != set(range(len(shape.units))) or EXPERT.ran != set(results):
        raise RuntimeError(f"dataflow {shape.name}: not every subtask ran on the "
                           f"benchmark tool: {wrong or sorted(results)}")
    return (f"{shape.name}: {len(results)}/{len(shape.units)} subtasks done by "
            f"sleep_expert ({BENCH_MODEL} on backend {BENCH_BACKEND!r})")


def run_dataflow(graph: DataflowGraph, shape: Shape, unit_s: float, folder: Path,
                 use_async: bool = False) -> tuple[float, str]:
    """Run the plan through the real graph, with ``stream`` (the sync path, as
    ``invoke``) or ``astream`` (the async path, as the CLI and the LangGraph server);
    the wall time of the execute stage."""
    EXPERT.durations, EXPERT.ran = shape.durations(unit_s), set()
    context = Context(backend=BENCH_BACKEND, plan=shape.plan(),
                      catalog=str(folder / CATALOG_FILE), workspace=str(folder),
                      max_subtasks=len(shape.units),
                      cache=False)  # the executor is measured: every expert runs
    config: RunnableConfig = {"configurable": {"thread_id": uuid.uuid4().hex}}
    started = finished = 0.0
    results: dict[int, Any] = {}

    def see(part: Any) -> None:
        nonlocal started, finished, results
        now = time.perf_counter()
        if part["type"] == "custom" and part["data"].get("stage") == "execute":
            started = now
        elif part["type"] == "updates" and "execute" in part["data"]:
            finished, results = now, part["data"]["execute"]["results"]

    kwargs: dict[str, Any] = {"context": context, "stream_mode": ["custom", "updates"],
                              "version": "v2"}
    if use_async:
        async def consume() -> None:
            async for part in graph.astream({"request": "benchmark"}, config, **kwargs):
                see(part)

        asyncio.run(consume())
    else:
        for part in graph.stream({"request": "benchmark"}, config, **kwargs):
            see(part)
    return finished - started, check_dataflow(shape, results)


# --- superstep: waves of Send with a barrier between them --------------------------


class WaveState(TypedDict):
    durations: dict[int, float]
    deps: dict[int, tuple[int, ...]]
    done: Annotated[list[int], operator.add]
    wave: list[int]


class WorkItem(TypedDict):
    id: int
    seconds: float


def next_wave(state: WaveState) -> dict[str, list[int]]:
    """Every subtask not yet done whose dependencies are all done."""
    done = set(state["done"])
    ready = [i for i, deps in state["deps"].items()
             if i not in done and done.issuperset(deps)]
    return {"wave": ready}


def fan_out(state: WaveState) -> list[Send] | str:
    return [Send("worker", WorkItem(id=i, seconds=state["durations"][i]))
            for i in state["wave"]] or END


async def worker(state: WorkItem) -> dict[str, list[int]]:
    await asyncio.sleep(state["seconds"])
    return {"done": [state["id"]]}


def build_superstep() -> CompiledStateGraph:
    builder = StateGraph(WaveState)
    builder.add_node("router", next_wave)
    builder.add_node("worker", worker)
    builder.add_edge(START, "router")
    builder.add_conditional_edges("router", fan_out, ["worker", END])
    builder.add_edge("worker", "router")
    return builder.compile()


def run_superstep(graph: CompiledStateGraph, shape: Shape, unit_s: float) -> float:
    async def timed() -> float:
        started = time.perf_counter()
        out = await graph.ainvoke({"durations": shape.durations(unit_s),
                                   "deps": dict(enumerate(shape.deps)), "done": [], "wave": []})
        if sorted(out["done"]) != list(range(len(shape.units))):
            raise RuntimeError(f"superstep {shape.name}: ran {sorted(out['done'])}")
        return time.perf_counter() - started

    return asyncio.run(timed())


# --- sequential: one after another ---------------------------------------------------


def run_sequential(shape: Shape, unit_s: float) -> float:
    started = time.perf_counter()
    for seconds in shape.durations(unit_s).values():  # ids are in topological order
        time.sleep(seconds)
    return time.perf_counter() - started


# --- the report ----------------------------------------------------------------------


def median_of(runs: int, measure: Callable[[], float]) -> float:
    return statistics.median(measure() for _ in range(runs))


def cell(wall: float, critical: float) -> str:
    return f"{wall:6.3f}  {wall / critical:5.2f}x"


def meets_target(wall: float, critical: float) -> bool:
    return wall / critical <= TARGET_RATIO


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="1 run per cell instead of 3")
    options = parser.parse_args(argv)
    runs, unit_s = (1 if options.quick else 3), 0.25

    with tempfile.TemporaryDirectory(prefix="hugginggpt-bench-") as tmp:
        folder = Path(tmp)
        write_catalog(folder)
        # Stop after execute: the respond stage would call an LLM when one is configured.
        dataflow: DataflowGraph = build_graph(
            checkpointer=InMemorySaver(), interrupt_after=["execute"]
        )
        superstep = build_superstep()
        run_dataflow(dataflow, SHAPES[2], unit_s, folder)  # warm-up
        run_dataflow(dataflow, SHAPES[2], unit_s, folder, use_async=True)
        run_superstep(superstep, SHAPES[2], unit_s)

        print(f"unit {unit_s:g} s, median of {runs} run(s); cells: wall s, wall/critical path")
        print(f"{'shape':<12} {'critical s':>10} | {'dataflow sync':>14} | "
              f"{'dataflow async':>14} | {'superstep':>14} | {'sequential':>14} | "
              f"dataflow <= {TARGET_RATIO:.2f}x")
        misses, checks = [], []
        for shape in SHAPES:
            critical = shape.critical_path(unit_s)
            flow_runs = [run_dataflow(dataflow, shape, unit_s, folder) for _ in range(runs)]
            flow = statistics.median(wall for wall, _ in flow_runs)
            aflow = statistics.median(
                run_dataflow(dataflow, shape, unit_s, folder, use_async=True)[0]
                for _ in range(runs)
            )
            waves = median_of(runs, partial(run_superstep, superstep, shape, unit_s))
            seq = median_of(runs, partial(run_sequential, shape, unit_s))
            ok = meets_target(flow, critical) and meets_target(aflow, critical)
            print(f"{shape.name:<12} {critical:>10.3f} | {cell(flow, critical)} | "
                  f"{cell(aflow, critical)} | {cell(waves, critical)} | {cell(seq, critical)} | "
                  f"{'ok' if ok else 'MISS'}")
            checks.append(flow_runs[-1][1])
            if not ok:
                misses.append(shape.name)

    print("\ndataflow ran on the benchmark tool (checked after every run):")
    print("\n".join(f"  {line}" for line in checks))
    verdict = f"misses it on: {', '.join(misses)}" if misses else "meets it on every shape"
    print(f"\ntarget dataflow wall/critical path <= {TARGET_RATIO:.2f}: {verdict}")
    return 1 if misses else 0


if __name__ == "__main__":
    sys.exit(main())
