"""``hugginggpt ui``: the web UI (Gradio), embedded or against a LangGraph server.

Gradio is imported only when the command runs, so ``hugginggpt --help`` stays fast and
the other commands work without the ``ui`` extra.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from hugginggpt.cli.common import UsageError, checked
from hugginggpt.graph.context import Context, SettingsError
from hugginggpt.tools.env import env

__all__ = ["add_parser"]


def add_parser(sub: Any) -> None:
    ui = sub.add_parser(
        "ui", help="the web UI: upload files, watch the plan run, approve, revisit threads",
        description="Serve the web UI (Gradio) on this machine. By default the graph runs "
                    "in this process (offline with the default settings); with --server, "
                    "runs go to a LangGraph server.")
    ui.add_argument("--host", default="127.0.0.1",
                    help="address to listen on (default 127.0.0.1: this machine only)")
    ui.add_argument("--port", type=int, default=7860, help="port (default 7860)")
    ui.add_argument("--approval", choices=["never", "plan", "risky"],
                    help="the approval policy preselected for new runs (default: the "
                         "approval setting, HUGGINGGPT_APPROVAL, else never); the page "
                         "can change it per run")
    ui.add_argument("--server", metavar="URL",
                    help="run on this LangGraph server (langgraph dev / up) instead of "
                         "in this process")
    ui.add_argument("--api-key",
                    help="--server: the key sent as x-api-key (default: LANGGRAPH_API_KEY "
                         "from the environment)")
    ui.add_argument("--assistant", default="hugginggpt",
                    help="--server: the assistant (graph) to run (default hugginggpt)")
    ui.add_argument("--backend", help="embedded: auto|hybrid (default), local, lite, ...")
    ui.add_argument("--planner", choices=["auto", "llm", "offline"],
                    help="embedded: auto (default), llm or offline")
    ui.add_argument("--workspace",
                    help="folder for uploads, artifacts and checkpoints (default "
                         "hugginggpt-workspace)")
    ui.add_argument("--checkpoint-url",
                    help="embedded: sqlite:///FILE | postgresql://... (default: "
                         "<workspace>/checkpoints.sqlite)")
    ui.add_argument("--plugin", action="append", default=[], metavar="MODULE",
                    help="import MODULE first (it may register tools); repeatable")
    ui.set_defaults(handler=_ui)


def _ui(args: argparse.Namespace) -> int:
    given = {k: v for k, v in {"backend": args.backend, "planner": args.planner,
                               "workspace": args.workspace}.items() if v is not None}
    given["caller"] = "ui"
    try:
        context = checked(Context(**given))
    except SettingsError as exc:
        raise UsageError(str(exc)) from None
    try:
        from hugginggpt.ui.app import launch
        from hugginggpt.ui.runners import EmbeddedRunner, Runner, ServerRunner, UIError
    except ImportError as exc:
        raise UsageError(f"the web UI needs Gradio: pip install 'hugginggpt[ui]' ({exc})") \
            from None
    try:
        runner: Runner = (
            ServerRunner(args.server, api_key=args.api_key or env("LANGGRAPH_API_KEY"),
                         assistant=args.assistant, workspace=Path(context.workspace))
            if args.server else EmbeddedRunner(context, args.checkpoint_url))
    except UIError as exc:
        raise UsageError(str(exc)) from None
    launch(runner, host=args.host, port=args.port,
           approval=args.approval or context.approval)
    return 0
