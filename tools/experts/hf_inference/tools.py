"""The hf-inference tools: one adapter per task type, from this project's arguments to
an :class:`~huggingface_hub.InferenceClient` method and back to this project's outputs.

Each adapter makes its request through
:func:`~hugginggpt.tools.experts.hf_inference.client._call`, so its failures are already
typed; what is left here is the shape of the data: the client's typed replies become
plain JSON-able values, and images, audio and video become artifacts in the run's store.
"""

from __future__ import annotations

import base64
import csv
import io
import mimetypes
from pathlib import Path
from typing import Any

from hugginggpt.tools.errors import ToolExecutionError, TransientToolError
from hugginggpt.tools.experts.hf_inference.client import (
    TRANSIENT_STATUSES,
    _call,
    _target,
    adapter,
    current_config,
)
from hugginggpt.tools.experts.registry import ToolContext

__all__ = [
    "text_classification", "zero_shot_classification", "token_classification", "summarization",
    "translation", "question_answering", "text_generation", "conversational", "sentence_similarity",
    "feature_extraction", "tabular_classification", "image_classification", "object_detection",
    "image_segmentation", "image_to_text", "image_to_image", "text_to_image", "text_to_video",
    "visual_question_answering", "document_question_answering", "text_to_speech",
    "automatic_speech_recognition", "audio_classification", "audio_to_audio", "fill_mask",
    "zero_shot_image_classification", "image_text_to_text", "table_question_answering",
]


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
    from huggingface_hub.errors import HfHubHTTPError, OfflineModeIsEnabled
    from huggingface_hub.utils import get_session, hf_raise_for_status
    from huggingface_hub.utils import httpx as hub_httpx  # httpx2 in huggingface_hub 2.x

    try:
        response = get_session().get(source, timeout=current_config().timeout_s)
        hf_raise_for_status(response)
    except OfflineModeIsEnabled as exc:
        raise ToolExecutionError(f"cannot fetch {source}: {exc}") from exc
    except HfHubHTTPError as exc:
        status = exc.response.status_code
        error = TransientToolError if status in TRANSIENT_STATUSES else ToolExecutionError
        raise error(f"cannot fetch {source}: HTTP {status}") from exc
    except hub_httpx.TransportError as exc:
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


@adapter("text-classification")
def text_classification(text: str, model: str) -> list[dict[str, Any]]:
    """Labels with scores for a text."""
    return _labels(_call(model, lambda c: c.text_classification(text)))


@adapter("zero-shot-classification")
def zero_shot_classification(text: str, labels: str, model: str) -> list[dict[str, Any]]:
    """Scores of a text for each of the comma-separated candidate labels."""
    candidates = [label.strip() for label in labels.split(",") if label.strip()]
    if not candidates:
        raise ToolExecutionError("zero-shot classification needs at least one candidate label")
    return _labels(_call(model, lambda c: c.zero_shot_classification(text, candidates)))


@adapter("token-classification")
def token_classification(text: str, model: str) -> list[dict[str, Any]]:
    """Entities (or other token labels) with their spans and scores."""
    return _labels(_call(model, lambda c: c.token_classification(text)))


@adapter("summarization")
def summarization(text: str, model: str) -> str:
    """A summary of the text."""
    return str(_call(model, lambda c: c.summarization(text)).summary_text)


@adapter("translation")
def translation(text: str, model: str, tgt_lang: str | None = None,
                src_lang: str | None = None) -> str:
    """The text translated. The client needs both language codes or neither: with one
    alone, the model's own language pair is used (opus-mt models have a fixed pair)."""
    both = bool(src_lang and tgt_lang)
    output = _call(model, lambda c: c.translation(
        text, src_lang=src_lang if both else None, tgt_lang=tgt_lang if both else None))
    return str(output.translation_text)


@adapter("question-answering")
def question_answering(question: str, text: str, model: str) -> str:
    """The answer to a question, extracted from a context text."""
    return _top_answer(_call(model, lambda c: c.question_answering(question, text)))


@adapter("text-generation")
def text_generation(text: str, model: str) -> str:
    """The model's continuation of a prompt."""
    return str(_call(model, lambda c: c.text_generation(text)))


@adapter("conversational", "chat_completion", hub_task="conversational")
def conversational(text: str, model: str) -> str:
    """The assistant's reply to one user message (chat completion)."""
    reply = _call(model, lambda c: c.chat_completion([{"role": "user", "content": text}]))
    if not reply.choices:
        raise ToolExecutionError(f"{_target(model)} returned no choices")
    return str(reply.choices[0].message.content or "")


@adapter("sentence-similarity")
def sentence_similarity(text: str, text2: str, model: str) -> float:
    """How similar two texts are, as the model scores them."""
    scores = _call(model, lambda c: c.sentence_similarity(text, [text2]))
    if not scores:
        raise ToolExecutionError(f"{_target(model)} returned no similarity score")
    return float(scores[0])


@adapter("feature-extraction")
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


@adapter("tabular-classification")
def tabular_classification(table: Path, model: str) -> list[dict[str, Any]]:
    """One label per row of a CSV table."""
    with table.open(newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    if not rows:
        raise ToolExecutionError(f"table {table.name} has no rows")
    columns = {name: [row[name] for row in rows] for name in rows[0]}
    labels = _call(model, lambda c: c.tabular_classification(columns))
    return [{"row": i, "label": str(label)} for i, label in enumerate(labels)]


@adapter("image-classification")
def image_classification(image: Path | str, model: str) -> list[dict[str, Any]]:
    """Labels with scores for an image."""
    return _labels(_call(model, lambda c: c.image_classification(image)))


@adapter("object-detection")
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


@adapter("image-segmentation")
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


@adapter("image-to-text")
def image_to_text(image: Path | str, model: str) -> str:
    """A caption of the image (or the text in it, for OCR models)."""
    return str(_call(model, lambda c: c.image_to_text(image)).generated_text)


@adapter("image-to-image")
def image_to_image(image: Path | str, model: str, ctx: ToolContext,
                   text: str | None = None) -> dict[str, Any]:
    """The image transformed, following the instruction in ``text`` when given."""
    return _save_image(_call(model, lambda c: c.image_to_image(image, prompt=text)), ctx)


@adapter("text-to-image")
def text_to_image(text: str, model: str, ctx: ToolContext) -> dict[str, Any]:
    """An image generated from a prompt, saved as a PNG artifact."""
    return _save_image(_call(model, lambda c: c.text_to_image(text)), ctx)


@adapter("text-to-video")
def text_to_video(text: str, model: str, ctx: ToolContext) -> dict[str, Any]:
    """A short video generated from a prompt, saved as an MP4 artifact."""
    data = _call(model, lambda c: c.text_to_video(text))
    return ctx.artifacts.put_bytes(data, "video", ".mp4")


@adapter("visual-question-answering")
def visual_question_answering(image: Path | str, question: str, model: str) -> str:
    """The best-scored answer to a question about an image."""
    return _top_answer(_call(model, lambda c: c.visual_question_answering(image, question)))


@adapter("document-question-answering")
def document_question_answering(image: Path | str, question: str, model: str) -> str:
    """The best-scored answer to a question about a document image."""
    return _top_answer(_call(model, lambda c: c.document_question_answering(image, question)))


@adapter("text-to-speech")
def text_to_speech(text: str, model: str, ctx: ToolContext) -> dict[str, Any]:
    """The text read aloud, saved as an audio artifact."""
    data = _call(model, lambda c: c.text_to_speech(text))
    return ctx.artifacts.put_bytes(data, "audio", _audio_suffix(data))


@adapter("automatic-speech-recognition")
def automatic_speech_recognition(audio: Path | str, model: str) -> str:
    """The transcript of a recording."""
    return str(_call(model, lambda c: c.automatic_speech_recognition(audio)).text)


@adapter("audio-classification")
def audio_classification(audio: Path | str, model: str) -> list[dict[str, Any]]:
    """Labels with scores for a recording."""
    return _labels(_call(model, lambda c: c.audio_classification(audio)))


@adapter("audio-to-audio")
def audio_to_audio(audio: Path | str, model: str, ctx: ToolContext) -> dict[str, Any]:
    """The transformed recording (the first one, when the model separates sources)."""
    outputs = _call(model, lambda c: c.audio_to_audio(audio))
    if not outputs:
        raise ToolExecutionError(f"{_target(model)} returned no audio")
    data = outputs[0].blob
    return ctx.artifacts.put_bytes(data, "audio", _audio_suffix(data, outputs[0].content_type))


@adapter("fill-mask")
def fill_mask(text: str, model: str) -> dict[str, Any]:
    """The sentence with its blank filled, and the candidate words with scores. The blank
    goes to the endpoint as written (``[MASK]`` for BERT-style models, ``<mask>`` for
    RoBERTa-style ones: the remote model's token is not known here); ``___`` becomes
    ``[MASK]``, the commoner one."""
    masked = _one_blank(text)
    found = _call(model, lambda c: c.fill_mask(masked))
    candidates = [{"label": str(f.token_str).strip(), "score": f.score,
                   "sequence": str(f.sequence)} for f in found]
    if not candidates:
        raise ToolExecutionError(f"{_target(model)} proposed no word for the blank")
    return {"text": candidates[0]["sequence"], "labels": candidates}


def _one_blank(text: str) -> str:
    markers = ("[MASK]", "<mask>", "___")
    if sum(text.count(m) for m in markers) != 1:
        raise ToolExecutionError(
            "fill-mask needs exactly one blank marked [MASK], <mask> or ___ in the text")
    return text.replace("___", "[MASK]")


@adapter("zero-shot-image-classification")
def zero_shot_image_classification(image: Path | str, labels: str,
                                   model: str) -> list[dict[str, Any]]:
    """Scores of an image for each of the comma-separated candidate labels."""
    candidates = [label.strip() for label in labels.split(",") if label.strip()]
    if not candidates:
        raise ToolExecutionError("zero-shot image classification needs at least one label")
    return _labels(_call(model, lambda c: c.zero_shot_image_classification(
        image, candidate_labels=candidates)))


def _data_url(source: Path | str) -> str:
    """An input image as the ``image_url`` of a chat message: a URL as it is, a file
    of the workspace as a base64 data URL."""
    if isinstance(source, str):
        return source
    kind = mimetypes.guess_type(source.name)[0] or "image/png"
    return f"data:{kind};base64,{base64.b64encode(source.read_bytes()).decode()}"


@adapter("image-text-to-text", "chat_completion", hub_task="conversational")
def image_text_to_text(image: Path | str, model: str, text: str | None = None) -> str:
    """A vision-language model's reply about the image (chat completion with an image
    part): to the instruction or question in ``text``, else a description."""
    prompt = (text or "").strip() or "Describe this image."
    content = [{"type": "image_url", "image_url": {"url": _data_url(image)}},
               {"type": "text", "text": prompt}]
    reply = _call(model, lambda c: c.chat_completion([{"role": "user", "content": content}]))
    if not reply.choices:
        raise ToolExecutionError(f"{_target(model)} returned no choices")
    return str(reply.choices[0].message.content or "").strip()


@adapter("table-question-answering")
def table_question_answering(table: Path, question: str, model: str) -> str:
    """The answer to a question about a CSV table."""
    with table.open(newline="", encoding="utf-8-sig") as handle:
        rows = list(csv.reader(handle))
    if len(rows) < 2:
        raise ToolExecutionError(f"table {table.name} needs a header row and data rows")
    columns = {name: [row[i] if i < len(row) else "" for row in rows[1:]]
               for i, name in enumerate(rows[0])}
    return str(_call(model, lambda c: c.table_question_answering(columns, question)).answer)
