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
"""

from __future__ import annotations

import csv
import io
import mimetypes
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any, TypeVar, cast
from urllib.parse import urlsplit

import httpx
from huggingface_hub import InferenceClient, constants, get_token
from huggingface_hub.errors import (
    HfHubHTTPError,
    OfflineModeIsEnabled,
    OverloadedError,
    TextGenerationError,
)
from huggingface_hub.errors import ValidationError as TGIValidationError
from huggingface_hub.utils import get_session

from hugginggpt.tools.errors import ToolExecutionError, ToolTimeoutError, TransientToolError
from hugginggpt.tools.experts.registry import Tool, ToolContext, backend_settings, register_tool
from hugginggpt.tools.redact import install_log_redaction

__all__ = [
    "HF_INFERENCE_BACKEND",
    "HFInferenceConfig",
    "configure",
    "current_config",
    "available",
    "REGISTERED_TASKS",
]

HF_INFERENCE_BACKEND = "hf-inference"

T = TypeVar("T")

_HF_HOSTS = (".huggingface.cloud", ".huggingface.co", "huggingface.co", ".hf.space")
_NO_TOKEN = "no-token-for-third-party-endpoints"

TRANSIENT_STATUSES = frozenset({408, 429, 502, 503, 504})
"""HTTP statuses that may pass on their own: worth a retry on the same model."""


@dataclass(frozen=True)
class HFInferenceConfig:
    """Where the backend sends requests.

    Attributes:
        endpoints: model id -> URL of a dedicated Inference Endpoint or TGI server.
        provider: the Inference Provider for models without an endpoint URL (None:
            huggingface_hub's default, ``"auto"``).
        timeout_s: per-request timeout of the HTTP client, so that an abandoned call
            frees its thread.
    """

    endpoints: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    provider: str | None = None
    timeout_s: float = 60.0


_config = HFInferenceConfig()


def configure(
    endpoints: Mapping[str, str] | None = None,
    provider: str | None = None,
    timeout_s: float = 60.0,
) -> HFInferenceConfig:
    """Replace the backend's configuration (process-wide) and return it.

    Args:
        endpoints: model id -> endpoint URL, for dedicated endpoints and TGI servers.
        provider: the Inference Provider for hub model ids (``"hf-inference"``,
            ``"together"``, ...); None lets huggingface_hub choose.
        timeout_s: per-request timeout in seconds.
    """
    global _config
    if timeout_s <= 0:
        raise ValueError(f"timeout_s must be positive, got {timeout_s}")
    _config = HFInferenceConfig(
        endpoints=MappingProxyType(dict(endpoints or {})), provider=provider, timeout_s=timeout_s
    )
    return _config


def current_config() -> HFInferenceConfig:
    """The configuration the tools use now: the process-wide one from :func:`configure`,
    overridden by the current run's settings (``endpoints``, ``provider``, ``timeout_s``
    from :func:`hugginggpt.tools.experts.registry.backend_settings`)."""
    run = backend_settings(HF_INFERENCE_BACKEND)
    if not run:
        return _config
    return HFInferenceConfig(
        endpoints=MappingProxyType({**_config.endpoints, **run.get("endpoints", {})}),
        provider=run.get("provider") or _config.provider,
        timeout_s=float(run.get("timeout_s") or _config.timeout_s),
    )


def _token_for(url: str) -> str | None:
    """The user's Hugging Face token goes only to Hugging Face hosts (None: the client's
    default token); a third-party server gets a placeholder, never the user's token
    (the client insists on sending some token)."""
    host = urlsplit(url).hostname or ""
    return None if host.endswith(_HF_HOSTS) else _NO_TOKEN


def available(model: str) -> bool:
    """Whether ``model`` can be called now, decided without a network call.

    huggingface_hub in offline mode (``HF_HUB_OFFLINE``) refuses every request, even to
    a local endpoint, so nothing is available then. Otherwise a model with an endpoint
    URL is, and any hub model is when a token is present.
    """
    if constants.HF_HUB_OFFLINE:
        return False
    return model in current_config().endpoints or get_token() is not None


# --- the client and its errors -----------------------------------------------------------


def _target(model: str) -> str:
    config = current_config()
    url = config.endpoints.get(model)
    return f"endpoint {url}" if url else f"{model} via provider {config.provider or 'auto'}"


def _server_message(response: httpx.Response) -> str:
    try:
        body = response.json()
    except ValueError:
        return response.text.strip()[:300]
    if isinstance(body, dict):
        error = body.get("error", body.get("message", body))
        if isinstance(error, dict):
            error = error.get("message", error)
        message = "; ".join(map(str, error)) if isinstance(error, list) else str(error)
        if (eta := body.get("estimated_time")) is not None:
            message += f" (estimated time: {eta}s)"
        return message[:300]
    return str(body)[:300]


def _http_error(status: int, message: str, model: str) -> ToolExecutionError:
    where = _target(model)
    detail = f": {message}" if message else ""
    if status == 503:
        return TransientToolError(f"{where} is unavailable or the model is loading (503){detail}")
    if status == 429:
        return TransientToolError(f"{where} is rate-limited (429){detail}")
    if status in TRANSIENT_STATUSES:
        return TransientToolError(f"{where} is temporarily unavailable (HTTP {status}){detail}")
    if status == 404:
        return ToolExecutionError(
            f"model not found: {where} (404): the model does not exist or is not deployed "
            f"there{detail}")
    if status in (401, 403):
        return ToolExecutionError(
            f"not authorised for {where} (HTTP {status}): check HF_TOKEN and the model's "
            f"access terms{detail}")
    if status in (400, 413, 422):
        return ToolExecutionError(f"bad input rejected by {where} (HTTP {status}){detail}")
    return ToolExecutionError(f"{where} failed (HTTP {status}){detail}")


def _translate(exc: Exception, model: str) -> ToolExecutionError | None:
    """The typed error for a failure of the client, or None for an unexpected one."""
    timeout = current_config().timeout_s
    if isinstance(exc, OfflineModeIsEnabled):
        return ToolExecutionError(
            "huggingface_hub is in offline mode (HF_HUB_OFFLINE) and refuses every request, "
            "even to a local endpoint")
    if isinstance(exc, HfHubHTTPError) and exc.response is not None:
        return _http_error(exc.response.status_code, _server_message(exc.response), model)
    if isinstance(exc, TextGenerationError):  # TGI's typed errors
        if isinstance(exc.__cause__, HfHubHTTPError) and exc.__cause__.response is not None:
            return _http_error(exc.__cause__.response.status_code, str(exc), model)
        if isinstance(exc, OverloadedError):
            return TransientToolError(f"{_target(model)} is overloaded: {exc}")
        if isinstance(exc, TGIValidationError):
            return ToolExecutionError(f"bad input rejected by {_target(model)}: {exc}")
        return ToolExecutionError(f"{_target(model)} failed to generate: {exc}")
    if isinstance(exc, (TimeoutError, httpx.TimeoutException)):
        return ToolTimeoutError(f"{_target(model)} sent no reply within {timeout:g}s")
    if isinstance(exc, httpx.TransportError):
        return TransientToolError(f"cannot reach {_target(model)}: {type(exc).__name__}: {exc}")
    if isinstance(exc, ValueError):  # the client's own checks and response parsing
        return ToolExecutionError(f"{_target(model)}: invalid request or reply: {exc}")
    return None


@contextmanager
def _typed_errors(model: str) -> Iterator[None]:
    """Turn the client's failures into this project's typed errors."""
    try:
        yield
    except Exception as exc:
        typed = _translate(exc, model)
        if typed is None:
            raise
        raise typed from exc


def _call(model: str, run: Callable[[InferenceClient], T]) -> T:
    """Run one request on a fresh client, closed afterwards (it keeps the responses it
    streamed until then)."""
    config = current_config()
    url = config.endpoints.get(model)
    with _typed_errors(model):
        client = (
            InferenceClient(model=url, timeout=config.timeout_s, token=_token_for(url)) if url
            else InferenceClient(model=model, provider=cast(Any, config.provider),
                                 timeout=config.timeout_s)
        )
        with client:
            return run(client)


# --- outputs -------------------------------------------------------------------------------


def _plain(value: Any) -> Any:
    """The client's typed outputs (dict subclasses) as plain JSON-able data."""
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items() if v is not None}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


def _labels(items: Any) -> list[dict[str, Any]]:
    """Label dicts; one typed element (the client unwraps some nested replies) as a list."""
    return [_plain(item) for item in ([items] if isinstance(items, dict) else items)]


def _save_image(image: Any, ctx: ToolContext) -> dict[str, Any]:
    buffer = io.BytesIO()
    image.save(buffer, format="PNG")
    return ctx.artifacts.put_bytes(buffer.getvalue(), "image", ".png")


_AUDIO_MAGIC = ((b"RIFF", ".wav"), (b"fLaC", ".flac"), (b"OggS", ".ogg"), (b"ID3", ".mp3"),
                (b"\xff\xfb", ".mp3"), (b"\xff\xf3", ".mp3"), (b"\xff\xf2", ".mp3"))


def _audio_suffix(data: bytes, content_type: str | None = None) -> str:
    for magic, suffix in _AUDIO_MAGIC:
        if data.startswith(magic):
            return suffix
    guessed = mimetypes.guess_extension(content_type.split(";")[0]) if content_type else None
    return guessed or ".flac"  # what hf-inference's audio pipelines send by default


def _media_bytes(source: Path | str) -> bytes:
    """An input image as bytes: read from the workspace, or fetched from its URL."""
    if isinstance(source, Path):
        return source.read_bytes()
    try:
        response = get_session().get(source, timeout=current_config().timeout_s)
        response.raise_for_status()
    except OfflineModeIsEnabled as exc:
        raise ToolExecutionError(f"cannot fetch {source}: {exc}") from exc
    except httpx.HTTPStatusError as exc:
        status = exc.response.status_code
        error = TransientToolError if status in TRANSIENT_STATUSES else ToolExecutionError
        raise error(f"cannot fetch {source}: HTTP {status}") from exc
    except httpx.TransportError as exc:
        raise TransientToolError(f"cannot fetch {source}: {type(exc).__name__}: {exc}") from exc
    return response.content


def _top_answer(items: Any) -> str:
    answers = items if isinstance(items, list) else [items]
    if not answers:
        raise ToolExecutionError("the model returned no answer")
    best = max(answers, key=lambda a: a.score if a.score is not None else 0.0)
    return str(best.answer)


_PALETTE = ((230, 25, 75), (60, 180, 75), (255, 225, 25), (0, 130, 200), (245, 130, 48),
            (145, 30, 180), (70, 240, 240), (240, 50, 230), (210, 245, 60), (250, 190, 212))


# --- the tools -----------------------------------------------------------------------------


def text_classification(text: str, model: str) -> list[dict[str, Any]]:
    """Labels with scores for a text."""
    return _labels(_call(model, lambda c: c.text_classification(text)))


def zero_shot_classification(text: str, labels: str, model: str) -> list[dict[str, Any]]:
    """Scores of a text for each of the comma-separated candidate labels."""
    candidates = [label.strip() for label in labels.split(",") if label.strip()]
    if not candidates:
        raise ToolExecutionError("zero-shot classification needs at least one candidate label")
    return _labels(_call(model, lambda c: c.zero_shot_classification(text, candidates)))


def token_classification(text: str, model: str) -> list[dict[str, Any]]:
    """Entities (or other token labels) with their spans and scores."""
    return _labels(_call(model, lambda c: c.token_classification(text)))


def summarization(text: str, model: str) -> str:
    """A summary of the text."""
    return str(_call(model, lambda c: c.summarization(text)).summary_text)


def translation(text: str, model: str, tgt_lang: str | None = None,
                src_lang: str | None = None) -> str:
    """The text translated. The client needs both language codes or neither: with one
    alone, the model's own language pair is used (opus-mt models have a fixed pair)."""
    both = bool(src_lang and tgt_lang)
    output = _call(model, lambda c: c.translation(
        text, src_lang=src_lang if both else None, tgt_lang=tgt_lang if both else None))
    return str(output.translation_text)


def question_answering(question: str, text: str, model: str) -> str:
    """The answer to a question, extracted from a context text."""
    return _top_answer(_call(model, lambda c: c.question_answering(question, text)))


def text_generation(text: str, model: str) -> str:
    """The model's continuation of a prompt."""
    return str(_call(model, lambda c: c.text_generation(text)))


def conversational(text: str, model: str) -> str:
    """The assistant's reply to one user message (chat completion)."""
    reply = _call(model, lambda c: c.chat_completion([{"role": "user", "content": text}]))
    if not reply.choices:
        raise ToolExecutionError(f"{_target(model)} returned no choices")
    return str(reply.choices[0].message.content or "")


def sentence_similarity(text: str, text2: str, model: str) -> float:
    """How similar two texts are, as the model scores them."""
    scores = _call(model, lambda c: c.sentence_similarity(text, [text2]))
    if not scores:
        raise ToolExecutionError(f"{_target(model)} returned no similarity score")
    return float(scores[0])


def feature_extraction(text: str, model: str) -> list[float]:
    """A sentence embedding: the model's vector, mean-pooled if it returns one per token."""
    array = _call(model, lambda c: c.feature_extraction(text))
    while array.ndim > 1 and array.shape[0] == 1:
        array = array[0]
    if array.ndim == 2:
        array = array.mean(axis=0)
    if array.ndim != 1:
        raise ToolExecutionError(f"unexpected embedding shape {array.shape} from {_target(model)}")
    return [float(v) for v in array]


def tabular_classification(table: Path, model: str) -> list[dict[str, Any]]:
    """One label per row of a CSV table."""
    with table.open(newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    if not rows:
        raise ToolExecutionError(f"table {table.name} has no rows")
    columns = {name: [row[name] for row in rows] for name in rows[0]}
    labels = _call(model, lambda c: c.tabular_classification(columns))
    return [{"row": i, "label": str(label)} for i, label in enumerate(labels)]


def image_classification(image: Path | str, model: str) -> list[dict[str, Any]]:
    """Labels with scores for an image."""
    return _labels(_call(model, lambda c: c.image_classification(image)))


def object_detection(image: Path | str, model: str, ctx: ToolContext) -> dict[str, Any]:
    """Boxes with labels and scores, and the image with the boxes drawn on it."""
    from PIL import Image, ImageDraw

    data = _media_bytes(image)
    found = _call(model, lambda c: c.object_detection(data))
    picture = Image.open(io.BytesIO(data)).convert("RGB")
    draw = ImageDraw.Draw(picture)
    for i, obj in enumerate(found):
        box, color = obj.box, _PALETTE[i % len(_PALETTE)]
        draw.rectangle((box.xmin, box.ymin, box.xmax, box.ymax), outline=color, width=2)
        draw.text((box.xmin + 2, box.ymin + 2), f"{obj.label} {obj.score:.2f}", fill=color)
    return {"image": _save_image(picture, ctx), "objects": _labels(found)}


def image_segmentation(image: Path | str, model: str, ctx: ToolContext) -> dict[str, Any]:
    """Segments with labels and scores, and one mask image with a colour per segment."""
    from PIL import Image

    segments = _call(model, lambda c: c.image_segmentation(image))
    if not segments:
        raise ToolExecutionError(f"{_target(model)} found no segments")
    masks: list[Any] = [s.mask for s in segments]  # decoded to PIL images by the client
    size = masks[0].size
    canvas = Image.new("RGB", size)
    for i, mask in enumerate(masks):
        canvas.paste(_PALETTE[i % len(_PALETTE)], mask=mask.convert("L").resize(size))
    labels = [{"label": s.label, "score": s.score} for s in segments]
    return {"image": _save_image(canvas, ctx), "segments": _labels(labels)}


def image_to_text(image: Path | str, model: str) -> str:
    """A caption of the image (or the text in it, for OCR models)."""
    return str(_call(model, lambda c: c.image_to_text(image)).generated_text)


def image_to_image(image: Path | str, model: str, ctx: ToolContext,
                   text: str | None = None) -> dict[str, Any]:
    """The image transformed, following the instruction in ``text`` when given."""
    return _save_image(_call(model, lambda c: c.image_to_image(image, prompt=text)), ctx)


def text_to_image(text: str, model: str, ctx: ToolContext) -> dict[str, Any]:
    """An image generated from a prompt, saved as a PNG artifact."""
    return _save_image(_call(model, lambda c: c.text_to_image(text)), ctx)


def text_to_video(text: str, model: str, ctx: ToolContext) -> dict[str, Any]:
    """A short video generated from a prompt, saved as an MP4 artifact."""
    data = _call(model, lambda c: c.text_to_video(text))
    return ctx.artifacts.put_bytes(data, "video", ".mp4")


def visual_question_answering(image: Path | str, question: str, model: str) -> str:
    """The best-scored answer to a question about an image."""
    return _top_answer(_call(model, lambda c: c.visual_question_answering(image, question)))


def document_question_answering(image: Path | str, question: str, model: str) -> str:
    """The best-scored answer to a question about a document image."""
    return _top_answer(_call(model, lambda c: c.document_question_answering(image, question)))


def text_to_speech(text: str, model: str, ctx: ToolContext) -> dict[str, Any]:
    """The text read aloud, saved as an audio artifact."""
    data = _call(model, lambda c: c.text_to_speech(text))
    return ctx.artifacts.put_bytes(data, "audio", _audio_suffix(data))


def automatic_speech_recognition(audio: Path | str, model: str) -> str:
    """The transcript of a recording."""
    return str(_call(model, lambda c: c.automatic_speech_recognition(audio)).text)


def audio_classification(audio: Path | str, model: str) -> list[dict[str, Any]]:
    """Labels with scores for a recording."""
    return _labels(_call(model, lambda c: c.audio_classification(audio)))


def audio_to_audio(audio: Path | str, model: str, ctx: ToolContext) -> dict[str, Any]:
    """The transformed recording (the first one, when the model separates sources)."""
    outputs = _call(model, lambda c: c.audio_to_audio(audio))
    if not outputs:
        raise ToolExecutionError(f"{_target(model)} returned no audio")
    data = outputs[0].blob
    return ctx.artifacts.put_bytes(data, "audio", _audio_suffix(data, outputs[0].content_type))


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
}
"""Task type -> (tool, the InferenceClient method it needs). No client method exists for
depth-estimation or text2text-generation, so this backend does not offer them."""


def _register() -> dict[str, Tool]:
    return {
        task: register_tool(fn, task, backend=HF_INFERENCE_BACKEND, available=available,
                            name=f"{HF_INFERENCE_BACKEND}:{task}", risk="network")
        for task, (fn, method) in _TOOLS.items()
        if callable(getattr(InferenceClient, method, None))
    }


REGISTERED_TASKS: tuple[str, ...] = tuple(_register())
"""The task types this backend serves with the installed huggingface_hub."""


install_log_redaction()  # huggingface_hub's loggers carry request URLs and errors
