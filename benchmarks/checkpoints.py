"""Checkpoint storage of one thread as it grows: bytes after 1, 5 and 20 turns, before
and after the LLM prompts and replies moved out of the graph state (issue 16, item 4).

Each turn is one request on the same thread, run as ``hugginggpt run`` runs it (the API,
SQLite checkpoints in the workspace) against the local OpenAI-compatible test server
(``tests/llm_server.py``) over real HTTP: the planner LLM plans two subtasks, the
experts are simulated (``dry-run``), the responder LLM answers. The size is what the
SQLite checkpointer holds for the thread: the bytes of every checkpoint blob and every
pending write (``checkpoints.checkpoint`` + ``checkpoints.metadata`` +
``writes.value``).

"Before" is measured, not modelled: the code of main's commit ``a8304c7`` (the last one
before this change) is checked out into a temporary folder, laid out as it installs
(``scripts/installed_tree.py``) and run first on ``PYTHONPATH`` in a subprocess, with
the same server script and the same requests. "After" is this tree, in another
subprocess. The side store's bytes (the prompts and replies, once per call) are shown
beside; they grow by the same amount every turn by construction.

The bytes of each checkpoint's ``llm_calls`` channel (and of the conversation,
``history`` and ``messages``) are counted apart, each channel's value serialized as the
checkpointer serializes it: the change is about the first, and the second says where
the rest of the growth comes from.

The conversation logs (``history``, ``messages``, ``approvals``) are LangGraph
``DeltaChannel`` channels since the second half of the change: a checkpoint stores the writes
of its own step, not the whole log again, so their bytes sit in ``writes``.

Verdict: the growth per turn must be flat, not rising, both for all the checkpoint bytes
and for the LLM call records: the bytes added per turn over the last five turns at most
1.5x those over turns 2-5. It fails (exit code 1) otherwise.

    python benchmarks/checkpoints.py            # 20 turns, both sides
    python benchmarks/checkpoints.py --turns 5  # quicker
"""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BEFORE = "a8304c7"
SHOWN = (1, 5, 20)
RISE_LIMIT = 1.5

PLAN = {"subtasks": [
    {"id": 0, "task": "translation", "dep": [], "args": {"text": "hello", "tgt_lang": "fr"}},
    {"id": 1, "task": "summarization", "dep": [0], "args": {"text": "<GENERATED>-0"}},
]}


def thread_bytes(path: Path, thread: str) -> dict[str, int]:
    """What the SQLite checkpointer (and the store beside it, when there is one) holds
    for ``thread``: all of it, and the part that is the ``llm_calls`` channel and the
    conversation (``history`` and ``messages``), each channel's value serialized as the
    checkpointer serializes it."""
    from hugginggpt.graph.checkpoint import serializer

    serde = serializer()
    sizes = {"checkpoint_bytes": 0, "checkpoints": 0, "llm_calls_bytes": 0,
             "conversation_bytes": 0, "side_store_bytes": 0}
    with sqlite3.connect(path) as conn:
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master")}
        for kind, blob, metadata in conn.execute(
                "SELECT type, checkpoint, metadata FROM checkpoints WHERE thread_id = ?",
                (thread,)):
            sizes["checkpoint_bytes"] += len(blob) + len(metadata or b"")
            sizes["checkpoints"] += 1
            values = serde.loads_typed((kind, blob)).get("channel_values", {})
            for channel, part in (("llm_calls", "llm_calls_bytes"),
                                  ("history", "conversation_bytes"),
                                  ("messages", "conversation_bytes")):
                if channel in values:
                    sizes[part] += len(serde.dumps_typed(values[channel])[1])
        for channel, value in conn.execute(
                "SELECT channel, value FROM writes WHERE thread_id = ?", (thread,)):
            sizes["checkpoint_bytes"] += len(value)
            if channel == "llm_calls":
                sizes["llm_calls_bytes"] += len(value)
            elif channel in ("history", "messages"):
                sizes["conversation_bytes"] += len(value)
        if "store" in tables:
            sizes["side_store_bytes"] = conn.execute(
                "SELECT COALESCE(SUM(LENGTH(value)), 0) FROM store WHERE prefix = ?",
                (f"hugginggpt.llm_calls.{thread}",)).fetchone()[0]
    return sizes


def measure(turns: int, workspace: Path) -> list[dict[str, int]]:
    """Run ``turns`` requests on one thread with the ``hugginggpt`` found on the path;
    the thread's bytes after each."""
    sys.path.insert(0, str(ROOT / "tests"))
    from llm_server import ScriptedLLMServer

    import hugginggpt

    server = ScriptedLLMServer().start()
    url = f"sqlite:///{workspace}/checkpoints.sqlite"
    sizes = []
    try:
        for turn in range(turns):
            server.script("planner", {"tool_args": PLAN, "tokens": 40})
            server.script("responder", {"content": f"Turn {turn}: bonjour, summarised. "
                                        + "The translation says hello in French. " * 8})
            result = hugginggpt.run(
                f"Translate 'hello' into French and summarise it (turn {turn})",
                thread_id="bench", checkpoint_url=url, llm="scripted",
                llm_base_url=server.url, backend="dry-run", dry_run_latency_scale=0.01,
                workspace=str(workspace), planner="llm")
            assert result.status == "completed", (result.status, result.abort_reason)
            sizes.append(thread_bytes(workspace / "checkpoints.sqlite", "bench"))
    finally:
        server.stop()
    return sizes


def _side(turns: int, pythonpath: str | None) -> list[dict[str, int]]:
    with tempfile.TemporaryDirectory() as folder:
        env = {**os.environ, "HUGGINGGPT_WORKSPACE": folder}
        if pythonpath:
            env["PYTHONPATH"] = pythonpath
        out = subprocess.run(
            [sys.executable, str(Path(__file__).resolve()), "--measure", str(turns),
             "--workspace", folder], env=env, cwd=folder, check=True,
            capture_output=True, text=True)
        return json.loads(out.stdout.strip().splitlines()[-1])


def _before_tree(folder: Path) -> Path:
    """Main's code before the change, laid out as it installs."""
    sys.path.insert(0, str(ROOT / "scripts"))
    from installed_tree import checkout, lay_out

    lay_out(folder / "tree", checkout(BEFORE, folder / "source"))
    return folder / "tree"


def _growth(sizes: list[dict[str, int]], key: str, first: int, last: int) -> float:
    """Bytes of ``key`` added per turn over turns ``first``..``last`` (1-based)."""
    start = sizes[first - 2][key] if first > 1 else 0
    return (sizes[last - 1][key] - start) / (last - first + 1)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--turns", type=int, default=20)
    parser.add_argument("--measure", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--workspace", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.measure:
        print(json.dumps(measure(args.measure, Path(args.workspace))))
        return 0
    if args.turns < 6:
        parser.error("--turns must be at least 6 (early and late turns are compared)")

    with tempfile.TemporaryDirectory() as old:
        before = _side(args.turns, str(_before_tree(Path(old))))
    after = _side(args.turns, None)
    shown = [n for n in SHOWN if n <= args.turns]
    print(f"Checkpoint bytes of one thread (SQLite), after each of {args.turns} turns; each "
          "turn: planner LLM, 2 dry-run subtasks, responder LLM")
    print()
    print(f"| turns | checkpoints | before ({BEFORE}): all | of it llm_calls | after: all "
          "| of it llm_calls | of it conversation | side store (after) |")
    print("| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for n in shown:
        b, a = before[n - 1], after[n - 1]
        print(f"| {n} | {a['checkpoints']} | {b['checkpoint_bytes']:,} | "
              f"{b['llm_calls_bytes']:,} | {a['checkpoint_bytes']:,} | "
              f"{a['llm_calls_bytes']:,} | {a['conversation_bytes']:,} | "
              f"{a['side_store_bytes']:,} |")
    early, late = (2, 5), (args.turns - 4, args.turns)
    print()
    print("| bytes added per turn | before: all | before: llm_calls | after: all | "
          "after: llm_calls | after: conversation |")
    print("| --- | ---: | ---: | ---: | ---: | ---: |")
    keys = ("checkpoint_bytes", "llm_calls_bytes")
    rows = {}
    for name, (first, last) in (("early", early), ("late", late)):
        rows[name] = [_growth(before, k, first, last) for k in keys] + [
            _growth(after, k, first, last) for k in (*keys, "conversation_bytes")]
        print(f"| turns {first}-{last} | " + " | ".join(f"{v:,.0f}" for v in rows[name]) + " |")
    rise = [late / early if early else float("inf")
            for early, late in zip(rows["early"], rows["late"], strict=True)]
    print("| late / early | " + " | ".join(f"{r:.2f}x" for r in rise) + " |")
    ok = rise[2] <= RISE_LIMIT and rise[3] <= RISE_LIMIT
    print()
    print(f"verdict: {'PASS' if ok else 'FAIL'}: a late turn now adds {rise[2]:.2f}x as many "
          f"checkpoint bytes as an early one, and {rise[3]:.2f}x for the LLM call records "
          f"(limit {RISE_LIMIT}x each; before the change {rise[0]:.2f}x and {rise[1]:.2f}x); "
          f"the thread holds {after[-1]['checkpoint_bytes'] / before[-1]['checkpoint_bytes']:.0%}"
          f" of its bytes before the change after {args.turns} turns")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
