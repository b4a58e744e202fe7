"""Does the command's start-up machinery still pay for itself on the light core?

:mod:`hugginggpt.cli.process` does two things for the ``hugginggpt`` process: it defers
two package initialisers (``langsmith.types``, ``langgraph_sdk``) and it holds the garbage
collector off while the command imports, then freezes (``gc.freeze``) at the end of the
imports and at exit. Both were measured on the full install, where torch and
transformers were around; this measures each again, alone and together, in any
virtualenv (``--python``: a core-only one, ``pip install .``, is the point).

Four ways to start the same command, each a new process, interleaved so that a change
of the machine's load hits them alike: as shipped (``console()``), with neither
(``main()``), with only the deferred initialisers, with only the collector's part. Three
commands: ``--help``; a request with an LLM (a local OpenAI-compatible test server,
``tests/llm_server.py``) and ``--backend llm``; the offline request of
``benchmarks/startup.py`` (it fails on a core-only install, which has no engine for it,
and is timed all the same). The cells are medians of ``--repeat`` runs: wall time and
CPU time (user + system; less sensitive to other processes than wall time).

Verdict: each part pays for itself when, on each request, the command with it alone
takes less CPU time than the command with neither. Run:
``python benchmarks/startup_machinery.py --python /path/to/core-venv/bin/python``.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
from llm_server import ScriptedLLMServer  # noqa: E402  (the tests' LLM server)

TEXT = "The cat sat on the mat. It was warm. The dog barked at the cat all day long."
OFFLINE = 'Is "what a lovely morning" positive or negative?'
WAYS = {
    "as shipped": "from hugginggpt.cli import console; console()",
    "neither": "import sys; from hugginggpt.cli import main; sys.exit(main())",
    "deferred inits only": (
        "import sys; from hugginggpt.cli.process import defer_package_inits; "
        "defer_package_inits(); from hugginggpt.cli import main; sys.exit(main())"),
    "collector only": (
        "import gc; import hugginggpt.cli.process as p; gc.disable(); "
        "p._collector_held = True; from hugginggpt.cli import main; p.leave(main())"),
}
COMMANDS = {
    "--help": ["--help"],
    "run --backend llm (test LLM)": ["run", f"Summarize: {TEXT}", "--backend", "llm"],
    "run offline": ["run", OFFLINE, "--planner", "offline"],
}


def timed(python: str, code: str, args: list[str], cwd: Path,
          env: dict[str, str]) -> tuple[float, float]:
    """Wall and CPU time of one new process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    begin = time.perf_counter()
    subprocess.run([python, "-c", code, *args], cwd=cwd, env=env, capture_output=True,
                   timeout=600, check=False)
    wall = time.perf_counter() - begin
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--python", default=sys.executable,
                        help="the interpreter of the virtualenv to measure")
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()
    server = ScriptedLLMServer().start()
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("HUGGINGGPT_", "OPENAI_", "PYTHONPATH"))}
    env.update(HF_HUB_OFFLINE="1", HUGGINGGPT_CACHE="0", HUGGINGGPT_LLM="scripted",
               HUGGINGGPT_LLM_BASE_URL=server.url, HUGGINGGPT_LLM_API_KEY="test")
    cells: dict[tuple[str, str], list[tuple[float, float]]] = {}
    with tempfile.TemporaryDirectory(prefix="startup-machinery-") as work:
        for n in range(args.repeat):
            print(f"round {n + 1}/{args.repeat} ...", file=sys.stderr)
            for command, argv in COMMANDS.items():
                for way, code in WAYS.items():
                    if command.startswith("run --backend llm"):
                        server.script("planner", {"tool_args": {"subtasks": [
                            {"id": 0, "task": "summarization", "dep": [],
                             "args": {"text": TEXT}}]}})
                        server.script("expert", {"content": "A cat sat."})
                        server.script("responder", {"content": "A cat sat."})
                    extra = ["--workspace", "ws"] if argv[0] == "run" else []
                    cells.setdefault((command, way), []).append(
                        timed(args.python, code, argv + extra, Path(work), env))
    server.stop()
    print(f"interpreter: {args.python}\n\n| command | start | wall (s) | CPU (s) |\n"
          "| --- | --- | ---: | ---: |")
    cpu = {}
    for (command, way), runs in cells.items():
        cpu[command, way] = statistics.median(c for _, c in runs)
        print(f"| {command} | {way} | {statistics.median(w for w, _ in runs):.3f} | "
              f"{cpu[command, way]:.3f} |")
    print(f"\nmedian of {args.repeat}; load average at the end: "
          + ", ".join(f"{x:.2f}" for x in os.getloadavg()) + f" on {os.cpu_count()} CPUs")
    failures = [f"{command}: {way} {cpu[command, way]:.2f} s >= neither "
                f"{cpu[command, 'neither']:.2f} s"
                for command in COMMANDS if command != "--help"
                for way in ("deferred inits only", "collector only")
                if cpu[command, way] >= cpu[command, "neither"]]
    print(f"\nverdict: {'PASS' if not failures else 'FAIL'}: each part alone takes less "
          "CPU time than neither, on each request" + "".join(f"\n  - {f}" for f in failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
