"""What the Hugging Face cache holds for the local backend, read without the network.

A Hub model counts as cached only when its snapshot has a ``config.json`` and no file of
it is unfinished (an ``*.incomplete`` file whose finished blob is missing: a download
killed midway): half a model is never a candidate. Whether a missing model may be
offered for download is the run's ``download`` setting (the local backend's run
settings); :mod:`.download` fetches it. Importing this module imports neither torch nor
transformers.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

from hugginggpt.tools.errors import Control, Fix, setting, verbatim
from hugginggpt.tools.experts.catalog import DEFAULT_CATALOG, Catalog, ModelCard, load_catalog
from hugginggpt.tools.experts.registry import backend_settings

__all__ = ["LOCAL", "is_hub_id", "repo_cache", "snapshot_folder", "is_cached", "may_download",
           "card_for", "download_hint"]

LOCAL = "local"
"""The local backend's name (its run settings are keyed by it)."""

_PLAIN_ID = re.compile(r"(?:\w(?:[\w.-]{0,94}\w)?/)?\w(?:[\w.-]{0,94}\w)?", re.ASCII)
"""An id that huggingface_hub's ``validate_repo_id`` accepts (with no ``--`` or ``..``, not
ending in ``.git``): one or two parts of letters, digits, ``_``, ``.`` and ``-``, each
starting and ending with a letter, digit or ``_``, at most 96 long. Asked here first:
huggingface_hub's validators import httpx, a quarter of a second that a run which never
downloads need not pay. Any other id goes to huggingface_hub for its verdict
(``tests/test_startup.py`` checks that this accepts nothing that it rejects)."""


def is_hub_id(model_id: str) -> bool:
    """Whether ``model_id`` names a Hub repo (``org/name`` or ``name``), not a path."""
    if Path(model_id).expanduser().exists() or model_id.startswith((".", "~", "/")):
        return False
    if model_id.count("/") > 1:
        return False
    if (_PLAIN_ID.fullmatch(model_id) and "--" not in model_id and ".." not in model_id
            and not model_id.endswith(".git")):
        return True
    from huggingface_hub.utils import HFValidationError, validate_repo_id

    try:
        validate_repo_id(model_id)
    except HFValidationError:
        return False
    return True


def repo_cache(model_id: str) -> Path:
    """The cache folder of a Hub model (its refs, blobs and snapshots)."""
    from huggingface_hub import constants

    return Path(constants.HF_HUB_CACHE) / f"models--{model_id.replace('/', '--')}"


def snapshot_folder(model_id: str, revision: str | None = None) -> Path | None:
    """The cached snapshot of a Hub model (at ``revision``; None: the default branch)
    when its ``config.json`` (a diffusers pipeline's ``model_index.json``) is there and no
    file of it is unfinished (a download killed
    midway); else None. Reads the cache only.

    (``snapshot_download(local_files_only=True)`` would refuse a snapshot that lacks
    files the loader never needs, such as another runtime's exports.) A model with no
    folder in the cache is answered without huggingface_hub's ``file_download`` module
    (0.4 s to import), as ``try_to_load_from_cache`` would answer it."""
    if not is_hub_id(model_id) or not repo_cache(model_id).is_dir():
        return None
    from huggingface_hub import try_to_load_from_cache

    found = next((f for name in ("config.json", "model_index.json")
                  if isinstance(f := try_to_load_from_cache(model_id, name, revision=revision),
                                str)), None)
    if found is None:
        return None
    return None if _unfinished(repo_cache(model_id) / "blobs") else Path(found).parent


def _unfinished(blobs: Path) -> bool:
    """Whether a file of the repo was being downloaded and never finished: an
    ``<etag>[.<attempt>].incomplete`` file with no finished ``<etag>`` blob beside it (a
    process killed mid-download leaves one; a later complete download fills the blob)."""
    if not blobs.is_dir():
        return False
    return any(not (blobs / part.name.split(".")[0]).exists()
               for part in blobs.glob("*.incomplete"))


def is_cached(model_id: str, revision: str | None = None) -> bool:
    """Whether a Hub model's files are complete in the cache (see :func:`snapshot_folder`)."""
    return snapshot_folder(model_id, revision) is not None


def may_download(model_id: str) -> bool:
    """Whether this run may offer ``model_id`` as a candidate that runs after a download:
    downloads are on (``ask`` or ``yes``), huggingface_hub is not offline, and it is a
    Hub id. Never touches the network."""
    if backend_settings(LOCAL).get("download", "no") not in ("ask", "yes"):
        return False
    from huggingface_hub import constants

    return not constants.HF_HUB_OFFLINE and is_hub_id(model_id)


def card_for(model_id: str, task: str | None = None,
             catalog: str | None = None) -> ModelCard | None:
    """The run's catalog card for ``model_id`` (for ``task``, or its first card)."""
    chosen = load_catalog(catalog or backend_settings(LOCAL).get("catalog") or DEFAULT_CATALOG)
    return _card(chosen, model_id, task)


def _card(catalog: Catalog, model_id: str, task: str | None) -> ModelCard | None:
    if task is not None:
        return catalog.get(task, model_id)
    from hugginggpt.tools.experts.tasks import task_types

    return next((c for t in task_types() if (c := catalog.get(t.name, model_id))), None)


def download_hint(task: str, catalog: Catalog,
                  fits: Callable[[ModelCard], bool] | None = None) -> Fix | None:
    """With downloads off: the best catalog model for ``task`` that is not cached and
    ``fits`` (reads the text and writes the target language: a model that cannot do a
    translation's pair is no advice), as the command that gets it and its size from the
    card (no network)."""
    cards = sorted((c for c in catalog.for_task(task)
                    if is_hub_id(c.id) and not is_cached(c.id, c.revision)
                    if fits is None or fits(c)),
                   key=lambda c: -c.downloads)
    if not cards:
        return None
    best = cards[0]
    size = f", {best.size_mb:g} MB" if best.size_mb else ""
    return Fix(say=verbatim(f"local: {best.id} is not cached (") + f"{{}}{size}; or run with {{}})",
               controls=[Control(kind="models", name="download", value=best.id),
                         setting("download", "ask|yes")])
