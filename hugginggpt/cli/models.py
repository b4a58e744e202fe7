"""``hugginggpt models list | refresh``: the model catalog, with each model's
availability per backend; rebuilt from the Hub on request."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from hugginggpt.cli import models_store
from hugginggpt.cli.common import EXIT_OK, UsageError
from hugginggpt.graph.context import Context
from hugginggpt.tools.experts.availability import availability, model_cards
from hugginggpt.tools.experts.catalog import DEFAULT_CATALOG, load_catalog
from hugginggpt.tools.experts.hub import HubUnavailableError, refresh_catalog, write_catalog
from hugginggpt.tools.experts.tasks import get_task_type, task_types

__all__ = ["add_parser"]


def add_parser(sub: Any) -> None:
    models = sub.add_parser("models", help="the model catalog")
    models_sub = models.add_subparsers(dest="models_command", required=True)
    listing = models_sub.add_parser("list", help="models with their availability per backend")
    listing.add_argument("--task", help="only this task type")
    listing.add_argument("--catalog", help="a catalog file (default: the shipped one)")
    listing.add_argument("--json", action="store_true")
    listing.add_argument("--plugin", action="append", default=[], metavar="MODULE")
    refresh = models_sub.add_parser("refresh", help="rebuild the catalog from the Hub")
    refresh.add_argument("--task", action="append", default=[], help="only these task types")
    refresh.add_argument("--per-task", type=int, default=5, help="models per task type")
    refresh.add_argument("--catalog", help="the catalog to start from (default: shipped)")
    refresh.add_argument("--output", help="where to write (default: the --catalog file)")
    refresh.add_argument("--endpoint", help="Hub URL (default: huggingface.co or HF_ENDPOINT)")
    refresh.add_argument("--plugin", action="append", default=[], metavar="MODULE")
    models.set_defaults(handler=_models)
    models_store.add_parsers(models_sub)  # download, cached, remove


def _models(args: argparse.Namespace) -> int:
    catalog_path = Path(args.catalog or Context().catalog or DEFAULT_CATALOG)
    if not catalog_path.is_file():
        raise UsageError(f"no catalog file at {catalog_path}")
    catalog = load_catalog(catalog_path)
    wanted = args.task if isinstance(args.task, list) else [args.task] if args.task else []
    found = {t: get_task_type(t) for t in wanted}
    unknown = [t for t, task_type in found.items() if task_type is None]
    if unknown:
        raise UsageError(f"unknown task type(s): {', '.join(unknown)}")
    task_names = [t.name for t in found.values() if t] or [t.name for t in task_types()]
    if args.models_command == "refresh":
        tasks = task_names
        try:
            cards = refresh_catalog(catalog, tasks, per_task=args.per_task,
                                    endpoint=args.endpoint)
        except HubUnavailableError as exc:
            raise UsageError(str(exc)) from exc
        untouched = [c for t in task_types() if t.name not in tasks
                     for c in catalog.for_task(t.name)]
        output = Path(args.output or catalog_path)
        write_catalog(cards + untouched, output)
        print(f"wrote {len(cards) + len(untouched)} models for {len(tasks)} task type(s) "
              f"to {output}", file=sys.stderr)
        return EXIT_OK

    rows = [
        {**card.model_dump(), "available": availability(task, card.id)}
        for task in task_names for card in model_cards(task, catalog)
    ]
    if args.json:
        print(json.dumps(rows, indent=2))
        return EXIT_OK
    for row in rows:
        where = ", ".join(f"{b}: {'yes' if ok else 'no'}" for b, ok in row["available"].items())
        print(f"{row['task']:<28} {row['id']:<55} downloads={row['downloads']:<10} "
              f"latency={row['expected_latency_s']}s  [{where or 'no backend'}]")
    return EXIT_OK
