"""``hugginggpt resume --thread ID``: continue a thread, or answer its pending approval."""

from __future__ import annotations

import argparse
import asyncio
from typing import Any

from langgraph.types import Command

from hugginggpt.cli.common import add_common, read_plan, saved_settings, who
from hugginggpt.cli.session import (
    add_download,
    add_verbose,
    asking_downloads,
    llm_weights,
    run_session,
)

__all__ = ["add_parser"]


def add_parser(sub: Any) -> None:
    resume = sub.add_parser("resume", help="continue a thread from its last checkpoint")
    decision = resume.add_mutually_exclusive_group()
    decision.add_argument("--approve", action="store_true", help="approve the pending plan")
    decision.add_argument("--reject", metavar="REASON", help="reject it, with a reason")
    decision.add_argument("--plan", metavar="FILE.json", help="replace it with this plan")
    add_download(resume)
    add_verbose(resume)
    add_common(resume)
    resume.set_defaults(handler=_resume)


def _resume(args: argparse.Namespace) -> int:
    context, url = saved_settings(args, to_run=True)
    context = context.replace(caller="cli")  # whoever started the thread
    if args.download:
        context = context.replace(download=args.download)
    context = asking_downloads(context, args.json)
    llm_weights(context, args.json)
    user = who()
    answer: dict[str, Any] | None = (
        {"action": "approve", "who": user} if args.approve else
        {"action": "reject", "who": user, "reason": args.reject} if args.reject else
        {"action": "edit", "who": user, "plan": read_plan(args.plan)} if args.plan else None
    )
    return asyncio.run(run_session(Command(resume=answer) if answer else None,
                                   args.thread, context, url, args.json, args.verbose))
