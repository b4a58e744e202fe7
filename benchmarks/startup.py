"""Start-up benchmark: what a user waits for before and after issue 16's first item.

Two commands, each timed on two trees of the code in the same run, with the same venv:

- ``before``: the commit before this work (``a8304c7`` by default, ``--before REV``),
  taken with ``git archive`` into a temporary folder;
- ``after``: this checkout.

Each tree is laid out as it installs (``graph/``, ``nodes/``, ``tools/`` linked under
``hugginggpt/``, from that tree's own ``pyproject.toml``, as ``scripts/installed_tree.py``
does) and put first on ``PYTHONPATH``, so the venv's editable install of this checkout
is never what runs; each child checks that it imported its own tree. Children run in an
empty folder, offline (``HF_HUB_OFFLINE``, no LLM key), each tree with its own cache
folder (``HUGGINGGPT_CACHE_DIR``), and without the result cache (``HUGGINGGPT_CACHE=0``:
every run runs its expert, as before that cache existed).

The commands:

- ``hugginggpt --help``: cold is a new process each time (what a user types), wall time
  from spawn to exit; warm is ``main(["--help"])`` again in a process that has run it.
- the trivial offline request ``hugginggpt run 'Is "what a lovely morning" positive or
  negative?'``: cold is a new process each time, after one untimed run that fills the
  tree's caches (the bank's vectors; reported as "first run");
  warm is the same request again in one process (what the API or a server sees).
  Phases: ``imports`` (the interpreter, the CLI and the ``run`` command's modules), and
  ``plan``, ``select``, ``execute``, ``respond`` from the run's progress lines (each
  stage's first to last stamp; a model a stage waits for, such as MiniLM for the
  planner before, is in that stage's time). ``other`` is what remains of the wall time
  (building the graph, the checkpointer, writing the answer, exit). The phases come
  from a driver that times them in the process; it starts and ends as the tree's
  command does (:mod:`hugginggpt.cli.process`, where the tree has it). Each cold run is
  also timed as the command a user types, ``python -m hugginggpt run ...``: that row is
  the one the target is checked on.

With ``--evals``, both trees also plan the labelled sets (``hugginggpt eval
evals/labelled.jsonl`` and ``evals/own_words.jsonl``, offline planner) and the script
checks that every sample's plan, score and nearest bank example, and every metric, are
the same (a few minutes per tree).

Every cell is the median of 5 (``--repeat``). The verdict fails (exit code 1) unless, in
the ``after`` tree, ``--help`` takes under 0.5 s cold and the request as typed under
2.5 s cold, and both trees give the same answer. Run: ``python benchmarks/startup.py``.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))
from installed_tree import checkout, lay_out  # noqa: E402  (the layout the linters check, too)

BEFORE = "a8304c7"
REQUEST = 'Is "what a lovely morning" positive or negative?'
HELP_TARGET_S = 0.5
RUN_TARGET_S = 2.5
PHASES = ("imports", "plan", "select", "execute", "respond", "other")
STAMP = re.compile(r"^\s*([0-9.]+)s \[(plan|select|execute|respond)\]", re.M)

DRIVER = r"""
import json, os, sys, time, io, contextlib
started = time.perf_counter()
root = os.environ["BENCH_TREE"]
try:  # what the command itself does first and last, in a tree that has it
    from hugginggpt.cli.process import leave, start
except ImportError:
    try:
        from hugginggpt.cli.process import defer_package_inits as start, leave
    except ImportError:
        start, leave = (lambda: None), sys.exit
start()
import hugginggpt.cli
import hugginggpt.cli.run
assert hugginggpt.cli.__file__.startswith(root), hugginggpt.cli.__file__
imported = time.perf_counter()
from hugginggpt.cli import main
runs = []
for n in range(int(os.environ["BENCH_RUNS"])):
    err, out = io.StringIO(), io.StringIO()
    begin = time.perf_counter()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(out):
        code = main(["run", os.environ["BENCH_REQUEST"], "--planner", "offline",
                     "--workspace", f"ws{n}"])
    runs.append({"code": code, "s": time.perf_counter() - begin, "stderr": err.getvalue(),
                 "answer": out.getvalue().strip().splitlines()[0] if out.getvalue() else ""})
heavy = sorted(m for m in ("torch", "transformers", "sentence_transformers", "openai",
                           "langchain_openai", "numpy", "tokenizers") if m in sys.modules)
print("BENCH " + json.dumps({"imports": imported - started, "runs": runs, "heavy": heavy}),
      flush=True)
leave(0)
"""


class Tree:
    """One version of the code, laid out and with its own cache and working folders."""

    def __init__(self, name: str, source: Path, scratch: Path) -> None:
        self.name = name
        self.tree = scratch / name / "tree"
        self.work = scratch / name / "work"
        self.work.mkdir(parents=True)
        lay_out(self.tree, source)
        self.env = {k: v for k, v in os.environ.items() if k not in (
            "OPENAI_API_KEY", "HUGGINGGPT_LLM_API_KEY", "HUGGINGGPT_LLM", "HF_TOKEN",
            "PYTHONPATH")}
        self.env.update(PYTHONPATH=str(self.tree), HF_HUB_OFFLINE="1",
                        HUGGINGGPT_CACHE_DIR=str(scratch / name / "cache"),
                        # every run does the work: no result cache (the tree before has
                        # none, and a run served from it would skip what is timed)
                        HUGGINGGPT_CACHE="0",
                        BENCH_TREE=str(self.tree), BENCH_REQUEST=REQUEST,
                        PYTHONDONTWRITEBYTECODE="")

    def spawn(self, args: list[str], runs: int = 1) -> tuple[float, str]:
        """Wall time of a new interpreter running ``args``, and its stdout; its CPU time
        (user + system) goes to ``self.cpu`` (on a busy machine, wall time includes the
        waits for a core and CPU time does not)."""
        used = resource.getrusage(resource.RUSAGE_CHILDREN)
        begin = time.perf_counter()
        done = subprocess.run([sys.executable, *args], cwd=self.work, capture_output=True,
                              text=True, env={**self.env, "BENCH_RUNS": str(runs)},
                              timeout=900)
        wall = time.perf_counter() - begin
        now = resource.getrusage(resource.RUSAGE_CHILDREN)
        self.cpu = now.ru_utime + now.ru_stime - used.ru_utime - used.ru_stime
        if done.returncode != 0:
            raise RuntimeError(f"{self.name}: {args[:2]} failed:\n{done.stderr[-2000:]}")
        return wall, done.stdout

    def help_cold(self) -> tuple[float, float]:
        wall = self.spawn(["-m", "hugginggpt", "--help"])[0]
        return wall, self.cpu

    def help_warm(self, repeat: int) -> float:
        code = ("import time, contextlib, io\nfrom hugginggpt.cli import main\nt = []\n"
                f"for _ in range({repeat + 1}):\n"
                "    b = time.perf_counter()\n"
                "    with contextlib.redirect_stdout(io.StringIO()):\n"
                "        try: main(['--help'])\n"
                "        except SystemExit: pass\n"
                "    t.append(time.perf_counter() - b)\n"
                "import statistics; print(statistics.median(t[1:]))")
        return float(self.spawn(["-c", code])[1].strip().splitlines()[-1])

    def typed(self, n: int) -> tuple[float, float, str]:
        """The request as a user types it (``python -m hugginggpt run ...``): wall time,
        CPU time and the answer's first line."""
        wall, out = self.spawn(["-m", "hugginggpt", "run", REQUEST, "--planner", "offline",
                                "--workspace", f"typed{n}"])
        return wall, self.cpu, (out.strip().splitlines() or [""])[0]

    def request(self, runs: int) -> tuple[float, dict]:
        wall, out = self.spawn(["-c", DRIVER], runs)
        line = next(ln for ln in out.splitlines() if ln.startswith("BENCH "))
        return wall, json.loads(line[len("BENCH "):])


def stages(stderr: str) -> dict[str, float]:
    """Each stage's time: its first progress stamp to its last."""
    seen: dict[str, list[float]] = {}
    for stamp, stage in STAMP.findall(stderr):
        seen.setdefault(stage, []).append(float(stamp))
    return {stage: max(s) - min(s) for stage, s in seen.items()}


def phases(wall: float, report: dict, run: dict, cold: bool) -> dict[str, float]:
    row = dict.fromkeys(PHASES, 0.0)
    row.update(stages(run["stderr"]))
    if cold:
        row["imports"] = report["imports"]
    row["other"] = wall - sum(row[p] for p in PHASES if p != "other")
    row["wall"] = wall
    return row


def median_rows(rows: list[dict[str, float]]) -> dict[str, float]:
    return {k: statistics.median(r[k] for r in rows) for k in rows[0]}


def measure(tree: Tree, repeat: int) -> dict:
    print(f"  {tree.name}: --help ...", file=sys.stderr)
    help_runs = [tree.help_cold() for _ in range(repeat)]
    help_cold = statistics.median(wall for wall, _ in help_runs)
    help_cpu = statistics.median(cpu for _, cpu in help_runs)
    help_warm = tree.help_warm(repeat)
    print(f"  {tree.name}: first run (empty cache) ...", file=sys.stderr)
    first_wall, first = tree.request(1)
    cold_rows, answers, heavy = [], {first["runs"][0]["answer"]}, set(first["heavy"])
    typed: list[tuple[float, float]] = []
    for n in range(repeat):
        print(f"  {tree.name}: cold run {n + 1}/{repeat} ...", file=sys.stderr)
        wall, report = tree.request(1)
        cold_rows.append({**phases(wall, report, report["runs"][0], cold=True),
                          "cpu": tree.cpu})
        answers.add(report["runs"][0]["answer"])
        heavy |= set(report["heavy"])
        typed_wall, typed_cpu, answer = tree.typed(n)
        typed.append((typed_wall, typed_cpu))
        answers.add(answer)
    print(f"  {tree.name}: warm runs ...", file=sys.stderr)
    _, report = tree.request(repeat + 1)
    warm_rows = [{**phases(run["s"], report, run, cold=False), "cpu": float("nan")}
                 for run in report["runs"][1:]]
    answers |= {run["answer"] for run in report["runs"]}
    return {"help_cold": help_cold, "help_cpu": help_cpu, "help_warm": help_warm,
            "first": first_wall,
            "cold": median_rows(cold_rows), "warm": median_rows(warm_rows),
            "typed": statistics.median(w for w, _ in typed),
            "typed_cpu": statistics.median(c for _, c in typed),
            "answers": sorted(answers), "heavy": sorted(heavy)}


EVAL_SETS = ("labelled", "own_words")


def plans(tree: Tree, source: Path) -> dict[str, dict]:
    """The offline planner's report on each labelled set, from ``tree``."""
    reports = {}
    for name in EVAL_SETS:
        out = tree.work / f"eval-{name}.json"
        print(f"  {tree.name}: eval {name} ...", file=sys.stderr)
        tree.spawn(["-m", "hugginggpt", "eval", str(source / "evals" / f"{name}.jsonl"),
                    "--planner", "offline", "--output", str(out)])
        reports[name] = json.loads(out.read_text())
    return reports


def same_plans(before: dict[str, dict], after: dict[str, dict]) -> tuple[str, bool]:
    """A table of the two trees' plans on the labelled sets, and whether all agree."""
    lines = ["| set | samples | same plans | same metrics | max cosine difference |",
             "| --- | ---: | ---: | --- | ---: |"]
    ok = True
    for name in EVAL_SETS:
        a, b = before[name], after[name]
        pairs = list(zip(a["records"], b["records"], strict=True))
        same = sum(x["predicted"] == y["predicted"] and x["score"] == y["score"]
                   and x["nearest"]["example"] == y["nearest"]["example"] for x, y in pairs)
        metrics = all(a[k] == b[k] for k in ("overall", "by_shape", "by_size", "by_nearness"))
        drift = max(abs(x["nearest"]["similarity"] - y["nearest"]["similarity"])
                    for x, y in pairs)
        ok = ok and same == len(pairs) and metrics
        lines.append(f"| {name} | {len(pairs)} | {same} | {'yes' if metrics else 'NO'} | "
                     f"{drift:.1e} |")
    return "\n".join(lines), ok


def table(before: dict, after: dict, repeat: int) -> str:
    lines = [f"`hugginggpt --help` (median of {repeat}, seconds)", "",
             "| | before | after | speed-up |", "| --- | ---: | ---: | ---: |"]
    for key, label in (("help_cold", "cold (new process)"), ("help_cpu", "cold, CPU time"),
                       ("help_warm", "warm (in process)")):
        lines.append(f"| {label} | {before[key]:.3f} | {after[key]:.3f} | "
                     f"{before[key] / after[key]:.1f}x |")
    lines += ["", f"`hugginggpt run '{REQUEST}'`, offline (median of {repeat}, seconds)", "",
              "| phase | before cold | after cold | before warm | after warm |",
              "| --- | ---: | ---: | ---: | ---: |"]
    for phase in (*PHASES, "wall", "cpu"):
        cells = [before["cold"][phase], after["cold"][phase], before["warm"][phase],
                 after["warm"][phase]]
        name = {"wall": "**wall**", "cpu": "CPU time (user + system)"}.get(phase, phase)
        lines.append(f"| {name} | " + " | ".join(
            "-" if c != c else f"{c:.2f}" for c in cells) + " |")
    lines += [f"| **the command as typed** (`python -m hugginggpt run ...`), wall | "
              f"{before['typed']:.2f} | {after['typed']:.2f} | - | - |",
              f"| the command as typed, CPU time | {before['typed_cpu']:.2f} | "
              f"{after['typed_cpu']:.2f} | - | - |"]
    lines += ["", f"first run with an empty cache: before {before['first']:.2f} s, after "
              f"{after['first']:.2f} s (a tree's first run also writes its bytecode)",
              f"heavy modules loaded by the request: before {before['heavy'] or 'none'}, "
              f"after {after['heavy'] or 'none'}",
              "load average (1, 5, 15 min) at the end: "
              + ", ".join(f"{x:.2f}" for x in os.getloadavg()) + f" on {os.cpu_count()} CPUs"]
    return "\n".join(lines)


def verdict(before: dict, after: dict) -> list[str]:
    """The failures; empty when every target is met."""
    failures = []
    if after["help_cold"] >= HELP_TARGET_S:
        failures.append(f"--help cold {after['help_cold']:.2f} s >= {HELP_TARGET_S} s")
    if after["typed"] >= RUN_TARGET_S:
        failures.append(f"the request as typed, cold: {after['typed']:.2f} s >= "
                        f"{RUN_TARGET_S} s")
    if before["answers"] != after["answers"] or len(after["answers"]) != 1:
        failures.append(f"answers differ: {before['answers']} vs {after['answers']}")
    if {"torch", "openai"} & set(after["heavy"]):
        failures.append(f"the offline request loaded {after['heavy']}")
    return failures


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--before", default=BEFORE, help=f"the earlier commit ({BEFORE})")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--evals", action="store_true",
                        help="also check that both trees plan the labelled sets alike")
    args = parser.parse_args()
    compared = ("", True)
    with tempfile.TemporaryDirectory(prefix="startup-bench-") as scratch_name:
        scratch = Path(scratch_name)
        old = checkout(args.before, scratch / "before-src")
        trees = [Tree("before", old, scratch), Tree("after", ROOT, scratch)]
        print(f"timing {args.before} (before) and this checkout (after) ...", file=sys.stderr)
        before, after = (measure(t, args.repeat) for t in trees)
        if args.evals:
            compared = same_plans(plans(trees[0], old), plans(trees[1], ROOT))
    print(table(before, after, args.repeat))
    if args.evals:
        print("\nthe offline planner on the labelled sets, before and after\n\n" + compared[0])
    print(f"\nanswer: {after['answers'][0]!r}" if after["answers"] else "")
    failures = verdict(before, after)
    if not compared[1]:
        failures.append("the plans on the labelled sets differ")
    print(f"\nverdict: {'PASS' if not failures else 'FAIL'}: --help cold < {HELP_TARGET_S} s, "
          f"request cold < {RUN_TARGET_S} s, same answer, no torch or openai"
          + "".join(f"\n  - {f}" for f in failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
