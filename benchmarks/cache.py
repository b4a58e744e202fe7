"""Result-cache benchmark: how much of a repeated request's execution the cache saves,
in one process and across two processes on one workspace, and that a changed input file
or argument misses it.

The request is a fixed 3-subtask chain on the ``lite`` backend, on real inputs, so every
subtask does real work on the CPU (no simulated sleep):

  0. automatic-speech-recognition of ``speech.wav`` (PocketSphinx, US English), a
     recording of a paragraph that eSpeak NG reads aloud in a set-up run first;
  1. summarization of its transcript (TextRank);
  2. text-to-speech of the summary (eSpeak NG), a WAV artifact.

No LLM is called (the plan is given, ``offline``). Each run's *execution time* is the
execute stage's wall time: from its ``stage start`` event to its update in the graph's
stream (planning, selection and the answer are not what the cache serves).

- In one process: the request twice on one compiled graph and one workspace, on two
  threads; the second run's execution time as a share of the first's.
- In two processes: this script started again for one run, twice, one after the
  other, on a fresh workspace (the first process fills the cache, the second reads it
  from ``<workspace>/cache.sqlite``); the same share.
- Misses: the same request with ``speech.wav`` replaced by another recording (subtask 0
  must miss, and so the rest: their inputs follow), and with subtask 2's argument
  changed (``"In short: <GENERATED>-1"``: subtasks 0 and 1 hit, 2 misses).

The verdict fails (exit status 1) when a second run's share is 5% or more, when a second
run has a subtask not from the cache, or when a changed input does not miss. The shares
vary with the machine's load; the first runs take a few seconds, most of it PocketSphinx.

Usage: ``python benchmarks/cache.py``.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from hugginggpt import build_graph
from hugginggpt.graph.context import Context

TARGET_SHARE = 0.05

PARAGRAPH = ("The weather service expects heavy rain over the northern hills tonight. "
             "Rivers may rise quickly, so people living near the water should move their "
             "cars to higher ground. The rain should stop by tomorrow afternoon, and the "
             "weekend will be dry and warm.")
OTHER = ("The city library opens a new reading room on Monday. It has quiet desks, fast "
         "internet and a corner for children. Members can book a desk online for up to "
         "four hours a day.")


def _plan(last: str = "<GENERATED>-1") -> list[dict[str, Any]]:
    return [
        {"id": 0, "task": "automatic-speech-recognition", "dep": [-1],
         "args": {"audio": "speech.wav"}},
        {"id": 1, "task": "summarization", "dep": [0], "args": {"text": "<GENERATED>-0"}},
        {"id": 2, "task": "text-to-speech", "dep": [1], "args": {"text": last}},
    ]


def _context(workspace: Path, plan: list[dict[str, Any]]) -> Context:
    return Context(workspace=str(workspace), backend="lite", plan=plan, offline=True,
                   planner="offline")


def _run(compiled: Any, workspace: Path, thread: str,
         plan: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    """One run: its execution time and, per subtask, its status and whether it was cached."""
    started = ended = None
    final: dict[str, Any] = {}
    for mode, chunk in compiled.stream(
            {"request": "transcribe speech.wav, summarise it and read the summary aloud"},
            {"configurable": {"thread_id": thread}}, context=_context(workspace, plan or _plan()),
            stream_mode=["custom", "updates"]):
        if mode == "custom" and chunk.get("stage") == "execute" and chunk.get("event") == "start":
            started = time.perf_counter()
        elif mode == "updates" and "execute" in chunk:
            ended = time.perf_counter()
            final = chunk["execute"]
    assert started is not None and ended is not None, "the run did not execute"
    results = final["results"]
    return {"execution_s": ended - started,
            "subtasks": {i: {"status": r.status, "cached": r.cached}
                         for i, r in sorted(results.items())}}


def _record(compiled: Any, workspace: Path, text: str, name: str) -> None:
    """``name`` in the workspace: eSpeak NG reading ``text``, from a run of its own."""
    plan = [{"id": 0, "task": "text-to-speech", "dep": [-1], "args": {"text": text}}]
    out = compiled.invoke({"request": "read this aloud"},
                          {"configurable": {"thread_id": f"record-{name}"}},
                          context=_context(workspace, plan))
    result = out["results"][0]
    assert result.status == "done", result.error
    shutil.copyfile(workspace / result.outputs["audio"]["path"], workspace / name)


def _child(workspace: Path, thread: str) -> dict[str, Any]:
    done = subprocess.run([sys.executable, __file__, "--one-run", str(workspace), thread],
                          capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"the child process failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def _all_cached(run: dict[str, Any]) -> bool:
    return all(s["status"] == "done" and s["cached"] for s in run["subtasks"].values())


def _none_cached(run: dict[str, Any]) -> bool:
    return all(s["status"] == "done" and not s["cached"] for s in run["subtasks"].values())


def _line(label: str, first: dict[str, Any], second: dict[str, Any]) -> tuple[str, bool]:
    share = second["execution_s"] / first["execution_s"]
    ok = share < TARGET_SHARE and _none_cached(first) and _all_cached(second)
    cached = sum(s["cached"] for s in second["subtasks"].values())
    return (f"{label:<22} {first['execution_s']:>9.3f} {second['execution_s']:>10.4f} "
            f"{share:>7.2%}  {cached}/3 from the cache", ok)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--one-run", nargs=2, metavar=("WORKSPACE", "THREAD"),
                        help=argparse.SUPPRESS)  # a child process: one run, as JSON
    args = parser.parse_args()
    compiled = build_graph()
    if args.one_run:
        print(json.dumps(_run(compiled, Path(args.one_run[0]), args.one_run[1])))
        return 0

    verdicts: list[tuple[str, bool]] = []
    with tempfile.TemporaryDirectory(prefix="hugginggpt-cache-bench-") as tmp:
        one, two = Path(tmp, "one-process"), Path(tmp, "two-processes")
        for workspace in (one, two):
            workspace.mkdir()
            _record(compiled, workspace, PARAGRAPH, "speech.wav")
            _record(compiled, workspace, OTHER, "other.wav")

        print("result cache: 3 subtasks on the lite backend (speech recognition -> "
              "summarization -> text-to-speech), real inputs")
        print(f"{'':<22} {'first s':>9} {'second s':>10} {'share':>7}")
        first, second = _run(compiled, one, "first"), _run(compiled, one, "second")
        verdicts.append(_line("one process", first, second))
        first, second = _child(two, "first"), _child(two, "second")
        verdicts.append(_line("two processes", first, second))
        for text, _ in verdicts:
            print(text)

        print("\nmisses (one process, after the runs above):")
        shutil.copyfile(one / "speech.wav", one / "speech-kept.wav")
        shutil.copyfile(one / "other.wav", one / "speech.wav")
        changed_file = _run(compiled, one, "changed-file")
        shown = {i: "cached" if s["cached"] else "ran" for i, s in changed_file["subtasks"].items()}
        ok = _none_cached(changed_file)
        print(f"  another speech.wav:        {shown}  in {changed_file['execution_s']:.3f} s")
        verdicts.append(("changed file", ok))
        shutil.copyfile(one / "speech-kept.wav", one / "speech.wav")
        changed_arg = _run(compiled, one, "changed-argument", _plan("In short: <GENERATED>-1"))
        shown = {i: "cached" if s["cached"] else "ran" for i, s in changed_arg["subtasks"].items()}
        subtasks = changed_arg["subtasks"]
        ok = subtasks[0]["cached"] and subtasks[1]["cached"] and not subtasks[2]["cached"]
        print(f"  subtask 2's text changed:  {shown}  in {changed_arg['execution_s']:.3f} s")
        verdicts.append(("changed argument", ok))

    print()
    print(f"{'PASS' if verdicts[0][1] else 'FAIL'} one process: second run under "
          f"{TARGET_SHARE:.0%} of the first, every subtask from the cache")
    print(f"{'PASS' if verdicts[1][1] else 'FAIL'} two processes: second run under "
          f"{TARGET_SHARE:.0%} of the first, every subtask from the cache")
    print(f"{'PASS' if verdicts[2][1] else 'FAIL'} a changed input file misses "
          "(and what depends on it)")
    print(f"{'PASS' if verdicts[3][1] else 'FAIL'} a changed argument misses (the subtasks "
          "before it hit)")
    return 0 if all(ok for _, ok in verdicts) else 1


if __name__ == "__main__":
    sys.exit(main())
