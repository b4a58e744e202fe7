"""text-to-video: what it takes and gives, and how an answer says it."""

from __future__ import annotations

from hugginggpt.tools.experts import words
from hugginggpt.tools.experts.tasks import TEXT, Cue, Output, Planning, TaskType

TASK = TaskType(
    "text-to-video",
    "Generate a short video from a text prompt.",
    args=(TEXT,),
    outputs=(Output("video", "video"),),
    nondeterministic=True,
    cues=(Cue(
        r"\bvideo\b|\banimation\b|\banimate|\bvid[ée]o|视频|动画",
        rank=160),),
    planning=Planning(stage="make", generative=True, prompt=True),
    noun="generating the video",
    say=words.saved("Video", "video"),
)
