"""The hf-inference backend: Hugging Face models behind an HTTP endpoint.

Three kinds of endpoint, all through :class:`huggingface_hub.InferenceClient`:

- **Inference Providers**: a hub model id, routed by huggingface_hub to a provider
  (``provider`` in :func:`configure`, huggingface_hub's ``"auto"`` when unset). The token
  is huggingface_hub's own: ``HF_TOKEN`` or the one ``hf auth login`` saved.
- **Dedicated Inference Endpoints** and **self-hosted TGI servers**: a model id mapped to
  the endpoint's URL with :func:`configure`; the client posts to that exact URL.

One tool per task type the installed client supports. Failures are typed: a model that
is loading (503), rate limits (429), gateway errors, dropped connections and timeouts
are :class:`~hugginggpt.tools.errors.TransientToolError` (the executor retries them with backoff);
a missing model (404), a refused token (401/403) and rejected input (400/422) are
:class:`~hugginggpt.tools.errors.ToolExecutionError` (the executor moves on to the next model).

Nothing here reads the environment; whoever builds a run calls :func:`configure`.

Four modules: :mod:`.on_loop` (the async path: requests on the caller's event loop,
cancelled with the call), :mod:`.client` (the configuration, the client and its typed
errors) over it, :mod:`.providers` (which models can be called now: an endpoint URL, or a
token and a provider that serves the model for the task) and :mod:`.tools` (one adapter
per task type) over them. This package registers each adapter in its async form
(:func:`.on_loop.on_the_loop`), so the executor awaits it and its timeout cancels the
request; the adapters themselves stay plain functions, callable directly with the sync
client.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from hugginggpt.tools.experts.hf_inference.client import (
    HF_INFERENCE_BACKEND,
    HFInferenceConfig,
    configure,
    current_config,
)
from hugginggpt.tools.experts.hf_inference.on_loop import on_the_loop
from hugginggpt.tools.experts.hf_inference.providers import available, unavailable_reason
from hugginggpt.tools.experts.hf_inference.tools import (
    audio_classification,
    audio_to_audio,
    automatic_speech_recognition,
    conversational,
    document_question_answering,
    feature_extraction,
    fill_mask,
    image_classification,
    image_segmentation,
    image_text_to_text,
    image_to_image,
    image_to_text,
    object_detection,
    question_answering,
    sentence_similarity,
    summarization,
    table_question_answering,
    tabular_classification,
    text_classification,
    text_generation,
    text_to_image,
    text_to_speech,
    text_to_video,
    token_classification,
    translation,
    visual_question_answering,
    zero_shot_classification,
    zero_shot_image_classification,
)
from hugginggpt.tools.experts.registry import Tool, register_tool
from hugginggpt.tools.redact import install_log_redaction

__all__ = [
    "HF_INFERENCE_BACKEND",
    "HFInferenceConfig",
    "configure",
    "current_config",
    "available",
    "unavailable_reason",
    "REGISTERED_TASKS",
]


_TOOLS: dict[str, tuple[Callable[..., Any], str]] = {
    "text-classification": (text_classification, "text_classification"),
    "zero-shot-classification": (zero_shot_classification, "zero_shot_classification"),
    "token-classification": (token_classification, "token_classification"),
    "summarization": (summarization, "summarization"),
    "translation": (translation, "translation"),
    "question-answering": (question_answering, "question_answering"),
    "text-generation": (text_generation, "text_generation"),
    "conversational": (conversational, "chat_completion"),
    "sentence-similarity": (sentence_similarity, "sentence_similarity"),
    "feature-extraction": (feature_extraction, "feature_extraction"),
    "tabular-classification": (tabular_classification, "tabular_classification"),
    "image-classification": (image_classification, "image_classification"),
    "object-detection": (object_detection, "object_detection"),
    "image-segmentation": (image_segmentation, "image_segmentation"),
    "image-to-text": (image_to_text, "image_to_text"),
    "image-to-image": (image_to_image, "image_to_image"),
    "text-to-image": (text_to_image, "text_to_image"),
    "text-to-video": (text_to_video, "text_to_video"),
    "visual-question-answering": (visual_question_answering, "visual_question_answering"),
    "document-question-answering": (document_question_answering, "document_question_answering"),
    "text-to-speech": (text_to_speech, "text_to_speech"),
    "automatic-speech-recognition": (automatic_speech_recognition, "automatic_speech_recognition"),
    "audio-classification": (audio_classification, "audio_classification"),
    "audio-to-audio": (audio_to_audio, "audio_to_audio"),
    "fill-mask": (fill_mask, "fill_mask"),
    "zero-shot-image-classification": (zero_shot_image_classification,
                                       "zero_shot_image_classification"),
    "image-text-to-text": (image_text_to_text, "chat_completion"),
    "table-question-answering": (table_question_answering, "table_question_answering"),
}
"""Task type -> (tool, the InferenceClient method it needs). No client method exists for
depth-estimation or text2text-generation, so this backend does not offer them."""


@functools.cache
def _client_methods() -> frozenset[str]:
    """The installed ``InferenceClient``'s methods (its module takes about 0.7 s to
    import, so it is asked only when a model of this backend could otherwise run)."""
    from huggingface_hub import InferenceClient

    return frozenset(m for m in dir(InferenceClient) if callable(getattr(InferenceClient, m)))


def _why_not(task: str, method: str, model: str) -> str | None:
    reason = unavailable_reason(task, model)
    if reason is None and method not in _client_methods():
        return f"the installed huggingface_hub's InferenceClient has no {method}"
    return reason


def _register() -> dict[str, Tool]:
    return {
        task: register_tool(on_the_loop(fn), task, backend=HF_INFERENCE_BACKEND,
                            unavailable=functools.partial(_why_not, task, method),
                            name=f"{HF_INFERENCE_BACKEND}:{task}", risk="network")
        for task, (fn, method) in _TOOLS.items()
    }


REGISTERED_TASKS: tuple[str, ...] = tuple(_register())
"""The task types this backend has an adapter for; one whose client method the installed
huggingface_hub lacks is registered but never available (:func:`_why_not`)."""


install_log_redaction()  # huggingface_hub's loggers carry request URLs and errors
