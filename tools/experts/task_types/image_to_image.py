"""image-to-image: what it takes and gives, and how an answer says it."""

from __future__ import annotations

from hugginggpt.tools.experts import words
from hugginggpt.tools.experts.tasks import IMAGE, Arg, Output, TaskType

TASK = TaskType(
    "image-to-image",
    "Transform an image, optionally following a text instruction.",
    args=(IMAGE, Arg("text", "text", required=False, description="what to change")),
    outputs=(Output("image", "image"),),
    aliases=("image-editing",),
    noun="editing the image",
    say=words.saved("Edited image", "image"),
)
