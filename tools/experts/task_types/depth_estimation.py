"""depth-estimation: what it takes and gives, and how an answer says it."""

from __future__ import annotations

from hugginggpt.tools.experts import words
from hugginggpt.tools.experts.tasks import IMAGE, Cue, Output, TaskType

TASK = TaskType(
    "depth-estimation",
    "Estimate depth; returns a depth-map image.",
    args=(IMAGE,),
    outputs=(Output("image", "image"),),
    cues=(Cue(
        r"\bdepth|\bhow far\b|\bdistance map|\b3d\b|\bprofondeur|\bprofundidad|\btiefe|深度|景深",
        needs="image", rank=100),),
    noun="the depth estimation",
    say=words.saved("Depth map", "image"),
)
