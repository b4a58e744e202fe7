"""audio-to-audio: what it takes and gives, and how an answer says it."""

from __future__ import annotations

from hugginggpt.tools.experts import words
from hugginggpt.tools.experts.tasks import AUDIO, Cue, Output, TaskType

TASK = TaskType(
    "audio-to-audio",
    "Transform audio (enhance speech, separate sources).",
    args=(AUDIO,),
    outputs=(Output("audio", "audio"),),
    cues=(Cue(
        r"\bdenois|\bnoise|\bhiss\b|\bhum\b|\bstatic\b|\bcrackl|\bclean (?:up )?(?:the |this "
        r"|my )?(?:audio|recording|sound)"
        r"|\benhance (?:the |this |my )?(?:audio|recording|speech|sound|voice)|\bseparate the"
        r" (?:voice|vocals|speakers|sources)|\bisolate|\bremove (?:the )?(?:background )?(?:hum|"
        r"music|hiss)|\bbruit|\bruido|\brauschen|降噪|去噪|噪音|杂音",
        needs="audio", rank=30),),
    noun="processing the audio",
    say=words.saved("Processed audio", "audio"),
)
