"""zero-shot-image-classification: what it takes and gives, and how an answer says it."""

from __future__ import annotations

from hugginggpt.tools.experts import words
from hugginggpt.tools.experts.tasks import IMAGE, Arg, Output, Planning, TaskType

TASK = TaskType(
    "zero-shot-image-classification",
    "Classify an image into labels the user names (CLIP-style image-text matching).",
    args=(IMAGE, Arg("labels", "param", description="comma-separated candidate labels")),
    outputs=(Output("labels", "labels"),),
    planning=Planning(ask="classify", replaces="at_hand"),
    picks_one=True,
    noun="classifying the image",
    say=words.best_fit("The image best fits"),
)
