"""audio-classification: what it takes and gives, and how an answer says it."""

from __future__ import annotations

from hugginggpt.tools.experts import words
from hugginggpt.tools.experts.tasks import AUDIO, Cue, Output, Planning, TaskType

TASK = TaskType(
    "audio-classification",
    "Classify a sound or a speaker's language or emotion.",
    args=(AUDIO,),
    outputs=(Output("labels", "labels"),),
    cues=(Cue(
        r"\bwhat (?:sound|noise|kind of (?:sound|noise)|instrument|animal|bird)s?\b|\bwhich "
        r"(?:sound|instrument|bird|animal)|\bclassify (?:the |this )?(?:sound|audio|recording"
        r"|clip)"
        r"|\bgenre\b|\bspeaker'?s? (?:mood|emotion|gender|age)|\bemotion in (?:the |his |her )?"
        r"voice|\bquel (?:son|bruit)|\bqu[ée] (?:sonido|ruido)|\bwelches? (?:geräusch|instrument)"
        r"|什么声音|什么乐器",
        needs="audio", rank=40),),
    kinds=("keyword", "sound", "emotion", "language"),
    planning=Planning(ask="classify", replaces="named"),
    picks_one=True,
    noun="classifying the audio",
    say=words.classified("recording"),
)
