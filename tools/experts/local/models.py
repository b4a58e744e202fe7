"""Loading and running the local backend's models, through one per-process cache.

Models load lazily and only from local files (a model directory, or a hub id in the
Hugging Face cache, downloaded first where the run allows it): a pipeline where
transformers 5 still has one for the task, else the model's auto class with its
tokenizer or processor (a :class:`_Bundle`), or, for embeddings from a
sentence-transformers model, a ``SentenceTransformer``. Code shipped with a model runs
only when the run's catalog card says ``trust_remote_code``. Every load goes through
:data:`_CACHE`, bounded by the run's ``max_loaded_models``, and holds :data:`LOAD_LOCK`;
:func:`_running` is how an adapter uses a model: held exclusively, never dropped
meanwhile, memory errors turned into tool errors. Importing this module imports neither
torch nor transformers.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from hugginggpt.tools.errors import Fix, LimitExceededError, ToolExecutionError, setting
from hugginggpt.tools.experts.catalog import DEFAULT_CATALOG, load_catalog
from hugginggpt.tools.experts.local.cache import _Entry, _ModelCache
from hugginggpt.tools.experts.local.download import ensure_downloaded
from hugginggpt.tools.experts.local.hub_cache import card_for, snapshot_folder
from hugginggpt.tools.experts.registry import backend_settings
from hugginggpt.tools.threads import MODEL_LOAD_LOCK, loading_model

__all__ = [
    "LOCAL_BACKEND",
    "LOCAL_LIBRARIES",
    "LOAD_LOCK",
    "DEFAULT_MAX_LOADED",
    "set_max_loaded",
    "loaded_models",
    "peak_loaded",
    "load_count",
    "clear_loaded",
    "load",
    "device_and_dtype",
    "import_libraries",
    "Loading",
    "Adapter",
    "ADAPTERS",
    "adapter",
]

LOCAL_BACKEND = "local"
"""The backend's name: its tools register under it and its run settings are keyed by it."""
LOCAL_LIBRARIES = frozenset({"transformers", "sentence-transformers", "diffusers", "sklearn"})
"""The libraries (as the Hub names them in ``library_name``) whose models this backend
loads; a card naming another library is never a local candidate."""
DEFAULT_MAX_LOADED = 3
Extra = Literal["tokenizer", "processor", "image-processor", "tokenizer+image-processor"]


@dataclass(frozen=True)
class Loading:
    """How a task type's models load: a transformers 5 ``pipeline`` where one runs the
    task, else the ``model_class`` (a transformers auto class) with its ``extra``
    (a tokenizer, a processor, an image processor, or a tokenizer and an image
    processor: a :class:`_Bundle`); ``embeddings``: a sentence-transformers model (a
    ``modules.json``) loads as a ``SentenceTransformer``; ``loader``: another
    library's loader (diffusers, skops), called with (model id, local path, trust).
    Task types that load alike share cache entries."""

    pipeline: str | None = None
    model_class: str | None = None
    extra: Extra = "tokenizer"
    embeddings: bool = False
    loader: Callable[[str, str, bool], Any] | None = None
    libraries: frozenset[str] = frozenset({"transformers"})
    """The libraries (as the Hub's ``library_name`` says) whose models it loads."""



@dataclass(frozen=True)
class Adapter:
    """One task type's tool in this backend, and how its models load."""

    tool: Callable[..., Any]
    loading: Loading
    deterministic: bool | None = None
    """True for a generative task run greedily or with a fixed seed (its results may be
    reused); None: the task type's own declaration says."""


ADAPTERS: dict[str, Adapter] = {}
"""Task type -> its adapter, as the adapters' modules register them (:func:`adapter`)."""
_SHARED: dict[Loading, str] = {}
"""Each way of loading -> the first task type registered with it: task types that load
alike (the sequence-to-sequence ones, text generation and chat) share cache entries,
keyed by that task type."""


def adapter(task: str, loading: Loading, *, deterministic: bool | None = None
            ) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Register the decorated function as this backend's tool for ``task``."""
    def register(tool: Callable[..., Any]) -> Callable[..., Any]:
        ADAPTERS[task] = Adapter(tool, loading, deterministic)
        _SHARED.setdefault(loading, task)
        return tool
    return register


def _loading(task: str) -> Loading:
    if task not in ADAPTERS:
        raise ToolExecutionError(f"the local backend does not run {task}")
    return ADAPTERS[task].loading


def _load_key(task: str) -> str:
    return _SHARED[_loading(task)]


# ----------------------------------------------------------------------------- the cache


_CACHE = _ModelCache(DEFAULT_MAX_LOADED)

LOAD_LOCK = MODEL_LOAD_LOCK
"""Held while any model loads, by every backend (see
:data:`hugginggpt.tools.threads.MODEL_LOAD_LOCK`)."""


def set_max_loaded(n: int) -> None:
    """The process's bound on models loaded at once (least recently used ones are
    dropped), for loads that name none. A run's ``max_loaded_models`` (the local
    backend's ``max_loaded`` setting) bounds that run's loads without changing this.
    """
    if n < 1:
        raise ValueError("at least one model must fit")
    _CACHE.resize(n)


def loaded_models() -> list[tuple[str, str]]:
    """The (task, model id) pairs loaded now, least recently used first."""
    return _CACHE.keys()


def peak_loaded() -> int:
    """The most models held at once (cached or loading) since :func:`clear_loaded`."""
    return _CACHE.peak


def load_count() -> int:
    """The models loaded (or being loaded) in this process so far, reloads included."""
    return _CACHE.loads


def clear_loaded() -> None:
    """Drop every loaded model that no call is using."""
    _CACHE.clear()


# ----------------------------------------------------------------------------- loading


def device_and_dtype() -> tuple[str, Any]:
    """CUDA with bfloat16 (float16 where bf16 is unsupported) if there is a GPU, else the
    CPU with float32."""
    import torch

    if torch.cuda.is_available():
        return "cuda", torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16
    return "cpu", torch.float32


def import_libraries() -> None:
    """Import what every load needs now, not in the first load: transformers imports its
    pipelines lazily, about 3 s on 2 cores. A server that loads models on demand (the
    expert tier's replicas) calls it as it starts."""
    from transformers import pipeline  # noqa: F401


def _local_path(task: str, model_id: str) -> str:
    """The directory holding the model's files: the id itself when it is a directory,
    else its snapshot in the Hugging Face cache, at the card's revision (downloaded
    first only where the run allows it and consent was given: :mod:`.download`)."""
    if Path(model_id).expanduser().is_dir():
        return str(Path(model_id).expanduser())
    ensure_downloaded(task, model_id)
    card = card_for(model_id, task)
    folder = snapshot_folder(model_id, card.revision if card else None)
    if folder is None:
        raise ToolExecutionError(f"{model_id} is not in the Hugging Face cache")
    return str(folder)


def _trust_remote_code(task: str, model_id: str) -> bool:
    """Only what the run's catalog card allows (the shipped catalog outside a run)."""
    catalog = backend_settings(LOCAL_BACKEND).get("catalog") or DEFAULT_CATALOG
    card = load_catalog(catalog).get(task, model_id)
    return bool(card and card.trust_remote_code)


@dataclass
class _Bundle:
    """A model loaded by its class, for tasks whose pipelines transformers 5 removed."""

    model: Any
    tokenizer: Any
    processor: Any = None


def _load_uncached(task: str, model_id: str) -> Any:
    """Load what ``task`` needs for ``model_id`` from local files only."""
    how = _loading(task)
    path = _local_path(task, model_id)  # a download first, before torch is imported
    device, dtype = device_and_dtype()
    trust = _trust_remote_code(task, model_id)
    if how.loader is not None:
        return how.loader(model_id, path, trust)
    import transformers as tf

    if how.embeddings and (Path(path) / "modules.json").is_file():
        return _sentence_transformer(path, device, dtype, trust)
    if how.pipeline is not None:
        # A local directory: the pipeline reads files only (it forwards a
        # ``local_files_only`` argument to pipeline classes that reject it).
        make_pipeline: Callable[..., Any] = tf.pipeline
        return make_pipeline(how.pipeline, model=path, device=device, dtype=dtype,
                             trust_remote_code=trust)
    if how.model_class is None:
        raise ToolExecutionError(f"the local backend does not say how {task} models load")
    options: dict[str, Any] = {"local_files_only": True, "trust_remote_code": trust}
    model: Any = getattr(tf, how.model_class).from_pretrained(path, dtype=dtype, **options)
    model = model.to(device).eval()
    if how.extra == "processor":  # one processor takes, say, the image and the question
        processor = tf.AutoProcessor.from_pretrained(path, **options)
        return _Bundle(model, getattr(processor, "tokenizer", None), processor)
    if how.extra == "image-processor":  # pixels in, pixels out
        return _Bundle(model, None, tf.AutoImageProcessor.from_pretrained(path, **options))
    tokenizer = tf.AutoTokenizer.from_pretrained(path, **options)
    if how.extra == "tokenizer+image-processor":
        return _Bundle(model, tokenizer, tf.AutoImageProcessor.from_pretrained(path, **options))
    return _Bundle(model, tokenizer)


def _sentence_transformer(path: str, device: str, dtype: Any, trust: bool) -> Any:
    """A sentence-transformers model as its ``modules.json`` composes it (its own pooling:
    CLS for BGE, mean for MiniLM; a Normalize or Dense layer where it has one)."""
    from sentence_transformers import SentenceTransformer

    return SentenceTransformer(path, device=device, trust_remote_code=trust,
                               local_files_only=True, model_kwargs={"dtype": dtype})


def load(task: str, model_id: str) -> Any:
    """The loaded model (a pipeline, or a tokenizer/processor and model) for ``task``.

    Raises:
        ToolExecutionError: the model cannot be loaded from local files; the message
            names the model and says why.
    """
    return _entry(task, model_id).value


def _entry(task: str, model_id: str, use: bool = False) -> _Entry:
    def loader() -> Any:
        try:
            with loading_model():  # LOAD_LOCK, transformers' progress bars off
                return _load_uncached(task, model_id)
        except (ToolExecutionError, LimitExceededError):  # download failures too
            raise
        except Exception as exc:  # any loading failure (out of memory too) is said plainly
            raise ToolExecutionError(
                f"cannot load {model_id!r} for {task} from local files: "
                f"{type(exc).__name__}: {_gist(exc)}"
            ) from exc

    return _CACHE.get((_load_key(task), model_id), loader, _run_limit(), use)


def _run_limit() -> int | None:
    """The run's ``max_loaded_models`` (None outside a run: the current bound)."""
    limit = backend_settings(LOCAL_BACKEND).get("max_loaded")
    if limit is None:
        return None
    if int(limit) < 1:
        raise ToolExecutionError(
            f"max_loaded_models is {limit}: at least one model must fit", fix=Fix(
                say="set {} to 1 or more", controls=[setting("max_loaded_models")]))
    return int(limit)


@contextmanager
def _running(task: str, model_id: str) -> Iterator[Any]:
    """The loaded model, held exclusively while it runs (and never dropped meanwhile);
    memory errors become tool errors."""
    entry = _entry(task, model_id, use=True)
    try:
        with entry.lock, _out_of_memory_as_error(task, model_id):
            import torch

            with torch.inference_mode():
                yield entry.value
    finally:
        _CACHE.release(entry)


@contextmanager
def _out_of_memory_as_error(task: str, model_id: str) -> Iterator[None]:
    try:
        yield
    except MemoryError as exc:
        raise ToolExecutionError(f"out of memory running {model_id!r} for {task}") from exc
    except RuntimeError as exc:  # torch.OutOfMemoryError and CPU allocator failures
        text = str(exc).lower()
        if "out of memory" in text or "can't allocate memory" in text:
            raise ToolExecutionError(
                f"out of memory running {model_id!r} for {task}: {_gist(exc)}"
            ) from exc
        raise


_ERROR_LINE = re.compile(r"^[A-Za-z_][\w.]*(Error|Exception): .+")


def _gist(exc: BaseException) -> str:
    """The gist of an error: the underlying errors when the message embeds tracebacks
    (as the pipeline's "Could not load model ..." does), else its first line."""
    text = str(exc).strip()
    if not text:
        return type(exc).__name__
    causes = [line for line in text.splitlines() if _ERROR_LINE.match(line)]
    gist = "; ".join(dict.fromkeys(causes)) if causes else text.splitlines()[0]
    return gist[:400]

