"""image-to-text: what it takes and gives, and how an answer says it."""

from __future__ import annotations

from hugginggpt.tools.experts.tasks import IMAGE, Output, TaskType
from hugginggpt.tools.experts.words import Finished, headed


def _image_to_text(done: Finished) -> str:
    text = done.outputs.get("text")
    reads = any(word in done.model.lower() for word in ("ocr", "donut")) or (
        isinstance(text, str) and "\n" in text.strip())  # a caption is one line
    return headed("The image says" if reads else "Caption", done.outputs.get("text"),
                   "No text was read in the image." if reads else "The caption is empty.")


TASK = TaskType(
    "image-to-text",
    "Caption an image, or read the text in it (OCR).",
    args=(IMAGE,),
    outputs=(Output("text", "text"),),
    aliases=("image-captioning", "ocr"),
    noun="reading the image",
    say=_image_to_text,
)
