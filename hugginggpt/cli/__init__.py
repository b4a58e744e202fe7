"""The ``hugginggpt`` command, one module per command.

    hugginggpt run "REQUEST" [--file PATH ...] [--thread ID] [--json] [--dry-run --plan FILE]
    hugginggpt resume --thread ID [--approve | --reject REASON | --plan FILE] [--json]
    hugginggpt trace --thread ID [--full | --json]
    hugginggpt replay --thread ID [--json]
    hugginggpt eval DATASET.jsonl [--planner offline|llm] [--llm A --llm B ...] | --answers FILE
    hugginggpt models list | refresh
    hugginggpt experts serve --local | --address ADDR [--config FILE]
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
import importlib
import os
import signal
import sys
from types import ModuleType
from typing import NoReturn

from hugginggpt.cli.exits import EXIT_INTERRUPTED, EXIT_USAGE, UsageError, exit_codes_help
from hugginggpt.cli.interrupts import interrupted_line, leave_now, stop_running

__all__ = ["main", "console", "COMMANDS"]

COMMANDS: dict[str, tuple[str, str]] = {
    "run": ("run", "run a request through plan, select, execute, respond"),
    "resume": ("resume", "continue a thread from its last checkpoint"),
    "trace": ("trace", "show a thread's runs: LLM calls, tool calls, why each stopped"),
    "replay": ("replay", "re-run a thread's latest run with its recorded LLM replies (no "
                         "LLM is called)"),
    "eval": ("evaluate", "measure the planner, or (--answers) the answers, on a labelled set"),
    "demo": ("demo", "run canned requests offline on sample inputs"),
    "models": ("models", "the model catalog"),
    "experts": ("experts", "the shared expert tier on Ray Serve"),
    "mcp": ("mcp_server", "serve the experts as MCP tools on stdin/stdout"),
    "ui": ("ui", "the web UI: upload files, watch the plan run, approve, revisit threads"),
}
"""Each command's name -> its module in this package and its line in ``--help``.

A command's module is imported only when that command runs (or asks for its own help):
the modules import the graph, LangChain and the experts, about 2.5 s, which
``hugginggpt --help`` and a mistyped command need not pay. ``tests/test_cli.py`` checks
that each line here is the one its module's parser says."""


def command_module(name: str) -> ModuleType:
    """The module of the command ``name`` (a key of :data:`COMMANDS`)."""
    return importlib.import_module(f"hugginggpt.cli.{COMMANDS[name][0]}")


def _parser(argv: list[str] | None = None) -> argparse.ArgumentParser:
    """The parser: every command's in full, or, given the arguments, only the chosen
    command's (the others by name and help line, which is all that a top-level
    ``--help`` or a usage error shows)."""
    parser = argparse.ArgumentParser(
        prog="hugginggpt",
        description="HuggingGPT on LangGraph: an LLM plans, Hugging Face experts execute.",
        epilog=exit_codes_help(), formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sub = parser.add_subparsers(dest="command", required=True)
    chosen = next((a for a in argv if not a.startswith("-")), None) if argv is not None else None
    for name, (_, help_line) in COMMANDS.items():
        if argv is None or name == chosen:
            command_module(name).add_parser(sub)
        else:
            sub.add_parser(name, help=help_line)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run one command; returns its exit code (see :data:`~hugginggpt.cli.exits.EXIT_CODES`:
    one per outcome of a run; 2 for bad input)."""
    argv = sys.argv[1:] if argv is None else argv
    args = _parser(argv).parse_args(argv)
    from hugginggpt.cli.process import imported  # after console()'s Ctrl-C handler

    imported()  # the command's modules are loaded (the collector back on, if held off)
    if signal.getsignal(signal.SIGINT) is leave_now:  # the command runs: Ctrl-C stops it
        signal.signal(signal.SIGINT, stop_running)
    # a command that parsed has its module loaded, which loads these
    from hugginggpt.cli.common import load_plugins
    from hugginggpt.graph.context import SettingsError
    from hugginggpt.tools.errors import NotInstalledError

    try:
        load_plugins(getattr(args, "plugin", []))
        return int(args.handler(args))
    # a setting from the environment, say, or what a command needs of an extra
    except (UsageError, SettingsError, NotInstalledError) as exc:
        print(f"hugginggpt: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print(interrupted_line(), file=sys.stderr)
        return EXIT_INTERRUPTED


def console() -> NoReturn:
    """The installed ``hugginggpt`` command and ``python -m hugginggpt``: :func:`main` in
    a process of its own, started lean (no garbage collection while the command's
    modules import) and left without the exit's clean-up work
    (:mod:`hugginggpt.cli.process`)."""
    signal.signal(signal.SIGINT, leave_now)  # until the command runs (.interrupts)
    from hugginggpt.cli.process import leave, start

    start()
    code = main()
    signal.signal(signal.SIGINT, leave_now)
    if code == EXIT_INTERRUPTED:  # what was saved is saved; a call still waiting (an LLM
        sys.stdout.flush()        # that does not answer) would hold the exit until it
        sys.stderr.flush()        # timed out
        os._exit(code)
    leave(code)

