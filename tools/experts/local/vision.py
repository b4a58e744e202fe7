"""The local backend's vision tools: classification, detection (of a detector's classes,
or of the things a request names), segmentation, depth, captioning and visual question
answering.

Detection, segmentation and depth also save an image, a PNG in the run's artifact store
(the boxes drawn, the segment map overlaid, the depth map). Captioning, whose pipeline
became the chat-style ``image-text-to-text``, and visual question answering, whose
pipeline transformers 5 removed, call the model class directly (see
:class:`~.models._Bundle`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hugginggpt.tools.errors import ToolExecutionError
from hugginggpt.tools.experts.local.models import Loading, _running, adapter
from hugginggpt.tools.experts.local.outputs import MAX_NEW_TOKENS, MAX_TOP_K, _labels
from hugginggpt.tools.experts.registry import ToolContext

__all__ = [
    "DETECTION_THRESHOLD",
    "image_classification",
    "object_detection",
    "zero_shot_object_detection",
    "image_segmentation",
    "depth_estimation",
    "image_to_text",
    "visual_question_answering",
]

DETECTION_THRESHOLD = 0.5
"""Objects scored below this are not reported (nor drawn)."""
NAMED_THRESHOLD = 0.1
"""The same for things a request names: an open-vocabulary detector such as OWL-ViT
scores a box against words it was not trained on, lower than a detector of fixed classes
scores its own; transformers' zero-shot-object-detection pipeline defaults to 0.1."""


def _open_image(path: Path) -> Any:
    from PIL import Image, UnidentifiedImageError

    try:
        with Image.open(path) as image:
            return image.convert("RGB")
    except (UnidentifiedImageError, OSError) as exc:
        raise ToolExecutionError(f"cannot read the image {path.name}: {exc}") from exc


@adapter("image-classification", Loading(pipeline="image-classification"))
def image_classification(image: Path, model: str) -> list[dict[str, Any]]:
    """What the image shows: labels, best first, with scores."""
    picture = _open_image(image)
    with _running("image-classification", model) as pipe:
        return _labels(pipe(picture, top_k=MAX_TOP_K))


_COLORS = [(230, 25, 75), (60, 180, 75), (255, 225, 25), (0, 130, 200), (245, 130, 48),
           (145, 30, 180), (70, 240, 240), (240, 50, 230), (210, 245, 60), (250, 190, 212)]


@adapter("object-detection", Loading(pipeline="object-detection"))
def object_detection(image: Path, model: str, ctx: ToolContext) -> dict[str, Any]:
    """The objects found (label, score, box in pixels) and the image with them drawn."""
    picture = _open_image(image)
    with _running("object-detection", model) as pipe:
        found = pipe(picture, threshold=DETECTION_THRESHOLD)
    return _boxes_drawn(picture, found, ctx)


@adapter("zero-shot-object-detection", Loading(pipeline="zero-shot-object-detection"))
def zero_shot_object_detection(image: Path, labels: str, model: str,
                               ctx: ToolContext) -> dict[str, Any]:
    """The things named in ``labels`` (comma-separated) found in the image (label, score,
    box in pixels), best first, and the image with them drawn."""
    named = list(dict.fromkeys(label.strip() for label in labels.split(",") if label.strip()))
    if not named:
        raise ToolExecutionError("zero-shot object detection needs at least one thing to "
                                 "look for")
    picture = _open_image(image)
    with _running("zero-shot-object-detection", model) as pipe:
        found = pipe(picture, candidate_labels=named, threshold=NAMED_THRESHOLD)
    return _boxes_drawn(picture, found, ctx)


def _boxes_drawn(picture: Any, found: list[dict[str, Any]], ctx: ToolContext) -> dict[str, Any]:
    """A detector's finds as outputs (label, score, box in pixels within the image) and
    the image with the boxes drawn, saved as a PNG artifact."""
    from PIL import ImageDraw

    width, height = picture.size
    sides = {"xmin": width, "xmax": width, "ymin": height, "ymax": height}
    objects: list[dict[str, Any]] = [
        {"label": str(o["label"]), "score": round(float(o["score"]), 6),
         "box": {k: min(max(round(float(v)), 0), sides[k] - 1) for k, v in o["box"].items()}}
        for o in found
    ]
    draw = ImageDraw.Draw(picture)
    for i, obj in enumerate(objects):
        box, color = obj["box"], _COLORS[i % len(_COLORS)]
        draw.rectangle((box["xmin"], box["ymin"], box["xmax"], box["ymax"]), outline=color,
                       width=max(1, round(min(picture.size) / 150)))
        draw.text((box["xmin"] + 2, box["ymin"] + 1), f"{obj['label']} {obj['score']:.2f}",
                  fill=color)
    _, path = ctx.artifacts.new_path(".png")
    picture.save(path)
    return {"image": path, "objects": objects}


@adapter("image-segmentation", Loading(pipeline="image-segmentation"))
def image_segmentation(image: Path, model: str, ctx: ToolContext) -> dict[str, Any]:
    """A colour-coded segment map over the image, and the segments (label, score, area)."""
    import numpy as np
    from PIL import Image

    picture = _open_image(image)
    with _running("image-segmentation", model) as pipe:
        found = pipe(picture)
    overlay = np.zeros((picture.height, picture.width, 3), dtype=np.uint8)
    segments = []
    for i, seg in enumerate(found):
        mask = np.asarray(seg["mask"].convert("L").resize(picture.size)) > 127
        overlay[mask] = _COLORS[i % len(_COLORS)]
        score = seg.get("score")
        segments.append({"label": str(seg["label"]),
                         "score": None if score is None else round(float(score), 6),
                         "area": round(float(mask.mean()), 6)})
    blended = Image.blend(picture, Image.fromarray(overlay), 0.6)
    _, path = ctx.artifacts.new_path(".png")
    blended.save(path)
    return {"image": path, "segments": segments}


@adapter("depth-estimation", Loading(pipeline="depth-estimation"))
def depth_estimation(image: Path, model: str, ctx: ToolContext) -> Path:
    """A depth map as a grey image: the model's prediction scaled to 0-255 (for
    relative-depth models such as DPT and Depth Anything, brighter is nearer)."""
    picture = _open_image(image)
    with _running("depth-estimation", model) as pipe:
        out = pipe(picture)
    _, path = ctx.artifacts.new_path(".png")
    out["depth"].convert("L").save(path)
    return path


@adapter("image-to-text", Loading(model_class="AutoModelForImageTextToText",
                                  extra="tokenizer+image-processor"))
def image_to_text(image: Path, model: str) -> str:
    """A caption for the image (or its text, for OCR models), generated from pixels."""
    picture = _open_image(image)
    with _running("image-to-text", model) as bundle:
        inputs = bundle.processor(images=picture, return_tensors="pt")
        inputs = {k: v.to(bundle.model.device) for k, v in inputs.items()}
        output = bundle.model.generate(**inputs, max_new_tokens=MAX_NEW_TOKENS)
        return str(bundle.tokenizer.decode(output[0], skip_special_tokens=True)).strip()


@adapter("visual-question-answering",
         Loading(model_class="AutoModelForVisualQuestionAnswering", extra="processor"))
def visual_question_answering(image: Path, question: str, model: str) -> str:
    """The answer to a question about an image: generated, or the best of the model's
    answer classes (ViLT)."""
    picture = _open_image(image)
    with _running("visual-question-answering", model) as bundle:
        inputs = bundle.processor(images=picture, text=question, return_tensors="pt",
                                  truncation=True)
        inputs = {k: v.to(bundle.model.device) for k, v in inputs.items()}
        if bundle.model.can_generate():
            output = bundle.model.generate(**inputs, max_new_tokens=MAX_NEW_TOKENS)
            return str(bundle.tokenizer.decode(output[0], skip_special_tokens=True)).strip()
        logits = bundle.model(**inputs).logits[0]
        return str(bundle.model.config.id2label[int(logits.argmax())])

