"""object-detection: what it takes and gives, and how an answer says it."""

from __future__ import annotations

from hugginggpt.tools.experts import words
from hugginggpt.tools.experts.tasks import IMAGE, Output, TaskType

TASK = TaskType(
    "object-detection",
    "Find objects in an image; returns an annotated image and boxes.",
    args=(IMAGE,),
    outputs=(Output("image", "image"), Output("objects", "labels")),
    noun="the object detection",
    say=words.objects,
)
