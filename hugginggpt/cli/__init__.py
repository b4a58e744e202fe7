"""The ``hugginggpt`` command, one module per command.

    hugginggpt run "REQUEST" [--file PATH ...] [--thread ID] [--json] [--dry-run --plan FILE]
    hugginggpt resume --thread ID [--approve | --reject REASON | --plan FILE] [--json]
    hugginggpt trace --thread ID [--full | --json]
    hugginggpt replay --thread ID [--json]
    hugginggpt eval DATASET.jsonl [--planner offline|llm]
    hugginggpt models list | refresh
    hugginggpt demo
    hugginggpt mcp [--backend B] [--task T]   (the experts as MCP tools on stdio)
    hugginggpt ui [--port P] [--server URL]   (the web UI)

Progress goes to stderr; the answer (or, with ``--json``, one JSON document) to stdout.
The settings of a run are saved beside its checkpoints
(``<workspace>/threads/<thread>.json``, never secrets) so that ``resume`` continues
with the same ones, from any folder (a per-user index points at them). A new command
is a module here with an ``add_parser(sub)`` that sets its ``handler``, listed in
:data:`COMMANDS`.
"""

from __future__ import annotations

import argparse
import sys

from hugginggpt.cli import demo, evaluate, mcp_server, models, replay, resume, run, trace, ui
from hugginggpt.cli.common import (
    EXIT_INTERRUPTED,
    EXIT_USAGE,
    UsageError,
    exit_codes_help,
    load_plugins,
)
from hugginggpt.graph.context import SettingsError

__all__ = ["main", "COMMANDS"]

COMMANDS = (run, resume, trace, replay, evaluate, demo, models, mcp_server, ui)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="hugginggpt",
        description="HuggingGPT on LangGraph: an LLM plans, Hugging Face experts execute.",
        epilog=exit_codes_help(), formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sub = parser.add_subparsers(dest="command", required=True)
    for command in COMMANDS:
        command.add_parser(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run one command; returns its exit code (see :data:`~hugginggpt.cli.common.EXIT_CODES`:
    one per outcome of a run; 2 for bad input)."""
    args = _parser().parse_args(argv)
    try:
        load_plugins(getattr(args, "plugin", []))
        return int(args.handler(args))
    except (UsageError, SettingsError) as exc:  # a setting from the environment, say
        print(f"hugginggpt: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("hugginggpt: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
