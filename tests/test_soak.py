"""The soak benchmark, small: random plans with random faults, every failure explained
and no thread left behind (CI guards what ``benchmarks/soak.py`` measures at length)."""

from __future__ import annotations

import asyncio
import importlib.util
import sys
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[1]


def _soak_module() -> ModuleType:
    spec = importlib.util.spec_from_file_location("soak", ROOT / "benchmarks" / "soak.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["soak"] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def test_soak_of_twenty_runs_explains_every_failure(tmp_path):
    soak = _soak_module()
    report = asyncio.run(soak.soak(20, seed=3, concurrency=4, trace=False,
                                   max_fault_rate=0.8, workspace=tmp_path))
    assert report.unexplained == [], report.format()
    assert sum(report.counts.values()) == 20
    assert report.counts["partial"] > 0  # faults were injected and showed
    targets = {name: ok for name, ok, _ in report.targets()}
    assert targets["unexplained failures"] and targets["threads"], report.format()


def test_the_soak_judges_what_it_is_given(tmp_path):
    """The classifier is not a rubber stamp: a reasonless failure, a missing result, a
    wrongly typed output and an escaped exception are unexplained."""
    from hugginggpt.graph.state import Selection, SubtaskResult

    soak = _soak_module()
    trial = soak.Trial(0, [{"id": 0, "task": "summarization", "dep": [], "args": {}},
                           {"id": 1, "task": "text-classification", "dep": [], "args": {}}],
                       {}, 10, 10.0, "invoke")
    good = {0: SubtaskResult(id=0, task="summarization", status="done",
                             outputs={"text": "a summary"}),
            1: SubtaskResult(id=1, task="text-classification", status="failed",
                             error="ToolExecutionError: no such label set [tried: m (X)]")}
    out = {"status": "partial", "results": good, "selections": {}}
    assert soak.classify(trial, out, None, tmp_path) == ("partial", [])

    def judged(**changes):
        return soak.classify(trial, {**out, **changes}, None, tmp_path)[0]

    bare = SubtaskResult(id=1, task="text-classification", status="failed",
                         error="RuntimeError:  [tried: m (RuntimeError)]")
    assert judged(results={**good, 1: bare}) == "unexplained"
    # what the executor wrote for an exception without a message before it said why
    placeholder = SubtaskResult(id=1, task="text-classification", status="failed",
                                error="RuntimeError: (no message) [tried: m (RuntimeError)]")
    assert judged(results={**good, 1: placeholder}) == "unexplained"
    assert judged(results={0: good[0]}) == "unexplained"
    not_run = Selection(subtask_id=1, task="text-classification", model=None, backend=None,
                        reason="no model can run text-classification with backend 'x'")
    # every planned subtask has a result now, even one no model can run (issue 12)
    assert judged(results={0: good[0]}, selections={1: not_run}) == "unexplained"
    assert judged(status="completed") == "unexplained"  # not what its results say
    typed = SubtaskResult(id=0, task="summarization", status="done", outputs={"text": 42})
    assert judged(results={**good, 0: typed}) == "unexplained"
    assert judged(status="aborted", abort_reason="") == "unexplained"
    assert judged(status="running") == "unexplained"
    assert soak.classify(trial, None, RuntimeError("boom"), tmp_path)[0] == "unexplained"


def test_the_memory_verdicts_fail_on_a_leak_and_pass_a_plateau():
    """The native heap's slope over the second half fails a few kB kept per run; the
    resident set may swing with a bounded cache but not climb past its first half."""
    soak = _soak_module()
    MB = 2**20

    def verdicts(heap_per_run: int, rss: list[int]) -> dict[str, bool]:
        report = soak.Report(runs=500, warmup=100, rss_after_warmup=800 * MB,
                             rss_end=rss[-1] * MB)
        report.heap = [(n, 60 * MB + n * heap_per_run + (n % 80) * 4096)
                       for n in range(0, 401, 40)]  # a spread of 0.3 MB, as measured
        report.rss = [(n, mb * MB) for n, mb in zip(range(40, 401, 40), rss, strict=True)]
        return {name: ok for name, ok, _ in report.targets()}

    swinging = [850, 900, 1145, 860, 890, 945, 860, 825, 855, 905]
    assert verdicts(1500, swinging)["memory (native heap)"]
    assert verdicts(1500, swinging)["memory (RSS)"]
    assert not verdicts(10_000, swinging)["memory (native heap)"]
    climbing = [850, 880, 910, 940, 970, 1000, 1030, 1060, 1090, 1120]
    assert not verdicts(1500, climbing)["memory (RSS)"]
