"""``hugginggpt demo``: canned requests, offline, on inputs it makes itself."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from hugginggpt.demo import run_demo
from hugginggpt.graph.context import Context

__all__ = ["add_parser"]


def add_parser(sub: Any) -> None:
    demo = sub.add_parser("demo", help="run canned requests offline on sample inputs")
    demo.add_argument("--workspace", help="where inputs and outputs go")
    demo.add_argument("--verbose", "-v", action="store_true",
                      help="after each answer, each step in full (model and why, "
                           "candidates with their ranking scores)")
    demo.set_defaults(handler=_demo)


def _demo(args: argparse.Namespace) -> int:
    return run_demo(Path(args.workspace or Context().workspace).resolve(),
                    verbose=args.verbose)
