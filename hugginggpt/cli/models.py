"""``hugginggpt models list | refresh``: the model catalog, with what can run now on each
backend and, where nothing can, why, and the chat LLMs that run in this process
(``--llm transformers:ID``) with their sizes; rebuilt from the Hub on request."""

from __future__ import annotations

import argparse
import json
import sys
import textwrap
from pathlib import Path
from typing import Any

from hugginggpt.cli import models_store
from hugginggpt.cli.common import EXIT_OK, UsageError
from hugginggpt.graph.context import Context
from hugginggpt.tools.experts.availability import NOT_OFFERED, model_cards, reasons
from hugginggpt.tools.experts.catalog import DEFAULT_CATALOG, ModelCard, load_catalog
from hugginggpt.tools.experts.hub import HubUnavailableError, refresh_catalog, write_catalog
from hugginggpt.tools.experts.local import DIFFUSERS_PIPELINES, LOCAL_LIBRARIES
from hugginggpt.tools.experts.local.hub_cache import is_cached
from hugginggpt.tools.experts.registry import run_settings
from hugginggpt.tools.experts.tasks import get_task_type, task_types

__all__ = ["add_parser", "unrunnable"]


def add_parser(sub: Any) -> None:
    models = sub.add_parser("models", help="the model catalog")
    models_sub = models.add_subparsers(dest="models_command", required=True)
    listing = models_sub.add_parser(
        "list", help="models, and per backend whether each can run now and if not why")
    listing.add_argument("--task", help="only this task type")
    listing.add_argument("--catalog", help="a catalog file (default: the shipped one)")
    listing.add_argument("--json", action="store_true")
    listing.add_argument("--wide", action="store_true",
                         help="one wide table, a line per model and backend (by default "
                              "the list fits 100 columns)")
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


def unrunnable(card: ModelCard) -> str | None:
    """Why no backend here could ever run ``card``'s model (None: one could): the local
    backend loads only some libraries, and hf-inference needs a provider that serves it."""
    loads = card.library_name in LOCAL_LIBRARIES and (
        card.library_name != "diffusers" or card.architecture in DIFFUSERS_PIPELINES)
    if card.library_name is None or loads or card.providers:
        return None
    what = (f"a {card.architecture or 'diffusers'} pipeline" if card.library_name == "diffusers"
            else f"a {card.library_name} model")
    return (f"{what}: the local backend cannot load it and no "
            f"inference provider serves it for {card.task}")


def _models(args: argparse.Namespace) -> int:
    context = Context(**({"catalog": args.catalog} if args.catalog else {}))
    catalog_path = Path(context.catalog or DEFAULT_CATALOG)
    if not catalog_path.is_file():
        raise UsageError(f"no catalog file at {catalog_path}")
    catalog = load_catalog(catalog_path)
    wanted = args.task if isinstance(args.task, list) else [args.task] if args.task else []
    found = {t: get_task_type(t) for t in wanted}
    if unknown := [t for t, task_type in found.items() if task_type is None]:
        raise UsageError(f"unknown task type(s): {', '.join(unknown)}; the task types are: "
                         + ", ".join(t.name for t in task_types()))
    task_names = [t.name for t in found.values() if t] or [t.name for t in task_types()]
    if args.models_command == "refresh":
        return _refresh(args, catalog_path, task_names)
    rows = []
    with run_settings(context.backend_settings()):  # the run's catalog, endpoints, provider
        for task in task_names:
            for card in model_cards(task, catalog):
                why = reasons(task, card.id, catalog)
                rows.append({**card.model_dump(), "why": why,
                             "available": {b: r is None for b, r in why.items()}})
    if args.json:
        print(json.dumps(rows, indent=2))
    else:
        print(_table(rows) if args.wide else _narrow(rows))
        if not wanted and catalog.llms:
            print(_llms(catalog.llms))
    return EXIT_OK


def _llms(cards: list[ModelCard]) -> str:
    """The chat LLMs that run in this process, with their sizes and licenses."""
    text = ["\nChat LLMs that run in this process (--llm transformers:ID), their weights "
            "downloaded\non consent as the experts' are:"]
    for card in cards:
        cached = "cached" if is_cached(card.id, card.revision) else (
            f"not cached (hugginggpt models download {card.id})")
        text.append(f"  {card.id} ({_size(card.size_mb)}, {card.license})")
        text.append(f"    {cached}")
        text.extend(textwrap.wrap(card.description, NARROW, initial_indent="    ",
                                  subsequent_indent="    "))
    return "\n".join(text)


NARROW = 100
"""Columns the default listing fits (``--wide`` for one line per model and backend)."""


def _size(size_mb: float | None) -> str:
    return "?" if size_mb is None else f"{size_mb:g} MB"


def _can_run(row: dict[str, Any]) -> dict[str, str]:
    """Per backend that offers the model: whether it can run now, and if not why."""
    where = ({b: r for b, r in row["why"].items() if r != NOT_OFFERED}
             or {"-": "no backend offers it"})
    return {backend: f"no: {why}" if why is not None else
            "yes (gated: your token must have accepted its terms)"
            if row["gated"] and backend != "lite" else "yes"
            for backend, why in where.items()}


def _footer(rows: list[dict[str, Any]]) -> str:
    runnable = sum(any(why is None for why in row["why"].values()) for row in rows)
    return (f"\n{runnable} of {len(rows)} models can run now. A model not cached "
            "runs locally once downloaded; hf-inference needs a token and a provider "
            "that serves the model (or --hf-endpoint MODEL=URL).")


def _narrow(rows: list[dict[str, Any]], width: int = NARROW) -> str:
    """The list in ``width`` columns: a heading per task, a line per model (its id
    whole, with library and size), under it the languages its card says it reads, and
    a line per backend, the reason wrapped (``--wide``: the table)."""
    text: list[str] = []
    task = None
    for row in rows:
        if row["task"] != task:
            task = row["task"]
            text.append(("\n" if text else "") + task)
        text.append(f"  {row['id']} ({row['library_name'] or '-'}, {_size(row['size_mb'])})")
        if reads := row.get("source_languages") or row.get("languages"):
            text.extend(textwrap.wrap(", ".join(reads), width, initial_indent=f"    {'reads':<13} ",
                                      subsequent_indent=" " * 18))
        for backend, said in _can_run(row).items():
            text.extend(textwrap.wrap(said, width, initial_indent=f"    {backend:<13} ",
                                      subsequent_indent=" " * 18, break_on_hyphens=False))
    text.append(textwrap.fill(_footer(rows).strip(), width))
    text[-1] = "\n" + text[-1]
    return "\n".join(text)


def _table(rows: list[dict[str, Any]]) -> str:
    """One line per model and backend that has it: whether it can run now, and if not
    why (not cached and how much there is to download, no token, no provider, ...)."""
    header = ("TASK", "MODEL", "LIBRARY", "SIZE", "BACKEND", "CAN RUN NOW")
    lines: list[tuple[str, ...]] = []
    for row in rows:
        first = (row["task"], row["id"], row["library_name"] or "-", _size(row["size_mb"]))
        for i, (backend, said) in enumerate(_can_run(row).items()):
            lead = first if i == 0 else ("",) * len(first)
            lines.append((*lead, backend, said))
    widths = [max(len(line[i]) for line in [header, *lines]) for i in range(len(header) - 1)]
    text = ["  ".join(cell.ljust(w) for cell, w in zip(line, widths, strict=False))
            + "  " + line[-1] for line in [header, *lines]]
    text.append(_footer(rows))
    return "\n".join(text)


def _refresh(args: argparse.Namespace, catalog_path: Path, tasks: list[str]) -> int:
    catalog = load_catalog(catalog_path)
    try:
        cards, dropped = refresh_catalog(catalog, tasks, per_task=args.per_task,
                                         endpoint=args.endpoint, unrunnable=unrunnable)
    except HubUnavailableError as exc:
        raise UsageError(str(exc)) from exc
    untouched = [c for t in task_types() if t.name not in tasks for c in catalog.for_task(t.name)]
    output = Path(args.output or catalog_path)
    write_catalog(cards + untouched, output)
    for card, why in dropped:
        print(f"dropped {card.task} {card.id}: {why}", file=sys.stderr)
    print(f"wrote {len(cards) + len(untouched)} models for {len(tasks)} task type(s) "
          f"to {output}", file=sys.stderr)
    return EXIT_OK
