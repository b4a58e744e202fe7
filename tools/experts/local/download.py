"""Models downloaded into the Hugging Face cache, on consent, for the local backend.

A model missing from the cache is a local candidate only when the run allows downloads
(its ``download`` setting, ``ask`` or ``yes``, given to tools as the local backend's run
setting). Before a download the user can see what it costs: :func:`plan_download` asks
the Hub (``snapshot_download(dry_run=True)``, ``HfApi.model_info``) for the files the
loader needs, their sizes, the license and whether the model is gated. A download then
fetches exactly those files (``allow_patterns``), pinned to the catalog card's
``revision`` when it has one; it checks free disk space first, reserves its bytes from
the run's download budget (``max_download_total_mb``, shared with URL inputs), reports
progress through ``tqdm_class``. A dropped connection resumes where it stopped
(huggingface_hub asks for the rest with a ``Range``, from its last whole chunk of 10 MB);
a download killed midway restarts its unfinished file on the next attempt (huggingface_hub
1.33 writes each attempt to a file of its own) and keeps the files it had finished.

Nothing half-written is ever usable: a download that fails drops the snapshot's new
links (the blobs it finished stay, for the next attempt), and
:func:`~.hub_cache.is_cached` does not count a model with an unfinished file. A model
whose card says ``trust_remote_code`` is downloaded only with explicit consent for that
model, never by ``download=yes`` alone. With downloads off nothing here touches the
network (what the cache holds is :mod:`.hub_cache`'s). Importing this module imports
neither torch nor transformers.
"""

from __future__ import annotations

import queue
import shutil
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hugginggpt.tools.errors import (
    Control,
    Fix,
    LimitExceededError,
    ToolExecutionError,
    TransientToolError,
    setting,
)
from hugginggpt.tools.experts.catalog import ModelCard
from hugginggpt.tools.experts.local.download_progress import (
    Counter,
    Progress,
    bar_class,
    pumping,
)
from hugginggpt.tools.experts.local.hub_cache import LOCAL, card_for, is_cached, repo_cache
from hugginggpt.tools.experts.registry import backend_settings
from hugginggpt.tools.fetch import DownloadBudget

__all__ = ["DownloadPlan", "DownloadError", "DownloadRefusedError", "DISK_MARGIN_MB",
           "loader_files", "plan_download", "download", "ensure_downloaded", "downloading",
           "check_disk", "Progress"]

MB = 1024 * 1024
DISK_MARGIN_MB = 50.0
"""Free space a download must leave on the cache's disk."""

_WEIGHTS = (".safetensors", ".bin")
_LOADER_SUFFIXES = (".json", ".txt", ".model", ".tiktoken", ".spm", ".vocab", ".skops",
                    ".jinja", *_WEIGHTS)
"""What transformers, sentence-transformers, diffusers and skops read: configs,
tokenizers, chat templates (``chat_template.jinja`` in transformers 5), weights."""
_OTHER_RUNTIMES = ("onnx", "openvino", "coreml", "tflite")
"""Folders of other runtimes' exports."""
_NOT_FOR_LOADING = ("tf_model", "flax_model", "rust_model", "model.onnx", "training_args",
                    "optimizer.", "scheduler.pt")
"""Files of other frameworks, and training state: never needed to load a model here."""

class DownloadError(ToolExecutionError):
    """A model could not be downloaded; the message says why and what to do."""


class DownloadRefusedError(DownloadError):
    """A download the run's settings or the user's answer do not allow."""


@dataclass(frozen=True)
class DownloadPlan:
    """What a download of one model costs, as the Hub says, before anything is fetched."""

    model: str
    commit: str
    """The commit the files come from (the card's ``revision``, or the Hub's main)."""
    revision: str | None = None
    """The card's pinned revision (None: the default branch, whose ref the cache keeps)."""
    files: dict[str, int] = field(default_factory=dict)
    """The files the loader needs -> their sizes in bytes."""
    missing: int = 0
    """Bytes of those files not in the cache yet (what the download will fetch)."""
    license: str = "unknown"
    gated: bool | str = False
    trust_remote_code: bool = False

    @property
    def size_mb(self) -> float:
        return self.missing / MB

    def describe(self) -> str:
        """One line for the consent question: size, files, license, gating, code."""
        gated = f"gated ({self.gated}: accept its terms on the Hub first)" if self.gated \
            else "not gated"
        code = "; RUNS CODE SHIPPED WITH THE MODEL (trust_remote_code)" \
            if self.trust_remote_code else ""
        return (f"{self.model}: {_mb(self.missing)} to download ({len(self.files)} files, "
                f"revision {self.commit[:12]}), license {self.license}, {gated}{code}")

    def as_dict(self) -> dict[str, Any]:
        return {"model": self.model, "commit": self.commit, "files": dict(self.files),
                "size_mb": round(self.size_mb, 3), "license": self.license,
                "gated": self.gated, "trust_remote_code": self.trust_remote_code,
                "summary": self.describe()}


def _mb(size: float) -> str:
    return f"{size / MB:.1f} MB" if size >= MB / 10 else f"{size / MB:.3f} MB"


# ----------------------------------------------------------------------------- planning


def loader_files(names: list[str], trust_remote_code: bool = False) -> list[str]:
    """The files of a repo the loaders need: configs, tokenizer files and one weight
    format (safetensors where the repo has them, else PyTorch ``.bin``); Python files
    only for a model allowed to run its own code."""
    wanted = _LOADER_SUFFIXES + ((".py",) if trust_remote_code else ())
    kept = [n for n in names if n.endswith(wanted) and not _other_runtime(n)]
    if any(n.endswith(".safetensors") for n in kept):
        kept = [n for n in kept if not n.endswith(".bin")]
    return sorted(kept)


def _other_runtime(name: str) -> bool:
    *folders, base = name.split("/")
    return bool(set(folders) & set(_OTHER_RUNTIMES)) or base.startswith(_NOT_FOR_LOADING)


def _hub_call(model_id: str, call: Callable[[], Any]) -> Any:
    """A Hub request, with its failures said in the user's terms."""
    from huggingface_hub import errors

    try:
        return call()
    except errors.GatedRepoError as exc:
        raise DownloadError(
            f"{model_id} is gated: accept its terms on the Hub and log in (hf auth login "
            "or HF_TOKEN), then try again") from exc
    except errors.RepositoryNotFoundError as exc:
        raise DownloadError(f"{model_id} is not on the Hub (removed, renamed or private)") \
            from exc
    except errors.RevisionNotFoundError as exc:
        raise DownloadError(f"{model_id}: the catalog's revision is not on the Hub") from exc
    except errors.OfflineModeIsEnabled as exc:
        raise DownloadRefusedError(
            f"{model_id} is not cached and HF_HUB_OFFLINE is set: unset it to download") \
            from exc
    except (errors.HfHubHTTPError, OSError) as exc:  # network failures: worth retrying
        raise TransientToolError(f"the Hub did not answer for {model_id}: "
                                 f"{type(exc).__name__}: {str(exc).splitlines()[0][:200]}") \
            from exc


def plan_download(model_id: str, card: ModelCard | None = None) -> DownloadPlan:
    """Ask the Hub what downloading ``model_id`` would fetch: the loader's files at the
    card's revision, their sizes, what is missing from the cache, the license, gating.

    Raises:
        DownloadError: the model is gated, missing, has no loadable files, or the Hub is
            off (``HF_HUB_OFFLINE``).
        TransientToolError: the Hub could not be reached.
    """
    from huggingface_hub import HfApi, snapshot_download

    revision = card.revision if card else None
    trust = bool(card and card.trust_remote_code)
    info = _hub_call(model_id, lambda: HfApi().model_info(model_id, revision=revision))
    commit = str(getattr(info, "sha", None) or revision or "main")
    listed = _hub_call(model_id, lambda: snapshot_download(
        model_id, revision=commit, dry_run=True, tqdm_class=bar_class(None)))
    sizes = {f.filename: int(f.file_size or 0) for f in listed}
    needed = loader_files(list(sizes), trust)
    if not {"config.json", "model_index.json"} & set(needed):
        raise DownloadError(f"{model_id} has no config.json (nor a diffusers "
                            "model_index.json): not a model the local backend can load")
    cached = {f.filename for f in listed if f.is_cached}
    card_data = getattr(info, "card_data", None)
    license_ = (getattr(card_data, "license", None) if card_data else None) or next(
        (t.removeprefix("license:") for t in (info.tags or []) if t.startswith("license:")),
        card.license if card else "unknown")
    gated = getattr(info, "gated", None)
    return DownloadPlan(
        model=model_id, commit=commit, revision=revision, files={n: sizes[n] for n in needed},
        missing=sum(sizes[n] for n in needed if n not in cached), license=str(license_),
        gated=gated if gated else (card.gated if card else False), trust_remote_code=trust)


# ----------------------------------------------------------------------------- downloading


def check_disk(path: Path, needed: int, margin_mb: float = DISK_MARGIN_MB) -> None:
    """Refuse a download that would leave less than ``margin_mb`` free on ``path``'s disk.

    Raises:
        DownloadError: saying how much is needed and how much is free.
    """
    existing = path
    while not existing.exists() and existing != existing.parent:
        existing = existing.parent
    free = shutil.disk_usage(existing).free
    if free < needed + margin_mb * MB:
        raise DownloadError(
            f"not enough disk space in {path}: the download needs {_mb(needed)} and "
            f"{margin_mb:g} MB must stay free, but {_mb(free)} is free", fix=Fix(
                say="free some space ({}, then models remove MODEL) or set {} elsewhere",
                controls=[Control(kind="models", name="cached"),
                          Control(kind="variable", name="HF_HOME")]))


@dataclass
class _Run:
    """The current run's download budget and progress reporting (see :func:`downloading`)."""

    budget: DownloadBudget | None = None
    progress: Progress | None = None


_CURRENT: ContextVar[_Run | None] = ContextVar("model_downloads", default=None)
_LOCKS: dict[str, threading.Lock] = {}
_LOCKS_LOCK = threading.Lock()


@contextmanager
def downloading(budget: DownloadBudget | None, progress: Progress | None) -> Iterator[None]:
    """Model downloads inside the block count against ``budget`` (the run's, shared with
    its URL inputs) and report to ``progress``; threads started with
    :func:`hugginggpt.tools.threads.in_thread` inherit this."""
    token = _CURRENT.set(_Run(budget, progress))
    try:
        yield
    finally:
        _CURRENT.reset(token)


def _drop_snapshot(plan: DownloadPlan, before: set[str]) -> None:
    """After a failed download: the snapshot's new links go (nothing half-done looks
    usable); the finished blobs stay, so the next attempt fetches only the rest."""
    snapshot = repo_cache(plan.model) / "snapshots" / plan.commit
    for name in plan.files:
        link = snapshot / name
        if name not in before and (link.is_symlink() or link.is_file()):
            link.unlink()


def download(plan: DownloadPlan, budget: DownloadBudget | None = None,
             progress: Progress | None = None) -> Path:
    """Fetch the plan's files into the cache (a dropped connection resumes; files
    already there are not fetched again); returns the snapshot folder.

    Raises:
        LimitExceededError: the download does not fit what is left of ``budget``
            (nothing is fetched).
        DownloadError: not enough disk space, or the Hub refused.
        TransientToolError: the connection failed (the finished files are kept).
    """
    from huggingface_hub import constants, snapshot_download

    check_disk(Path(constants.HF_HUB_CACHE), plan.missing)
    snapshot = repo_cache(plan.model) / "snapshots" / plan.commit
    before = {n for n in plan.files if (snapshot / n).exists()}
    events: queue.SimpleQueue[dict[str, Any]] = queue.SimpleQueue()
    counter = Counter(plan.model, plan.missing, events.put, None)
    with _reserved(plan, budget) as count:
        counter.count = count
        counter.report(finished=False)
        try:
            path = pumping(events, progress, lambda: _hub_call(plan.model, lambda: (
                snapshot_download(plan.model, revision=plan.revision,
                                  allow_patterns=sorted(plan.files),
                                  tqdm_class=bar_class(counter), max_workers=4))))
        except BaseException:
            _drop_snapshot(plan, before)
            raise
    counter.done = max(counter.done, plan.missing)
    counter.report(finished=True)
    pumping(events, progress, lambda: None)
    return Path(path)


@contextmanager
def _reserved(plan: DownloadPlan, budget: DownloadBudget | None
              ) -> Iterator[Callable[[int], None] | None]:
    if budget is None:
        yield None
        return
    left = budget.max_bytes - budget.used
    if plan.missing > left:
        raise LimitExceededError(
            f"{plan.model} was not downloaded: it needs {_mb(plan.missing)}, and "
            f"{_mb(max(left, 0))} of the run's download limit is left (nothing was "
            f"fetched)", setting="max_download_total_mb",
            value=round(budget.max_bytes / MB, 3), unit=" MB", fix=Fix(
                say="raise it with {}, or download it once with {}",
                controls=[Control(kind="limit", name="max_download_total_mb"),
                          _download_command(plan.model)]))
    with budget.download(f"model {plan.model}", plan.missing) as count:
        yield count


def _download_command(model_id: str) -> Control:
    return Control(kind="models", name="download", value=model_id)


def _lock(model_id: str) -> threading.Lock:
    with _LOCKS_LOCK:
        return _LOCKS.setdefault(model_id, threading.Lock())


def ensure_downloaded(task: str, model_id: str) -> None:
    """Download ``model_id`` for ``task`` if the run allows it and it is not cached yet:
    the local backend calls this before loading a Hub model.

    Raises:
        DownloadRefusedError: downloads are off, or this model needs consent the run
            does not have; the message says how to get the model.
        LimitExceededError, DownloadError, TransientToolError: see :func:`download`.
    """
    card = card_for(model_id, task)
    revision = card.revision if card else None
    if is_cached(model_id, revision):
        return
    settings = backend_settings(LOCAL)
    mode = settings.get("download", "no")
    consented = model_id in settings.get("consented", ())
    size = f" ({card.size_mb:g} MB)" if card and card.size_mb else ""
    if mode not in ("ask", "yes"):
        raise DownloadRefusedError(
            f"{model_id} is not in the local cache and downloads are off", fix=Fix(
                say=f"download it with {{}}{size}, or run with {{}}",
                controls=[_download_command(model_id), setting("download", "yes|ask")]))
    if card is not None and card.trust_remote_code and not consented:
        raise DownloadRefusedError(
            f"{model_id} runs code shipped with it (trust_remote_code): it is downloaded "
            "only with an explicit yes for it", fix=Fix(
                say="say yes to it with {}, or download it with {}",
                controls=[setting("download", "ask"), _download_command(model_id)]))
    if mode == "ask" and not consented:
        raise DownloadRefusedError(f"{model_id} is not cached and its download was not "
                                   "agreed to")
    run = _CURRENT.get() or _Run()
    with _lock(model_id):
        if is_cached(model_id, revision):  # another subtask fetched it meanwhile
            return
        download(plan_download(model_id, card), run.budget, run.progress)
