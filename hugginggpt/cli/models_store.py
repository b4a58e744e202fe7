"""``hugginggpt models download | cached | remove``: the local backend's models in the
Hugging Face cache.

``download MODEL`` (or ``--task T``: the catalog's most downloaded model for it) shows
what the Hub says the download costs (size, files, license, gating), asks on a terminal
(``--yes`` answers for the user) and fetches only what the loader needs, with a progress
bar; an unfinished earlier download resumes. A model that runs its own code
(``trust_remote_code``) is downloaded only when named, never picked by ``--task``.
``cached`` lists the cache's models with their sizes; ``remove MODEL`` deletes one.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
from pathlib import Path
from typing import Any

from hugginggpt.cli.common import EXIT_FAILED, EXIT_OK, UsageError
from hugginggpt.graph.context import Context
from hugginggpt.progress import Progress
from hugginggpt.tools.errors import LimitExceededError, TransientToolError
from hugginggpt.tools.experts.catalog import DEFAULT_CATALOG, ModelCard, load_catalog
from hugginggpt.tools.experts.local.download import DownloadError, download, plan_download
from hugginggpt.tools.experts.local.hub_cache import card_for, is_cached, is_hub_id
from hugginggpt.tools.experts.tasks import get_task_type

__all__ = ["add_parsers"]


def add_parsers(models_sub: Any) -> None:
    """Add ``download``, ``cached`` and ``remove`` under ``hugginggpt models``."""
    fetch = models_sub.add_parser(
        "download", help="download a model for the local backend into the Hugging Face cache")
    fetch.add_argument("model", nargs="?", help="a Hub model id")
    fetch.add_argument("--task", help="the catalog's most downloaded model for this task type")
    fetch.add_argument("--yes", action="store_true", help="download without asking")
    fetch.add_argument("--catalog", help="a catalog file (default: the shipped one)")
    fetch.set_defaults(handler=_download)
    cached = models_sub.add_parser("cached", help="models in the Hugging Face cache, sizes")
    cached.add_argument("--json", action="store_true")
    cached.set_defaults(handler=_cached)
    remove = models_sub.add_parser("remove", help="delete a model from the Hugging Face cache")
    remove.add_argument("model")
    remove.add_argument("--yes", action="store_true", help="remove without asking")
    remove.set_defaults(handler=_remove)


def _catalog_path(given: str | None) -> str:
    path = Path(given or Context().catalog or DEFAULT_CATALOG)
    if not path.is_file():
        raise UsageError(f"no catalog file at {path}")
    return str(path)


def _pick(args: argparse.Namespace, catalog: str) -> tuple[str, ModelCard | None]:
    """The model to download and its card (None for a model the catalog does not list)."""
    if args.model:
        if not is_hub_id(args.model):
            raise UsageError(f"{args.model!r} is not a Hub model id (org/name)")
        return args.model, (card_for(args.model, args.task, catalog)
                            or load_catalog(catalog).llm(args.model))
    if not args.task:
        raise UsageError("models download needs a MODEL or --task T")
    if get_task_type(args.task) is None:
        raise UsageError(f"unknown task type {args.task!r}")
    cards = sorted((c for c in load_catalog(catalog).for_task(args.task) if is_hub_id(c.id)),
                   key=lambda c: -c.downloads)
    safe = [c for c in cards if not c.trust_remote_code]
    if not safe:
        named = ", ".join(c.id for c in cards)
        anyway = f": name one to download it anyway: {named}" if named else ""
        raise UsageError(f"no catalog model for {args.task} can be downloaded without running "
                         f"its own code{anyway}")
    return safe[0].id, safe[0]


def _agreed(question: str, yes: bool) -> bool:
    if yes:
        return True
    if not (sys.stdin.isatty() and sys.stderr.isatty()):
        raise UsageError(f"{question}: nobody to ask here; pass --yes to go ahead")
    return input(f"{question}? [y/N] ").strip().lower() in ("y", "yes")


def _download(args: argparse.Namespace) -> int:
    model, card = _pick(args, _catalog_path(args.catalog))
    try:
        plan = plan_download(model, card)
    except (DownloadError, TransientToolError) as exc:
        print(f"hugginggpt: {exc}", file=sys.stderr)
        return EXIT_FAILED
    print(plan.describe(), file=sys.stderr)
    if plan.missing == 0 and is_cached(model, plan.revision):
        print(f"{model} is already in the cache", file=sys.stderr)
        return EXIT_OK
    if not _agreed(f"download {model} ({plan.size_mb:.2f} MB)", args.yes):
        print(f"{model} was not downloaded", file=sys.stderr)
        return EXIT_OK
    progress = Progress()
    try:
        path = download(plan, progress=lambda event: progress.handle("custom", event))
    except (DownloadError, TransientToolError, LimitExceededError) as exc:
        progress.close()
        print(f"hugginggpt: {exc}; what arrived is kept, run the command again to resume",
              file=sys.stderr)
        return EXIT_FAILED
    progress.close()
    print(f"{model}: {plan.size_mb:.2f} MB downloaded to {path}")
    return EXIT_OK


def _cache_root() -> Path:
    from huggingface_hub import constants

    return Path(constants.HF_HUB_CACHE)


def _size(folder: Path) -> int:
    """Bytes a repo's cache folder holds (its blobs; links count nothing)."""
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file() and not p.is_symlink())


def _entries() -> list[dict[str, Any]]:
    root = _cache_root()
    found = []
    for folder in sorted(root.glob("models--*")) if root.is_dir() else []:
        model = folder.name.removeprefix("models--").replace("--", "/")
        snapshots = folder / "snapshots"
        found.append({
            "model": model, "size_mb": round(_size(folder) / 2**20, 3),
            "revisions": sorted(p.name for p in snapshots.iterdir()) if snapshots.is_dir() else [],
            "complete": is_cached(model), "path": str(folder)})
    return found


def _cached(args: argparse.Namespace) -> int:
    entries = _entries()
    if args.json:
        print(json.dumps(entries, indent=2))
        return EXIT_OK
    if not entries:
        print(f"no models in the Hugging Face cache ({_cache_root()})")
        return EXIT_OK
    print(f"{'model':<50} {'size MB':>10}  {'state':<10} revisions")
    for e in entries:
        state = "complete" if e["complete"] else "incomplete"
        revisions = ", ".join(r[:12] for r in e["revisions"]) or "-"
        print(f"{e['model']:<50} {e['size_mb']:>10.3f}  {state:<10} {revisions}")
    total = sum(e["size_mb"] for e in entries)
    print(f"{len(entries)} model(s), {total:.3f} MB in {_cache_root()}")
    return EXIT_OK


def _remove(args: argparse.Namespace) -> int:
    entry = next((e for e in _entries() if e["model"] == args.model), None)
    if entry is None:
        raise UsageError(f"{args.model} is not in the Hugging Face cache ({_cache_root()}); "
                         "see hugginggpt models cached")
    if not _agreed(f"remove {args.model} ({entry['size_mb']:.3f} MB)", args.yes):
        print(f"{args.model} was kept", file=sys.stderr)
        return EXIT_OK
    shutil.rmtree(entry["path"])
    print(f"{args.model}: removed, {entry['size_mb']:.3f} MB freed")
    return EXIT_OK
