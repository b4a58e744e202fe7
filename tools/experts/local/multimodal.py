"""The local backend's tools that look at an image with text, or turn an image into
another: zero-shot image classification, vision-language models, document question
answering and image restoration.

Zero-shot image classification (CLIP, SigLIP), vision-language chat (SmolVLM, Qwen2-VL,
...) and document question answering run the transformers 5 pipelines. Document models
that read pixels themselves (Donut) need nothing else; LayoutLM-style models need the
words on the page and their boxes, which the pipeline would take from Tesseract: here
they come from RapidOCR, which ships its models in its wheel, so no OCR engine has to be
installed. Image restoration (Swin2SR super-resolution), whose pipeline transformers 5
removed, calls the model class and writes a PNG in the run's artifact store.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Any

from hugginggpt.tools.errors import ToolExecutionError
from hugginggpt.tools.experts.local.models import Loading, _running, adapter
from hugginggpt.tools.experts.local.outputs import MAX_NEW_TOKENS
from hugginggpt.tools.experts.local.vision import _open_image
from hugginggpt.tools.experts.registry import ToolContext

__all__ = [
    "DEFAULT_INSTRUCTION",
    "MAX_IMAGE_PIXELS",
    "MAX_ANSWER_WORDS",
    "zero_shot_image_classification",
    "image_text_to_text",
    "document_question_answering",
    "image_to_image",
]

DEFAULT_INSTRUCTION = "Describe this image."
"""What a vision-language model is asked when the plan gives no instruction."""
MAX_ANSWER_WORDS = 30
"""Longest answer document question answering extracts from a page."""
MAX_IMAGE_PIXELS = 1024 * 1024
"""Larger inputs to super-resolution are refused: the output has scale² times as many
pixels, and a CPU takes minutes over them."""


def _candidates(labels: str) -> list[str]:
    found = [label.strip() for label in labels.split(",") if label.strip()]
    if not found:
        raise ToolExecutionError("zero-shot image classification needs at least one label")
    return found


@adapter("zero-shot-image-classification",
         Loading(pipeline="zero-shot-image-classification"))
def zero_shot_image_classification(image: Path, labels: str, model: str) -> list[dict[str, Any]]:
    """The candidate labels (comma-separated) ranked for an image by image-text
    similarity, best first."""
    picture = _open_image(image)
    candidates = _candidates(labels)
    with _running("zero-shot-image-classification", model) as pipe:
        out = pipe(picture, candidate_labels=candidates)
    return [{"label": str(o["label"]), "score": round(float(o["score"]), 6)} for o in out]


@adapter("image-text-to-text", Loading(pipeline="image-text-to-text"))
def image_text_to_text(image: Path, model: str, text: str | None = None) -> str:
    """A vision-language model's reply to an instruction or question about the image
    (by default, a description), through its chat template."""
    picture = _open_image(image)
    prompt = (text or "").strip() or DEFAULT_INSTRUCTION
    with _running("image-text-to-text", model) as pipe:
        if getattr(pipe.processor, "chat_template", None):
            messages = [{"role": "user", "content": [
                {"type": "image", "image": picture}, {"type": "text", "text": prompt}]}]
            out = pipe(text=messages, max_new_tokens=MAX_NEW_TOKENS, return_full_text=False)
        else:  # a model without a chat template takes the image and the prompt as they are
            out = pipe(images=picture, text=prompt, max_new_tokens=MAX_NEW_TOKENS,
                       return_full_text=False)
    generated = out[0]["generated_text"] if out else ""
    if isinstance(generated, list):  # the conversation, the reply last
        generated = generated[-1]["content"] if generated else ""
    return str(generated).strip()


@lru_cache(maxsize=1)
def _ocr() -> Any:
    """RapidOCR's engine, loaded once per process (its ONNX models ship in its wheel)."""
    from rapidocr_onnxruntime import RapidOCR

    return RapidOCR()


def _ocr_word_boxes(picture: Any) -> list[tuple[str, list[int]]]:
    """The words on a page and their boxes (0-1000, as LayoutLM reads them), from
    RapidOCR: each line it finds is split into words, its box shared out by length."""
    import numpy as np

    lines, _ = _ocr()(np.asarray(picture))
    width, height = picture.size
    words: list[tuple[str, list[int]]] = []
    for points, line, _score in lines or []:
        xs, ys = [p[0] for p in points], [p[1] for p in points]
        x0, x1, y0, y1 = min(xs), max(xs), min(ys), max(ys)
        tokens = str(line).split()
        total = sum(len(t) for t in tokens) + max(0, len(tokens) - 1)
        offset = 0
        for token in tokens:
            left = x0 + (x1 - x0) * offset / max(total, 1)
            offset += len(token)
            right = x0 + (x1 - x0) * offset / max(total, 1)
            offset += 1
            words.append((token, [int(1000 * left / width), int(1000 * y0 / height),
                                  int(1000 * right / width), int(1000 * y1 / height)]))
    return words


@adapter("document-question-answering",
         Loading(pipeline="document-question-answering"))
def document_question_answering(image: Path, question: str, model: str) -> str:
    """The answer to a question about a document image (a scan, a receipt, a form).

    Raises:
        ToolExecutionError: a model that needs the page's words found none on it.
    """
    picture = _open_image(image)
    with _running("document-question-answering", model) as pipe:
        extra: dict[str, Any] = {}
        if not pipe.model.config.is_encoder_decoder:  # LayoutLM: words and boxes first
            extra["word_boxes"] = _ocr_word_boxes(picture)
            if not extra["word_boxes"]:
                raise ToolExecutionError(f"no text found on {image.name} to answer from")
        out = pipe(image=picture, question=question, top_k=1,
                   max_answer_len=MAX_ANSWER_WORDS, **extra)
    answers = out if isinstance(out, list) else [out]
    if not answers:
        raise ToolExecutionError(f"{model} found no answer in {image.name}")
    return str(answers[0]["answer"]).strip()


@adapter("image-to-image",
         Loading(model_class="AutoModelForImageToImage", extra="image-processor"))
def image_to_image(image: Path, model: str, ctx: ToolContext,
                   text: str | None = None) -> Path:
    """The image restored or upscaled (Swin2SR-style models), as a PNG. These models
    follow no instruction: ``text`` is accepted and not used.

    Raises:
        ToolExecutionError: the image is larger than :data:`MAX_IMAGE_PIXELS`.
    """
    import numpy as np
    from PIL import Image

    picture = _open_image(image)
    if picture.width * picture.height > MAX_IMAGE_PIXELS:
        raise ToolExecutionError(
            f"{image.name} has {picture.width}x{picture.height} pixels; at most "
            f"{MAX_IMAGE_PIXELS} go through image-to-image here")
    with _running("image-to-image", model) as bundle:
        inputs = bundle.processor(images=picture, return_tensors="pt")
        out = bundle.model(**{k: v.to(bundle.model.device) for k, v in inputs.items()})
        scale = int(getattr(bundle.model.config, "upscale", 1) or 1)
    pixels = out.reconstruction[0].float().clamp(0, 1).cpu().numpy()
    array = (np.moveaxis(pixels, 0, -1) * 255).round().astype("uint8")
    array = array[: picture.height * scale, : picture.width * scale]  # the padding cut off
    _, path = ctx.artifacts.new_path(".png")
    Image.fromarray(array).save(path)
    return path
