"""audio-to-audio: what it takes and gives, and how an answer says it."""

from __future__ import annotations

from hugginggpt.tools.experts import words
from hugginggpt.tools.experts.tasks import AUDIO, Output, TaskType

TASK = TaskType(
    "audio-to-audio",
    "Transform audio (enhance speech, separate sources).",
    args=(AUDIO,),
    outputs=(Output("audio", "audio"),),
    noun="processing the audio",
    say=words.saved("Processed audio", "audio"),
)
