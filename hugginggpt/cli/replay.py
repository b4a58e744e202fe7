"""``hugginggpt replay --thread ID``: re-run a thread's latest run from its recorded LLM
replies (no LLM is called; what the run did without an LLM is recomputed), say which
part came from where, and where the outcome differs from the recording."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import uuid
from typing import Any, cast

from langchain_core.runnables import RunnableConfig

from hugginggpt.api import RECURSION_LIMIT
from hugginggpt.cli.common import EXIT_DIFFERENT, EXIT_OK, UsageError, add_common, saved_settings
from hugginggpt.graph.builder import build_graph
from hugginggpt.graph.checkpoint import aopen_checkpointer
from hugginggpt.replay import differences, replay_setup, replayed_parts
from hugginggpt.tools.llm.transcripts import ahydrate
from hugginggpt.tools.redact import redact

__all__ = ["add_parser"]


def add_parser(sub: Any) -> None:
    replay = sub.add_parser("replay", help="re-run a thread's latest run with its recorded "
                                           "LLM replies (no LLM is called)")
    add_common(replay)
    replay.set_defaults(handler=lambda args: asyncio.run(_replay(args)))


async def _replay(args: argparse.Namespace) -> int:
    _, url = saved_settings(args)
    source: RunnableConfig = {"configurable": {"thread_id": args.thread}}
    target_id = f"{args.thread}-replay-{uuid.uuid4().hex[:6]}"
    target: RunnableConfig = {"configurable": {"thread_id": target_id},
                              "recursion_limit": RECURSION_LIMIT}
    async with aopen_checkpointer(url) as saver:
        compiled = build_graph(checkpointer=saver)
        recorded = dict((await compiled.aget_state(source)).values)
        if not recorded:
            raise UsageError(f"thread {args.thread!r} has no checkpoint in {redact(url)}")
        # the replies, from the store beside the checkpoints (or inline in older records)
        recorded["llm_calls"] = await ahydrate(compiled.store, args.thread,
                                               list(recorded.get("llm_calls") or []))
        try:
            graph_input, context, recording = replay_setup(recorded)
        except ValueError as exc:
            raise UsageError(f"cannot replay thread {args.thread!r}: {exc}") from exc
        await compiled.ainvoke(cast(Any, graph_input), target, context=context)
        replayed = dict((await compiled.aget_state(target)).values)
    found = differences(recorded, replayed)
    parts = replayed_parts(replayed, recording)
    if args.json:
        print(json.dumps({"thread_id": args.thread, "replay_thread_id": target_id,
                          "same": not found, "differences": found, "parts": parts,
                          "divergences": recording.divergences,
                          "unused_recorded_calls": recording.unused,
                          "status": replayed.get("status"),
                          "response": replayed.get("response")}, indent=2,
                         ensure_ascii=False))
    else:
        print(replayed.get("response") or f"(no response; status {replayed.get('status')})")
    print(f"replayed thread {args.thread} as {target_id} with "
          f"{len(recording.calls)} recorded LLM call(s), no LLM called", file=sys.stderr)
    for role, came_from in parts.items():
        print(f"  {role}: {came_from}", file=sys.stderr)
    for note in [*recording.divergences, *found]:
        print(f"  differs: {note}", file=sys.stderr)
    if recording.unused:
        print(f"  {recording.unused} recorded call(s) were not asked for", file=sys.stderr)
    print("  same plan, selections and response as recorded" if not found else
          f"  {len(found)} difference(s) from the recording", file=sys.stderr)
    return EXIT_OK if not found else EXIT_DIFFERENT
