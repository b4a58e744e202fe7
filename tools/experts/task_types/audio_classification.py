"""audio-classification: what it takes and gives, and how an answer says it."""

from __future__ import annotations

from hugginggpt.tools.experts import words
from hugginggpt.tools.experts.tasks import AUDIO, Output, TaskType

TASK = TaskType(
    "audio-classification",
    "Classify a sound or a speaker's language or emotion.",
    args=(AUDIO,),
    outputs=(Output("labels", "labels"),),
    noun="classifying the audio",
    say=words.classified("recording"),
)
