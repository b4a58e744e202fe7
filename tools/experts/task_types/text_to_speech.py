"""text-to-speech: what it takes and gives, and how an answer says it."""

from __future__ import annotations

from hugginggpt.tools.experts import words
from hugginggpt.tools.experts.tasks import TEXT, Output, TaskType

TASK = TaskType(
    "text-to-speech",
    "Read a text aloud.",
    args=(TEXT,),
    outputs=(Output("audio", "audio"),),
    aliases=("tts",),
    noun="reading the text aloud",
    say=words.saved("Speech", "audio"),
)
