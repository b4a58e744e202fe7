"""automatic-speech-recognition: what it takes and gives, and how an answer says it."""

from __future__ import annotations

from hugginggpt.tools.experts import words
from hugginggpt.tools.experts.tasks import AUDIO, Output, TaskType

TASK = TaskType(
    "automatic-speech-recognition",
    "Transcribe speech.",
    args=(AUDIO,),
    outputs=(Output("text", "text"),),
    aliases=("speech-recognition", "asr"),
    noun="the transcription",
    say=words.headed_as("Transcript",
                        "No speech was recognised in the recording."),
)
