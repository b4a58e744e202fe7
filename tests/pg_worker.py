"""A worker process for the PostgreSQL test: runs (or resumes) threads against one
database, concurrently, logging each subtask's start and end."""

from __future__ import annotations

import asyncio
import os
import sys
import time
from pathlib import Path

from hugginggpt import build_graph
from hugginggpt.graph.checkpoint import aopen_checkpointer
from hugginggpt.graph.context import Context
from hugginggpt.tools.experts import register_tool

LOG = Path(os.environ["PG_TEST_LOG"])
def plan_for(thread: str) -> list[dict]:
    """Three subtasks, named after the thread so the log tells them apart."""
    return [
        {"id": 0, "task": "summarization", "dep": [], "args": {"text": f"{thread}/a 0.4"}},
        {"id": 1, "task": "summarization", "dep": [0], "args": {"text": "<GENERATED>-0"}},
        {"id": 2, "task": "summarization", "dep": [], "args": {"text": f"{thread}/c 0.8"}},
    ]


def _logged(text: str) -> str:
    """Sleeps as long as the text's last word says."""
    seconds = float(text.split()[-1])
    with LOG.open("a") as log:
        log.write(f"start {os.getpid()} {text}\n")
    time.sleep(seconds)
    with LOG.open("a") as log:
        log.write(f"end {os.getpid()} {text}\n")
    return f"{text.split()[0]}->b 0.4"  # what subtask 1 gets: named, and 0.4 s long


register_tool(_logged, "summarization", backend="pgtest", models=["pgtest/slow"])


async def main(url: str, mode: str, threads: list[str], workspace: str) -> None:
    async with aopen_checkpointer(url) as saver:
        app = build_graph(checkpointer=saver)

        async def one(thread: str) -> None:
            config = {"configurable": {"thread_id": thread}}
            payload = None if mode == "resume" else {"request": f"thread {thread}"}
            # no result cache: a subtask that finished just before the kill, but whose
            # result was not yet checkpointed, would come from it on resume; the test
            # is about what the checkpoints alone let a resume skip
            context = Context(backend="pgtest", plan=plan_for(thread), workspace=workspace,
                              cache=False)
            await app.ainvoke(payload, config, context=context)
            with LOG.open("a") as log:
                log.write(f"done {os.getpid()} {thread}\n")

        await asyncio.gather(*(one(t) for t in threads))


if __name__ == "__main__":
    url, mode, workspace, *names = sys.argv[1:]
    asyncio.run(main(url, mode, names, workspace))
