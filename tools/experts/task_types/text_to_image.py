"""text-to-image: what it takes and gives, and how an answer says it."""

from __future__ import annotations

from hugginggpt.tools.experts import words
from hugginggpt.tools.experts.tasks import TEXT, Output, TaskType

TASK = TaskType(
    "text-to-image",
    "Generate an image from a text prompt.",
    args=(TEXT,),
    outputs=(Output("image", "image"),),
    nondeterministic=True,
    noun="generating the image",
    say=words.saved("Image", "image"),
)
