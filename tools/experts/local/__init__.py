"""The local backend: Hugging Face models run with transformers on this machine (and
diffusers for image generation, skops for scikit-learn models).

Where transformers 5 still has a pipeline for a task, the tool uses it; for the tasks
whose pipelines it removed (summarization, translation, text2text generation, question
answering, visual question answering) and for image captioning (its pipeline became the
chat-style ``image-text-to-text``), the tool loads the model class and calls it or its
``generate`` directly.

Models load lazily, on the first call that needs them, and only from local files: a
model directory, or a hub id whose files are in the Hugging Face cache. Nothing is
downloaded unless the run allows it (see :mod:`.download`). Loaded models stay in a
small per-process LRU (see :func:`set_max_loaded`; a run's ``max_loaded_models``) keyed
by (task, model id); the bound counts models being loaded and models in use, so memory
never holds more; two subtasks asking for the same model wait for one load. Code shipped
with a model runs only when its catalog card says ``trust_remote_code``. Importing this
module imports neither torch nor transformers; they come with the ``local`` extra
(``pip install 'hugginggpt[local]'``), and without it no model is a candidate here.

The package is split along its seams, so that each part can be read on its own:
:mod:`.cache` is the LRU itself, :mod:`.models` loads and runs models through it,
:mod:`.audio` reads recordings, :mod:`.outputs` holds the bounds every adapter shares, and
:mod:`.text`, :mod:`.vision`, :mod:`.multimodal` (image with text, image restoration),
:mod:`.tables` (CSV tables; scikit-learn models through skops), :mod:`.speech` and
:mod:`.diffusion` (diffusers image generation) are the adapters by modality, each
declaring its task type and how its models load where it is defined
(``@adapter("depth-estimation", Loading(pipeline="depth-estimation"))``). This module
says which models are available, registers the adapters as the backend's tools and
re-exports the backend's public names; :mod:`.hub_cache` says what the Hugging Face cache
holds and :mod:`.download` fetches a model into it, on consent. Imports go one way only:
this module -> the adapters -> :mod:`.models` (-> :mod:`.cache`, :mod:`.download` ->
:mod:`.hub_cache`), :mod:`.audio` and :mod:`.outputs`.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from pathlib import Path
from typing import Any

from hugginggpt.tools.experts.catalog import DEFAULT_CATALOG, ModelCard, load_catalog
from hugginggpt.tools.experts.local import (  # noqa: F401  (the adapters register themselves)
    diffusion,
    hub_cache,
    multimodal,
    speech,
    tables,
    text,
    vision,
)
from hugginggpt.tools.experts.local.audio import read_audio, read_wav
from hugginggpt.tools.experts.local.models import (
    ADAPTERS,
    DEFAULT_MAX_LOADED,
    LOAD_LOCK,
    LOCAL_BACKEND,
    LOCAL_LIBRARIES,
    clear_loaded,
    device_and_dtype,
    import_libraries,
    load,
    loaded_models,
    peak_loaded,
    set_max_loaded,
)
from hugginggpt.tools.experts.registry import backend_settings, needs_extra, register_tool

__all__ = [
    "LOCAL_BACKEND",
    "LOCAL_LIBRARIES",
    "LOAD_LOCK",
    "DEFAULT_MAX_LOADED",
    "is_available",
    "is_cached",
    "unloadable",
    "unavailable_reason",
    "set_max_loaded",
    "loaded_models",
    "peak_loaded",
    "clear_loaded",
    "load",
    "device_and_dtype",
    "import_libraries",
    "read_audio",
    "read_wav",
    "TOOLS",
    "LIBRARIES",
]


# ----------------------------------------------------------------------------- availability


DIFFUSERS_PIPELINES = frozenset({"StableDiffusionPipeline"})
"""The diffusers pipelines the local backend offers (the ones its tests build tiny models
of); larger families (FLUX, SD3) are hf-inference's: tens of GB of weights and minutes per
image on a CPU."""

_INDEX_FILES = ("config.json", "model_index.json")
"""A model folder holds one of these: transformers and skops models a ``config.json``,
diffusers pipelines a ``model_index.json``."""


def _card(model_id: str) -> ModelCard | None:
    """The run's catalog card of ``model_id`` (the shipped catalog outside a run)."""
    catalog = backend_settings(LOCAL_BACKEND).get("catalog") or DEFAULT_CATALOG
    return load_catalog(catalog).find(model_id)


def unloadable(model_id: str, task: str | None = None) -> str | None:
    """Why this backend can never load ``model_id`` for ``task`` (its card names a library
    other than those of :data:`LIBRARIES` for the task, or of :data:`LOCAL_LIBRARIES`
    without a task), or None. A model without a card, or whose card does not name its
    library, is given the benefit of the doubt: its load says."""
    card = _card(model_id)
    libraries = LIBRARIES.get(task, LOCAL_LIBRARIES) if task else LOCAL_LIBRARIES
    if card is not None and card.library_name == "diffusers" and (
            card.architecture not in DIFFUSERS_PIPELINES):
        return (f"a {card.architecture or 'diffusers'} pipeline: the local backend runs "
                f"{', '.join(sorted(DIFFUSERS_PIPELINES))} models only")
    if card is None or card.library_name is None or card.library_name in libraries:
        return None
    return (f"a {card.library_name} model: the local backend loads "
            f"{' and '.join(sorted(libraries))} models"
            + (f" for {task}" if task else "") + " only")


def is_available(model_id: str, task: str | None = None) -> bool:
    """Whether ``model_id`` can load here: its library is one this backend loads, and its
    files are here (see :func:`is_cached`) or, when the run allows downloads, it is a hub
    id to download first (the download itself waits for consent: see :mod:`.download`).
    Never touches the network."""
    return unloadable(model_id, task) is None and (
        is_cached(model_id) or hub_cache.may_download(model_id))


def unavailable_reason(model_id: str, task: str | None = None) -> str | None:
    """Why ``model_id`` cannot run here now (None when it can): a library this backend
    does not load, or weights not cached and downloads off (with the size to download and
    whether the Hub asks to accept terms first)."""
    if (why := unloadable(model_id, task)) is not None:
        return why
    if is_cached(model_id) or hub_cache.may_download(model_id):
        return None
    card = _card(model_id)
    size = f"{card.size_mb:g} MB to download" if card and card.size_mb else "to download"
    gated = "; gated: accept its terms on the Hub first" if card and card.gated else ""
    return f"not cached ({size}){gated}"


def is_cached(model_id: str) -> bool:
    """Whether ``model_id``'s files are here: a local directory with a ``config.json``
    (``model_index.json`` for a diffusers pipeline), or a hub id whose files are complete
    in the Hugging Face cache (at the catalog card's revision)."""
    path = Path(model_id).expanduser()
    if path.is_dir():
        return any((path / name).is_file() for name in _INDEX_FILES)
    card = hub_cache.card_for(model_id)
    return hub_cache.is_cached(model_id, card.revision if card else None)


def _available_for(task: str, model_id: str) -> bool:
    return is_available(model_id, task)


def _reason_for(task: str, model_id: str) -> str | None:
    return unavailable_reason(model_id, task)


TOOLS: dict[str, Callable[..., Any]] = {task: a.tool for task, a in ADAPTERS.items()}
"""Every task type this backend runs, and its tool (each adapter registers itself with
:func:`.models.adapter`)."""

LIBRARIES: dict[str, frozenset[str]] = {task: a.loading.libraries for task, a in ADAPTERS.items()}
"""Per task type, the libraries (as the Hub's ``library_name`` says) whose models its
tool loads; a card of another library (a diffusers image editor for image-to-image, a
pickled scikit-learn model) cannot run here."""

for _task, _adapter in ADAPTERS.items():
    register_tool(_adapter.tool, _task, backend=LOCAL_BACKEND,
                  available=functools.partial(_available_for, _task),
                  unavailable=functools.partial(_reason_for, _task),
                  deterministic=_adapter.deterministic)

needs_extra(LOCAL_BACKEND, "local")
