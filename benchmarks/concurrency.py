"""Concurrency benchmark: how many runs per second does one process get through, and how
long does each take, as more runs share one graph and one checkpointer?

A server (the LangGraph server, or an application that embeds the graph) runs many
threads at once in one event loop: every run is an ``ainvoke`` on the same compiled
graph, and every checkpoint of every run goes through the same saver. The experts'
time is mostly waiting (a remote endpoint, a model on another device), so overlapping
runs should multiply the throughput; what limits it is the work that is not waiting:
the graph's own steps (planning a fixed plan, selection, state merges, the template
response) and the checkpoint writes, which the saver funnels through one connection.

This script measures that, for two checkpointers side by side in one run:

- ``sqlite``: ``AsyncSqliteSaver`` on a file in a temporary folder (the CLI's default);
- ``postgresql``: ``AsyncPostgresSaver`` on a database created for the run and dropped
  afterwards, on the server of ``HUGGINGGPT_TEST_POSTGRES_URL`` (start one with
  ``eval "$(scripts/postgres.sh start)"``; without it PostgreSQL is skipped).

Both are opened with ``hugginggpt.graph.checkpoint.aopen_checkpointer``, as the CLI opens them.
Each run is the project's real graph (``hugginggpt.build_graph``) on a fixed plan with the
``dry-run`` backend, whose simulated experts sleep their catalog latency times a scale:
a chain of two subtasks (summarization, then translation of the summary) beside one
independent subtask (text classification). With the scale used here, the chain, which is
a run's critical path, sleeps about 0.25 s. No LLM is called (``offline``): the plan is
given and the response is the template.

For each concurrency N (1, 8, 32), a warm-up round of N concurrent runs on each
checkpointer (not counted; the very first one also loads the selector's embedding
model), then 5 rounds of N concurrent runs (``asyncio.gather`` of ``ainvoke`` on
distinct thread ids, on one compiled graph per checkpointer), and at least 10 runs in
all (so N=1 gets 10 rounds); the checkpointers take turns round by round, so a slow
spell of the machine weighs on both alike. Columns: runs counted; wall s, the summed
wall time of the counted rounds; runs/s = runs / wall; p50 and p95 of the per-run
latency (from its ``ainvoke`` call to its return). Every run must end with status
``completed`` and every subtask ``done`` on the dry-run backend, and the last thread of
each cell is read back from its saver; anything else raises. There is no target: the
interesting figures are how far runs/s grows from N=1 to N=32 (the ideal, with no
overhead, is N / critical path) and how the two savers compare at N=32. All runs share
one Python process, so on a small machine the CPU each run takes (the graph's steps,
serialization, the saver's client side) sets the ceiling at N=32; the figures vary by
some 10-20% between runs of the script.

Usage: ``python benchmarks/concurrency.py [--quick]`` (``--quick``: 1 round per cell and
at least 4 runs).
"""

from __future__ import annotations

import argparse
import asyncio
import math
import os
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import AsyncIterator, Sequence
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from langchain_core.runnables import RunnableConfig
from langgraph.graph.state import CompiledStateGraph

from hugginggpt import build_graph
from hugginggpt.graph.checkpoint import aopen_checkpointer
from hugginggpt.graph.context import Context

PG_ENV = "HUGGINGGPT_TEST_POSTGRES_URL"
CONCURRENCY = (1, 8, 32)
LATENCY_SCALE = 0.07
"""Catalog latencies of the selected dry-run models: summarization 2.5 s, translation
1.0 s, text classification 0.1 s; times 0.07, the chain sleeps 0.245 s."""
PLAN: list[dict[str, Any]] = [
    {"id": 0, "task": "summarization", "dep": [],
     "args": {"text": "A long report on how many runs one process can serve at once."}},
    {"id": 1, "task": "translation", "dep": [0],
     "args": {"text": "<GENERATED>-0", "tgt_lang": "fr"}},
    {"id": 2, "task": "text-classification", "dep": [],
     "args": {"text": "The benchmark finished without errors."}},
]
CHAIN = ((0, 1), (2,))
"""The plan's paths: a run's simulated expert time is its longest."""

Graph = CompiledStateGraph[Any, Context, Any, Any]


@dataclass(frozen=True)
class Cell:
    """The counted runs of one (checkpointer, concurrency) pair."""

    saver: str
    concurrency: int
    wall_s: float
    latencies: tuple[float, ...]
    expert_s: float
    """Median simulated expert time of a run (its critical path, from the results)."""

    @property
    def runs(self) -> int:
        return len(self.latencies)

    @property
    def throughput(self) -> float:
        return self.runs / self.wall_s


def percentile(values: Sequence[float], q: float) -> float:
    """The q-th percentile (0-100), interpolating linearly between the closest ranks."""
    ordered = sorted(values)
    if not ordered:
        raise ValueError("no values")
    rank = (len(ordered) - 1) * q / 100
    low, high = math.floor(rank), math.ceil(rank)
    return ordered[low] + (ordered[high] - ordered[low]) * (rank - low)


def check_run(saver: str, out: dict[str, Any]) -> float:
    """Fail unless the run completed with every subtask done on the dry-run backend;
    its simulated expert time (the longest path of result latencies)."""
    results = out.get("results", {})
    wrong = [f"{i}: {r.status} on {r.backend} {r.error or ''}" for i, r in results.items()
             if (r.status, r.backend) != ("done", "dry-run")]
    if out.get("status") != "completed" or wrong or set(results) != {s["id"] for s in PLAN}:
        raise RuntimeError(f"{saver}: a run did not complete: status {out.get('status')!r}, "
                           f"abort reason {out.get('abort_reason')!r}, results "
                           f"{wrong or sorted(results)}")
    return max(sum(results[i].latency_s for i in path) for path in CHAIN)


async def one_run(graph: Graph, context: Context, saver: str) -> tuple[float, float, str]:
    """One run on a new thread: its latency, its simulated expert time, its thread id."""
    thread = uuid.uuid4().hex
    config: RunnableConfig = {"configurable": {"thread_id": thread}}
    started = time.perf_counter()
    out = await graph.ainvoke({"request": "concurrency benchmark"}, config, context=context)
    latency = time.perf_counter() - started
    return latency, check_run(saver, out), thread


async def one_round(graph: Graph, context: Context, saver: str,
                    n: int) -> tuple[float, list[tuple[float, float, str]]]:
    """N runs at once; the round's wall time and each run's figures."""
    started = time.perf_counter()
    runs = await asyncio.gather(*(one_run(graph, context, saver) for _ in range(n)))
    return time.perf_counter() - started, list(runs)


async def check_saved(graph: Graph, saver: str, thread: str) -> None:
    """Read a thread back from the saver: the checkpoints really went there."""
    config: RunnableConfig = {"configurable": {"thread_id": thread}}
    snapshot = await graph.aget_state(config)
    if snapshot.values.get("status") != "completed" or snapshot.next:
        raise RuntimeError(f"{saver}: thread {thread} not saved as completed: "
                           f"{snapshot.values.get('status')!r}, next {snapshot.next}")


async def measure(graphs: dict[str, Graph], context: Context, rounds: int,
                  min_runs: int) -> list[Cell]:
    """Every concurrency level on each checkpointer's graph. The checkpointers take turns
    round by round, so a slow spell of the machine weighs on both alike."""
    cells = []
    for n in CONCURRENCY:
        walls: dict[str, list[float]] = {name: [] for name in graphs}
        runs: dict[str, list[tuple[float, float, str]]] = {name: [] for name in graphs}
        for name, graph in graphs.items():
            await one_round(graph, context, name, n)  # warm-up
        for _ in range(max(rounds, math.ceil(min_runs / n))):
            for name, graph in graphs.items():
                wall, figures = await one_round(graph, context, name, n)
                walls[name].append(wall)
                runs[name].extend(figures)
        for name, graph in graphs.items():
            await check_saved(graph, name, runs[name][-1][2])
            cells.append(Cell(name, n, sum(walls[name]), tuple(r[0] for r in runs[name]),
                              statistics.median(r[1] for r in runs[name])))
    return cells


@asynccontextmanager
async def fresh_database(server_url: str) -> AsyncIterator[str]:
    """A database created on the server for this run, dropped afterwards; its URL."""
    import psycopg

    name = f"hgpt_bench_{uuid.uuid4().hex[:10]}"
    async with await psycopg.AsyncConnection.connect(server_url, autocommit=True) as conn:
        await conn.execute(f"CREATE DATABASE {name}")
    try:
        yield urlsplit(server_url)._replace(path=f"/{name}").geturl()
    finally:
        async with await psycopg.AsyncConnection.connect(server_url, autocommit=True) as conn:
            await conn.execute(f"DROP DATABASE {name} WITH (FORCE)")


async def run_all(workspace: Path, rounds: int, min_runs: int) -> list[Cell]:
    """Open the checkpointers, one compiled graph on each, and measure them side by side."""
    context = Context(backend="dry-run", plan=PLAN, dry_run_latency_scale=LATENCY_SCALE,
                      workspace=str(workspace), offline=True, approval="never",
                      catalog=None, latency_budget_s=None, max_subtasks=len(PLAN),
                      cache=False)  # every run's experts work: the cache would serve them
    urls = {"sqlite": f"sqlite:///{workspace / 'checkpoints.sqlite'}"}
    async with AsyncExitStack() as stack:
        server = os.environ.get(PG_ENV, "").strip()
        if server:
            urls["postgresql"] = await stack.enter_async_context(fresh_database(server))
        else:
            print(f"PostgreSQL skipped: {PG_ENV} is not set; start a server with "
                  f"`eval \"$(scripts/postgres.sh start)\"` and run this again.\n")
        graphs: dict[str, Graph] = {}
        for name, url in urls.items():
            saver = await stack.enter_async_context(aopen_checkpointer(url))
            graphs[name] = build_graph(checkpointer=saver)
        return await measure(graphs, context, rounds, min_runs)


def report(cells: list[Cell]) -> None:
    print(f"{'checkpointer':<12} | {'concurrency':>11} | {'runs':>4} | {'wall s':>7} | "
          f"{'runs/s':>7} | {'p50 s':>6} | {'p95 s':>6}")
    print("-" * 72)
    for c in cells:
        print(f"{c.saver:<12} | {c.concurrency:>11} | {c.runs:>4} | {c.wall_s:>7.2f} | "
              f"{c.throughput:>7.2f} | {percentile(c.latencies, 50):>6.3f} | "
              f"{percentile(c.latencies, 95):>6.3f}")
    top = max(CONCURRENCY)
    at_top = {c.saver: c for c in cells if c.concurrency == top}
    expert = statistics.median(c.expert_s for c in cells)
    print(f"\nsimulated expert time per run (critical path): {expert:.3f} s; "
          f"no-overhead throughput at {top}: {top / expert:.1f} runs/s")
    if {"sqlite", "postgresql"} <= at_top.keys():
        pg, lite = at_top["postgresql"], at_top["sqlite"]
        print(f"at concurrency {top}: PostgreSQL {pg.throughput:.2f} runs/s vs SQLite "
              f"{lite.throughput:.2f} runs/s ({pg.throughput / lite.throughput:.2f}x SQLite's "
              f"throughput; p95 {percentile(pg.latencies, 95):.3f} s vs "
              f"{percentile(lite.latencies, 95):.3f} s)")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true",
                        help="1 round per cell (at least 4 runs) instead of 5 (at least 10)")
    options = parser.parse_args(argv)
    rounds, min_runs = (1, 4) if options.quick else (5, 10)

    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="hugginggpt-bench-") as tmp:
        print(f"plan: 2-subtask chain + 1 independent subtask, dry-run scale {LATENCY_SCALE:g}; "
              f"per cell: warm-up round, then {rounds} round(s) of N concurrent runs "
              f"(at least {min_runs} runs)\n")
        cells = asyncio.run(run_all(Path(tmp), rounds, min_runs))
    report(cells)
    print(f"\nbenchmark took {time.perf_counter() - started:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
