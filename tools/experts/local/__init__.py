"""The local backend: Hugging Face models run with transformers on this machine (and
diffusers for image generation, skops for scikit-learn models).

Where transformers 5 still has a pipeline for a task, the tool uses it; for the tasks
whose pipelines it removed (summarization, translation, text2text generation, question
answering, visual question answering) and for image captioning (its pipeline became the
chat-style ``image-text-to-text``), the tool loads the model class and calls it or its
``generate`` directly.

Models load lazily, on the first call that needs them, and only from local files: a
model directory, or a hub id whose files are already in the Hugging Face cache. Nothing
is downloaded. Loaded models stay in a small per-process LRU (see
:func:`set_max_loaded`; a run's ``max_loaded_models``) keyed by (task, model id); the
bound counts models being loaded and models in use, so memory never holds more; two
subtasks asking for the same model wait for one load. Code shipped with a model runs only
when its catalog card says ``trust_remote_code``. Importing this module imports neither
torch nor transformers.

The package is split along its seams, so that each part can be read on its own:
:mod:`.cache` is the LRU itself, :mod:`.models` loads and runs models through it,
:mod:`.audio` reads WAV input, :mod:`.outputs` holds the bounds every adapter shares, and
:mod:`.text`, :mod:`.vision`, :mod:`.multimodal` (image with text, image restoration),
:mod:`.tables` (CSV tables; scikit-learn models through skops), :mod:`.speech` and
:mod:`.diffusion` (diffusers image generation) are the adapters by modality. This module
says which models are available, registers the adapters as the backend's tools and
re-exports the backend's public names. Imports go one way only: this module -> the
adapters -> :mod:`.models` (-> :mod:`.cache`), :mod:`.audio` and :mod:`.outputs`.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from hugginggpt.tools.experts.local.audio import read_wav
from hugginggpt.tools.experts.local.diffusion import text_to_image as generate_image
from hugginggpt.tools.experts.local.models import (
    DEFAULT_MAX_LOADED,
    LOAD_LOCK,
    LOCAL_BACKEND,
    clear_loaded,
    device_and_dtype,
    load,
    loaded_models,
    peak_loaded,
    set_max_loaded,
)
from hugginggpt.tools.experts.local.multimodal import (
    document_question_answering,
    image_text_to_text,
    image_to_image,
    zero_shot_image_classification,
)
from hugginggpt.tools.experts.local.speech import (
    audio_classification,
    automatic_speech_recognition,
    text_to_speech,
)
from hugginggpt.tools.experts.local.tables import (
    table_question_answering,
    tabular_classification,
)
from hugginggpt.tools.experts.local.text import (
    conversational,
    feature_extraction,
    fill_mask,
    question_answering,
    sentence_similarity,
    summarization,
    text2text_generation,
    text_classification,
    text_generation,
    token_classification,
    translation,
    zero_shot_classification,
)
from hugginggpt.tools.experts.local.vision import (
    depth_estimation,
    image_classification,
    image_segmentation,
    image_to_text,
    object_detection,
    visual_question_answering,
)
from hugginggpt.tools.experts.registry import register_tool

__all__ = [
    "LOCAL_BACKEND",
    "LOAD_LOCK",
    "DEFAULT_MAX_LOADED",
    "is_available",
    "set_max_loaded",
    "loaded_models",
    "peak_loaded",
    "clear_loaded",
    "load",
    "device_and_dtype",
    "read_wav",
    "TOOLS",
    "LIBRARIES",
]


# ----------------------------------------------------------------------------- availability


_INDEX_FILES = ("config.json", "model_index.json")
"""A model folder holds one of these: transformers and skops models a ``config.json``,
diffusers pipelines a ``model_index.json``."""


def is_available(model_id: str) -> bool:
    """Whether ``model_id`` can load here without a download: a local directory with a
    ``config.json`` (``model_index.json`` for a diffusers pipeline), or a hub id whose
    such file is in the Hugging Face cache."""
    path = Path(model_id).expanduser()
    if path.is_dir():
        return any((path / name).is_file() for name in _INDEX_FILES)
    if path.is_absolute() or model_id.startswith((".", "~")) or model_id.count("/") > 1:
        return False
    from huggingface_hub import try_to_load_from_cache

    try:
        found = [try_to_load_from_cache(model_id, name) for name in _INDEX_FILES]
    except ValueError:  # not a valid repo id (HFValidationError)
        return False
    return any(isinstance(f, str) for f in found)


TOOLS: dict[str, Callable[..., Any]] = {
    "text-classification": text_classification,
    "zero-shot-classification": zero_shot_classification,
    "token-classification": token_classification,
    "text-generation": text_generation,
    "conversational": conversational,
    "feature-extraction": feature_extraction,
    "sentence-similarity": sentence_similarity,
    "summarization": summarization,
    "translation": translation,
    "text2text-generation": text2text_generation,
    "question-answering": question_answering,
    "image-classification": image_classification,
    "object-detection": object_detection,
    "image-segmentation": image_segmentation,
    "depth-estimation": depth_estimation,
    "image-to-text": image_to_text,
    "visual-question-answering": visual_question_answering,
    "automatic-speech-recognition": automatic_speech_recognition,
    "audio-classification": audio_classification,
    "text-to-speech": text_to_speech,
    "fill-mask": fill_mask,
    "zero-shot-image-classification": zero_shot_image_classification,
    "image-text-to-text": image_text_to_text,
    "document-question-answering": document_question_answering,
    "image-to-image": image_to_image,
    "table-question-answering": table_question_answering,
    "tabular-classification": tabular_classification,
    "text-to-image": generate_image,
}
"""Every task type this backend runs, and its tool."""

LIBRARIES: dict[str, frozenset[str]] = {
    **{task: frozenset({"transformers"}) for task in TOOLS},
    **dict.fromkeys(("feature-extraction", "sentence-similarity"),
                    frozenset({"transformers", "sentence-transformers"})),
    "text-to-image": frozenset({"diffusers"}),
    "tabular-classification": frozenset({"sklearn"}),
}
"""Per task type, the libraries (as the Hub's ``library_name`` says) whose models its
tool loads; a card of another library (a diffusers image editor for image-to-image, a
pickled scikit-learn model) cannot run here."""

for _task, _fn in TOOLS.items():
    register_tool(_fn, _task, backend=LOCAL_BACKEND, available=is_available)
