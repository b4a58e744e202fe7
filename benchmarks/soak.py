"""Soak test: many runs of random plans with random faults injected through the simulated
experts; every failure must be explained, and threads and memory must stay flat.

Each run is the project's real graph (``hugginggpt.build_graph``, a fresh in-memory
checkpointer per run) on a fixed plan with the ``dry-run`` backend and no LLM
(``offline``: the response is the template). Plans come from the plan bank
(``nodes/planning/plan_bank.jsonl``: its files are created in the workspace, plans with URLs are
left out) or are generated at random (DAGs of up to 8 subtasks whose arguments are
literals or outputs of earlier subtasks), and each is checked by ``validate_plan``. Each
run draws its faults (tools/experts/faults.py): a total fault rate per call between 0 and
``--max-fault-rate`` spread over a random subset of the fault kinds, with hangs and
blocked threads lasting longer than the subtask timeout; one run in ten gets a
``max_subtasks`` below its plan's size (it must abort, with the reason) and one in ten a
``max_run_s`` shorter than its plan (unfinished subtasks abandoned). Runs go in batches
of ``--concurrency`` at once, half of them through ``ainvoke`` on the event loop and half
through ``invoke`` in worker threads.

A run is **completed** (every subtask done), **partial** (some subtasks failed or
skipped: the run's status is ``partial`` or ``failed``) or **aborted**. It is
**unexplained** when an exception escaped ``invoke``, the status is not the one its
results give (``completed`` all done, ``partial`` some, ``failed`` none) nor aborted, an
abort has no reason, a subtask of a finished run has no result, a failed or skipped
subtask has no reason (empty, a bare exception type, or an internal error), or a done
subtask's outputs are not what its task type declares (checked here, independently of
the executor's own validation).

Targets, each with a PASS/FAIL line:

- unexplained failures: 0;
- threads: after the last run (and the blocked threads' faults have ended), no more
  threads outside the thread pools than after the warm-up, and each pool (the tools'
  pool, the event loop's default executor) within its bound;
- memory, tracemalloc: Python memory still allocated at the end, of what was allocated
  after the warm-up, under 2 kB per measured run (a leak of one state per run would be
  tens of kB per run);
- memory, native heap: what glibc's malloc has handed out and not got back
  (``mallinfo2``: lingua, tokenizers, NumPy and Python's larger objects; tracemalloc's
  own tables left out), taken after the warm-up and at ten checkpoints with lingua's
  close-look models unloaded, grows by less than 8 kB per run over the second half of
  the measured runs (a least-squares slope; the first half's is printed beside it: a
  cache that fills once shows there). Measured without a leak: +4.7 and +5.6 kB per
  run, with a spread of about 0.5 MB between checkpoints (tracemalloc's 1.2 kB among
  them; the rest is not traced, and slows down: 4 then 2 kB per run over runs 100 to
  300 and 300 to 500 without close looks). A 50 kB buffer kept per run fails it by far,
  and so does a native leak of 5 kB per run, which tracemalloc cannot see;
- memory, RSS: the resident set at the second half's checkpoints stays within 10% (at
  least 16 MB) of its highest over the warm-up and the first half: a plateau. It is
  what a server holds, but it does not come back down: glibc keeps freed pages for
  reuse (after lingua's models came and went: 67 MB in use in 620 to 750 MB), so a
  bounded cache whose content changes moves it up and down by tens of MB. A cache that
  still fills after the first half fails it; a leak of tens of kB per run shows only in
  the figures above (a 50 kB one moved it by +6.5 MB).

Lingua's close-look models are the bounded cache here: a close call between languages
loads their high-accuracy models (about 25 MB each), and at most
``KEPT_LANGUAGES`` languages' stay loaded (tools/experts/lite/languages.py). Before that
bound, the resident set grew by 170 to 190 MB over the 400 measured runs, levelling
off after about 200 (the soak's texts had by then loaded 31 languages, 0.7 GB); with
close looks switched off it stayed within 4 MB from run 100 to 300. Not glibc's arenas
(``MALLOC_ARENA_MAX=2``: +165 MB), nor oneDNN (MiniLM runs in NumPy).

Usage: ``python benchmarks/soak.py [--runs 500] [--seed 0] [--concurrency 4]
[--warmup N] [--max-fault-rate 0.6] [--no-tracemalloc]``; the warm-up (default: a
fifth of the runs, at most 100) fills the process's bounded caches (loaded engines, the
selection's embeddings, partly) before memory is measured. Exit status 1 when a target
fails.
"""

from __future__ import annotations

import argparse
import asyncio
import ctypes
import gc
import json
import math
import os
import random
import statistics
import sys
import tempfile
import threading
import time
import tracemalloc
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # run as a script from anywhere
    sys.path.insert(0, str(ROOT))

from langgraph.checkpoint.memory import InMemorySaver  # noqa: E402

from hugginggpt import build_graph  # noqa: E402
from hugginggpt.graph.checkpoint import serializer  # noqa: E402
from hugginggpt.graph.context import Context  # noqa: E402
from hugginggpt.nodes.planning.bank import DEFAULT_BANK  # noqa: E402
from hugginggpt.nodes.planning.validation import validate_plan  # noqa: E402
from hugginggpt.tools.artifacts import is_artifact_ref  # noqa: E402
from hugginggpt.tools.experts.dry_run import _png, _wav  # noqa: E402
from hugginggpt.tools.experts.faults import FAULT_KINDS  # noqa: E402
from hugginggpt.tools.experts.lite.languages import (  # noqa: E402
    confidences,
    unload_close_looks,
)
from hugginggpt.tools.experts.tasks import get_task_type  # noqa: E402
from hugginggpt.tools.kinds import generated_ref, is_url, kind_of_literal  # noqa: E402
from hugginggpt.tools.threads import TOOL_POOL  # noqa: E402

SUBTASK_TIMEOUT_S = 0.1
HANG_S = 0.3
"""Hangs and blocked threads last three subtask timeouts."""
LATENCY_SCALE = 0.002
"""Catalog latencies (0.05 to 5 s) times this: at most 10 ms per simulated call."""
TRACED_PER_RUN_LIMIT = 2048
HEAP_PER_RUN_LIMIT = 8192
QUICK_TEXT = "Is what a lovely morning positive or negative?"
"""A text lingua's quick pass settles (tests/test_startup.py): it reloads the trigrams
that unloading the close looks' languages dropped."""
RSS_GROWTH_LIMIT = 0.10
RSS_GROWTH_FLOOR = 16 * 1024 * 1024

Plan = list[dict[str, Any]]

# ------------------------------------------------------------------------------ plans

_GENERATED_TASKS: list[tuple[str, str, dict[str, str]]] = [
    # (task, the argument that takes data, fixed parameters)
    ("summarization", "text", {}),
    ("translation", "text", {"tgt_lang": "fr"}),
    ("text-generation", "text", {}),
    ("text2text-generation", "text", {}),
    ("text-classification", "text", {}),
    ("zero-shot-classification", "text", {"labels": "news, sport, weather"}),
    ("token-classification", "text", {}),
    ("feature-extraction", "text", {}),
    ("text-to-speech", "text", {}),
    ("text-to-image", "text", {}),
    ("image-to-text", "image", {}),
    ("image-classification", "image", {}),
    ("object-detection", "image", {}),
    ("depth-estimation", "image", {}),
    ("automatic-speech-recognition", "audio", {}),
    ("audio-classification", "audio", {}),
]
_LITERALS = {"text": "A short text about a soak test.", "image": "soak_photo.png",
             "audio": "soak_speech.wav"}


def bank_plans() -> list[Plan]:
    """The bank's plans that need no network (no URL arguments)."""
    plans = []
    for line in DEFAULT_BANK.read_text(encoding="utf-8").splitlines():
        plan = json.loads(line)["plan"] if line.strip() else []
        if plan and not any(is_url(str(v)) for st in plan for v in st["args"].values()):
            plans.append(plan)
    return plans


def generated_plan(rng: random.Random) -> Plan:
    """A random DAG: each subtask takes a literal or the output of an earlier subtask
    that produces the kind it needs."""
    plan: Plan = []
    for i in range(rng.randint(1, 8)):
        task, data_arg, params = rng.choice(_GENERATED_TASKS)
        kind = str(get_task_type(task).arg(data_arg).kind)  # type: ignore[union-attr]
        sources = [st["id"] for st in plan
                   if get_task_type(st["task"]).output_for(kind)]  # type: ignore[union-attr]
        if sources and rng.random() < 0.7:
            source = rng.choice(sources)
            plan.append({"id": i, "task": task, "dep": [source],
                         "args": {data_arg: f"<GENERATED>-{source}", **params}})
        else:
            plan.append({"id": i, "task": task, "dep": [], "args": {data_arg: _LITERALS[kind],
                                                                    **params}})
    return plan


def write_inputs(plans: list[Plan], workspace: Path) -> None:
    """Create every file the plans name, in the workspace, with valid content."""
    content = {"image": _png(), "audio": _wav(0.1), "video": b"video", "table": b"a,b\n1,2\n"}
    for plan in plans:
        for st in plan:
            for value in st["args"].values():
                kind = kind_of_literal(str(value))
                if kind in content and generated_ref(str(value)) is None:
                    path = workspace / str(value)
                    path.parent.mkdir(parents=True, exist_ok=True)
                    path.write_bytes(content[kind])


# ------------------------------------------------------------------------------ runs


@dataclass
class Trial:
    """One run to make: its plan, faults, limits and path."""

    index: int
    plan: Plan
    faults: dict[str, Any]
    max_subtasks: int
    max_run_s: float
    path: str


def make_trial(index: int, rng: random.Random, plans: list[Plan], max_fault_rate: float,
               seed: int) -> Trial:
    plan = rng.choice(plans) if rng.random() < 0.7 else generated_plan(rng)
    kinds = rng.sample(FAULT_KINDS, rng.randint(1, len(FAULT_KINDS)))
    total = rng.uniform(0, max_fault_rate)
    faults = {"rates": {k: total / len(kinds) for k in kinds}, "hang_s": HANG_S,
              "seed": seed * 100_003 + index}
    max_subtasks = len(plan) - 1 if len(plan) > 1 and rng.random() < 0.1 else 10
    max_run_s = rng.uniform(0.05, 0.3) if rng.random() < 0.1 else 10.0
    return Trial(index, plan, faults, max_subtasks, max_run_s,
                 "ainvoke" if rng.random() < 0.5 else "invoke")


def context_for(trial: Trial, workspace: Path) -> Context:
    return Context(plan=trial.plan, backend="dry-run", offline=True, workspace=str(workspace),
                   dry_run_latency_scale=LATENCY_SCALE, dry_run_faults=trial.faults,
                   subtask_timeout_s=SUBTASK_TIMEOUT_S, subtask_retries=1,
                   retry_backoff_s=0.005, max_models_per_subtask=2,
                   max_subtasks=trial.max_subtasks, max_run_s=trial.max_run_s,
                   approval="never", catalog=None, latency_budget_s=None)


def output_problems(result: Any, workspace: Path) -> list[str]:
    """Why a done result's outputs are not what its task type declares (none: fine)."""
    task_type = get_task_type(result.task)
    if task_type is None:
        return [f"unknown task {result.task}"]
    problems = []
    if set(result.outputs) != {o.name for o in task_type.outputs}:
        problems.append(f"outputs {sorted(result.outputs)}")
    for output in task_type.outputs:
        value = result.outputs.get(output.name)
        if is_artifact_ref(value):
            path = (workspace / value["path"]).resolve()
            if value["kind"] != output.kind or not path.is_file() or not path.stat().st_size:
                problems.append(f"{output.name}: bad reference {value}")
        elif output.kind in ("image", "audio", "video", "table", "vector"):
            problems.append(f"{output.name}: {output.kind} is not a reference: {value!r:.60}")
        elif output.kind == "text" and not isinstance(value, str):
            problems.append(f"{output.name}: not text: {value!r:.60}")
        elif output.kind == "number" and not (
                isinstance(value, float) and math.isfinite(value)):
            problems.append(f"{output.name}: not a number: {value!r:.60}")
        elif output.kind == "labels" and not (isinstance(value, list) and all(
                isinstance(item, dict) for item in value)):
            problems.append(f"{output.name}: not labels: {value!r:.60}")
    return problems


PLACEHOLDERS = frozenset({"", "(no message)", "none", "error", "failed", "unknown error"})
"""Messages that say nothing about what failed or why."""


def _explained(error: str | None) -> bool:
    """A reason that says what failed and why: not empty, not an internal error, not a
    bare exception type or a placeholder in its place (``"RuntimeError: "``,
    ``"RuntimeError: (no message) [tried: m (RuntimeError)]"``)."""
    if not error or error.startswith("internal error"):
        return False
    _, _, message = error.partition(": ")
    said = message.split("[tried:")[0].strip().rstrip(".").lower()
    return said not in PLACEHOLDERS and len(said) > 8


def classify(trial: Trial, out: dict[str, Any] | None, escaped: BaseException | None,
             workspace: Path) -> tuple[str, list[str]]:
    """The run's outcome and, if unexplained, why."""
    if escaped is not None:
        return "unexplained", [f"escaped: {type(escaped).__name__}: {escaped}"]
    assert out is not None
    status = out.get("status")
    if status == "aborted":
        reason = out.get("abort_reason") or ""
        return ("aborted", []) if len(reason) > 20 else ("unexplained", ["abort without reason"])
    if status not in ("completed", "partial", "failed"):
        return "unexplained", [f"status {status!r}"]
    problems = []
    results = out.get("results") or {}
    done_count = sum(r.status == "done" for r in results.values())
    told = ("completed" if done_count == len(trial.plan) else "partial" if done_count
            else "failed")
    if status != told:
        problems.append(f"status {status!r}, but the results say {told!r}")
    for st in trial.plan:
        result = results.get(st["id"])
        if result is None:
            problems.append(f"subtask {st['id']}: no result")
        elif result.status == "done":
            problems += [f"subtask {st['id']}: {p}" for p in output_problems(result, workspace)]
        elif not _explained(result.error):
            problems.append(f"subtask {st['id']} {result.status} with reason {result.error!r}")
    if problems:
        return "unexplained", problems
    done = all(st["id"] in results and results[st["id"]].status == "done" for st in trial.plan)
    return ("completed" if done else "partial"), []


async def one_run(trial: Trial, workspace: Path) -> tuple[str, list[str], float, list[str]]:
    graph = build_graph(checkpointer=InMemorySaver(serde=serializer()))
    config = {"configurable": {"thread_id": f"soak-{trial.index}"}}
    request = {"request": f"soak run {trial.index}"}
    context = context_for(trial, workspace)
    started = time.perf_counter()
    out: dict[str, Any] | None = None
    escaped: BaseException | None = None
    try:
        if trial.path == "ainvoke":
            out = await graph.ainvoke(request, config, context=context)  # type: ignore[arg-type]
        else:
            out = await asyncio.to_thread(graph.invoke, request, config,  # type: ignore[arg-type]
                                          context=context)
    except Exception as exc:  # what the soak looks for: it is counted, not raised
        escaped = exc
    elapsed = time.perf_counter() - started
    outcome, problems = classify(trial, out, escaped, workspace)
    kinds = [r.error.split(":")[0].split(" (")[0][:32]
             for r in (out or {}).get("results", {}).values() if r.error]
    if out is not None and out.get("status") == "aborted":
        reason = out.get("abort_reason") or ""
        kinds.append("aborted (max_subtasks)" if "max_subtasks" in reason else "aborted")
    return outcome, problems, elapsed, kinds


# ------------------------------------------------------------------------------ figures


def rss_bytes() -> int:
    """The resident set size of this process now (Linux), 0 where unknown."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


class _MallInfo2(ctypes.Structure):
    _fields_ = [(name, ctypes.c_size_t) for name in (
        "arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks", "uordblks",
        "fordblks", "keepcost")]


def heap_in_use() -> int:
    """Bytes that glibc's malloc has handed out and not got back, less tracemalloc's
    own; 0 without glibc 2.33's ``mallinfo2``."""
    try:
        mallinfo2 = ctypes.CDLL("libc.so.6").mallinfo2
    except (OSError, AttributeError):
        return 0
    mallinfo2.restype = _MallInfo2
    info = mallinfo2()
    return info.uordblks + info.hblkhd - tracemalloc.get_tracemalloc_memory()


def settled_heap() -> int:
    """:func:`heap_in_use` without the bounded cache of lingua's close-look models, and
    with its quick pass's trigrams all loaded, as after the warm-up."""
    unload_close_looks()
    confidences(QUICK_TEXT)
    return heap_in_use()


POOLS = {"tool": TOOL_POOL._max_workers, "asyncio": min(32, (os.cpu_count() or 1) + 4)}
"""Thread pools that keep their threads, by name prefix, with their bounds: the tools'
pool and the event loop's default executor (``invoke`` runs go there)."""


def threads_outside_pools() -> int:
    return sum(not t.name.startswith(tuple(POOLS)) for t in threading.enumerate())


def threads_in_pool(prefix: str) -> int:
    return sum(t.name.startswith(prefix) for t in threading.enumerate())


def slope(points: list[tuple[int, int]]) -> float:
    """Bytes per run: the least-squares line through (runs, bytes), less swayed by one
    checkpoint's noise than the difference of the ends."""
    return statistics.linear_regression([n for n, _ in points], [b for _, b in points]).slope


@dataclass
class Report:
    runs: int
    warmup: int
    counts: Counter[str] = field(default_factory=Counter)
    unexplained: list[tuple[int, list[str]]] = field(default_factory=list)
    latencies: list[float] = field(default_factory=list)
    slowest: tuple[float, int] = (0.0, -1)
    errors: Counter[str] = field(default_factory=Counter)
    """Failed and skipped subtasks by the exception type their reason starts with."""
    wall_s: float = 0.0
    threads_after_warmup: int = 0
    threads_outside_pools_after_warmup: int = 0
    threads_end: int = 0
    threads_outside_pools_end: int = 0
    threads_peak: int = 0
    pool_threads_end: dict[str, int] = field(default_factory=dict)
    rss_after_warmup: int = 0
    rss_end: int = 0
    traced: list[tuple[int, int]] = field(default_factory=list)
    """(runs done, bytes still allocated since the warm-up) at checkpoints."""
    rss: list[tuple[int, int]] = field(default_factory=list)
    """(runs done after the warm-up, resident bytes) at checkpoints."""
    heap: list[tuple[int, int]] = field(default_factory=list)
    """(runs done after the warm-up, :func:`heap_in_use`) after the warm-up and at
    checkpoints."""
    thread_names: Counter[str] = field(default_factory=Counter)
    top_growth: list[str] = field(default_factory=list)

    @property
    def measured(self) -> int:
        return self.runs - self.warmup

    def targets(self) -> list[tuple[str, bool, str]]:
        pools_ok = all(n <= POOLS[name] for name, n in self.pool_threads_end.items())
        checks = [
            ("unexplained failures", not self.unexplained, f"{len(self.unexplained)} (target 0)"),
            ("threads", pools_ok and
             self.threads_outside_pools_end <= self.threads_outside_pools_after_warmup,
             f"{self.threads_after_warmup} after warm-up, {self.threads_end} at the end, "
             f"peak {self.threads_peak}; outside the thread pools "
             f"{self.threads_outside_pools_after_warmup} -> {self.threads_outside_pools_end}; "
             "in the pools " + ", ".join(f"{name} {n} (bound {POOLS[name]})"
                                         for name, n in self.pool_threads_end.items())),
        ]
        if self.traced and self.measured > 0:
            growth = self.traced[-1][1] - self.traced[0][1]
            per_run = growth / self.measured
            checks.append(("memory (tracemalloc)", per_run < TRACED_PER_RUN_LIMIT,
                           f"{growth / 1024:.0f} kB still allocated of what {self.measured} runs "
                           f"allocated after the warm-up: {per_run:.0f} B/run (target < "
                           f"{TRACED_PER_RUN_LIMIT} B/run)"))
        if len(self.heap) > 4 and self.heap[-1][1]:
            half = len(self.heap) // 2
            first, second = slope(self.heap[:half + 1]), slope(self.heap[half:])
            checks.append(("memory (native heap)", second < HEAP_PER_RUN_LIMIT,
                           f"{self.heap[0][1] / 2**20:.1f} MB in use after warm-up, "
                           f"{self.heap[-1][1] / 2**20:.1f} MB at the end; growth per run "
                           f"{first:+.0f} B over the first {self.heap[half][0]} runs, "
                           f"{second:+.0f} B over the rest (target < {HEAP_PER_RUN_LIMIT} B)"))
        if self.rss_after_warmup and len(self.rss) > 1:
            middle = self.rss[len(self.rss) // 2 - 1][0]
            plateau = max([self.rss_after_warmup] + [b for n, b in self.rss if n <= middle])
            highest = max(b for n, b in self.rss + [(self.measured, self.rss_end)]
                          if n > middle)
            allowed = max(RSS_GROWTH_FLOOR, RSS_GROWTH_LIMIT * plateau)
            checks.append(("memory (RSS)", highest - plateau < allowed,
                           f"{self.rss_after_warmup / 2**20:.0f} MB after warm-up, at most "
                           f"{plateau / 2**20:.0f} MB over the first {middle} runs, at most "
                           f"{highest / 2**20:.0f} MB after ({(highest - plateau) / 2**20:+.1f} "
                           f"MB; target < {allowed / 2**20:.0f} MB)"))
        return checks

    def passed(self) -> bool:
        return all(ok for _, ok, _ in self.targets())

    def format(self) -> str:
        lines = [
            f"runs: {self.runs} ({self.warmup} warm-up) in {self.wall_s:.1f} s "
            f"({self.runs / self.wall_s:.1f} runs/s)",
            "outcomes: " + ", ".join(f"{k} {self.counts[k]}" for k in
                                     ("completed", "partial", "aborted", "unexplained")),
        ]
        if self.latencies:
            ordered = sorted(self.latencies)
            lines.append(f"run time: median {ordered[len(ordered) // 2]:.3f} s, "
                         f"max {ordered[-1]:.3f} s (run {self.slowest[1]})")
        lines.append("reasons of failed/skipped subtasks and aborts: " + ", ".join(
            f"{kind} {n}" for kind, n in self.errors.most_common(12)))
        if self.traced:
            lines.append("tracemalloc after warm-up (runs: kB): " + ", ".join(
                f"{n}: {b / 1024:.0f}" for n, b in self.traced))
        lines += [f"  grew: {line}" for line in self.top_growth]
        if self.rss:
            lines.append("RSS after warm-up (runs: MB): " + ", ".join(
                f"{n}: {b / 2**20:.1f}" for n, b in self.rss))
        if self.heap:
            lines.append("native heap in use after warm-up (runs: MB): " + ", ".join(
                f"{n}: {b / 2**20:.2f}" for n, b in self.heap))
        lines.append("threads at the end: " + ", ".join(
            f"{name} {n}" for name, n in sorted(self.thread_names.items())))
        for index, problems in self.unexplained[:10]:
            lines.append(f"unexplained run {index}: " + "; ".join(problems)[:400])
        for name, ok, detail in self.targets():
            lines.append(f"{'PASS' if ok else 'FAIL'} {name}: {detail}")
        return "\n".join(lines)


async def soak(runs: int, seed: int = 0, concurrency: int = 4, warmup: int | None = None,
               max_fault_rate: float = 0.6, trace: bool = True,
               workspace: Path | None = None) -> Report:
    """Make ``runs`` runs and measure them (see the module's docstring)."""
    warmup = min(runs // 5, 100) if warmup is None else min(warmup, runs)
    report = Report(runs=runs, warmup=warmup)
    rng = random.Random(seed)
    with tempfile.TemporaryDirectory(prefix="hugginggpt-soak-") as tmp:
        folder = workspace or Path(tmp)
        plans = bank_plans()
        _, problems = validate_plan(plans[0], max_subtasks=10)
        assert not problems, problems
        trials = [make_trial(i, rng, plans, max_fault_rate, seed) for i in range(runs)]
        for trial in trials:
            _, problems = validate_plan(trial.plan, max_subtasks=10)
            assert not problems, (trial.plan, problems)
        write_inputs([t.plan for t in trials], folder)
        started = time.perf_counter()
        checkpoints = {warmup + round(k * (runs - warmup) / 10) for k in range(1, 11)}
        for first in range(0, runs, concurrency):
            batch = trials[first:first + concurrency]
            outcomes = await asyncio.gather(*(one_run(t, folder) for t in batch))
            for trial, (outcome, problems, elapsed, kinds) in zip(batch, outcomes, strict=True):
                report.counts[outcome] += 1
                report.latencies.append(elapsed)
                report.slowest = max(report.slowest, (elapsed, trial.index))
                report.errors.update(kinds)
                if problems:
                    report.unexplained.append((trial.index, problems))
            done = first + len(batch)
            report.threads_peak = max(report.threads_peak, threading.active_count())
            if done >= warmup and not report.rss_after_warmup:
                await asyncio.sleep(HANG_S + 0.2)  # let blocked threads finish their faults
                gc.collect()
                report.rss_after_warmup = rss_bytes()
                report.heap.append((0, settled_heap()))
                report.threads_after_warmup = threading.active_count()
                report.threads_outside_pools_after_warmup = threads_outside_pools()
                if trace:
                    tracemalloc.start()
                    baseline = tracemalloc.take_snapshot()
                    report.traced.append((0, tracemalloc.get_traced_memory()[0]))
            elif done in checkpoints:
                await asyncio.sleep(HANG_S + 0.2)
                gc.collect()
                report.rss.append((done - warmup, rss_bytes()))
                report.heap.append((done - warmup, settled_heap()))
                if trace and tracemalloc.is_tracing():
                    report.traced.append((done - warmup, tracemalloc.get_traced_memory()[0]))
        report.wall_s = time.perf_counter() - started
        await asyncio.sleep(HANG_S + 0.2)
        gc.collect()
        report.threads_end = threading.active_count()
        report.threads_outside_pools_end = threads_outside_pools()
        report.pool_threads_end = {name: threads_in_pool(name) for name in POOLS}
        report.rss_end = rss_bytes()
        report.thread_names = Counter(t.name.rstrip("0123456789_") for t in threading.enumerate())
        if trace and tracemalloc.is_tracing():
            report.traced.append((runs - warmup, tracemalloc.get_traced_memory()[0]))
            stats = tracemalloc.take_snapshot().compare_to(baseline, "lineno")
            report.top_growth = [str(s) for s in stats[:5]]
            tracemalloc.stop()
    return report


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=500)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--concurrency", type=int, default=4, help="runs at once")
    parser.add_argument("--warmup", type=int, help="runs before measuring (default: "
                                                   "min(runs/5, 100))")
    parser.add_argument("--max-fault-rate", type=float, default=0.6,
                        help="the highest per-call fault rate a run may draw")
    parser.add_argument("--no-tracemalloc", action="store_true",
                        help="skip tracemalloc (faster; RSS only)")
    options = parser.parse_args(argv)
    print(f"soak: {options.runs} runs, seed {options.seed}, {options.concurrency} at once, "
          f"fault rate per call up to {options.max_fault_rate:g}, subtask timeout "
          f"{SUBTASK_TIMEOUT_S:g} s, hangs {HANG_S:g} s\n")
    report = asyncio.run(soak(options.runs, options.seed, options.concurrency, options.warmup,
                              options.max_fault_rate, not options.no_tracemalloc))
    print(report.format())
    return 0 if report.passed() else 1


if __name__ == "__main__":
    sys.exit(main())
