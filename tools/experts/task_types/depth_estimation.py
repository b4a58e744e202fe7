"""depth-estimation: what it takes and gives, and how an answer says it."""

from __future__ import annotations

from hugginggpt.tools.experts import words
from hugginggpt.tools.experts.tasks import IMAGE, Output, TaskType

TASK = TaskType(
    "depth-estimation",
    "Estimate depth; returns a depth-map image.",
    args=(IMAGE,),
    outputs=(Output("image", "image"),),
    noun="the depth estimation",
    say=words.saved("Depth map", "image"),
)
