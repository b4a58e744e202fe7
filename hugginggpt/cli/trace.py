"""``hugginggpt trace --thread ID``: every run on a thread, its LLM and tool calls, and
why it stopped."""

from __future__ import annotations

import argparse
import asyncio
import json
from typing import Any

from hugginggpt.cli.common import EXIT_OK, UsageError, add_common, saved_settings
from hugginggpt.graph.builder import build_graph
from hugginggpt.graph.checkpoint import aopen_checkpointer
from hugginggpt.tools.redact import redact
from hugginggpt.trace import render, thread_runs

__all__ = ["add_parser"]


def add_parser(sub: Any) -> None:
    trace = sub.add_parser("trace", help="show a thread's runs: LLM calls, tool calls, "
                                         "why each stopped")
    trace.add_argument("--full", action="store_true", help="whole prompts and replies")
    add_common(trace)
    trace.set_defaults(handler=lambda args: asyncio.run(_trace(args)))


async def _trace(args: argparse.Namespace) -> int:
    _, url = saved_settings(args)
    async with aopen_checkpointer(url) as saver:
        compiled = build_graph(checkpointer=saver)
        runs = await thread_runs(compiled, {"configurable": {"thread_id": args.thread}})
    if not runs:
        raise UsageError(f"thread {args.thread!r} has no checkpoint in {redact(url)}")
    if args.json:
        print(json.dumps({"thread_id": args.thread, "runs": runs}, indent=2,
                         ensure_ascii=False, default=str))
    else:
        print(render(args.thread, runs, full=args.full))
    return EXIT_OK
