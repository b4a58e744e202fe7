"""summarization: what it takes and gives, and how an answer says it."""

from __future__ import annotations

from hugginggpt.tools.experts import words
from hugginggpt.tools.experts.tasks import TEXT, Cue, Output, Planning, TaskType

TASK = TaskType(
    "summarization",
    "Summarise a text.",
    args=(TEXT,),
    outputs=(Output("text", "text"),),
    cues=(Cue(
        r"\bsumm?ar|\bsum (?:it |this |that |them )?up\b|\btl;?dr\b|\bgist\b|\bcondense|\bkey"
        r" points\b|\bmain points\b|\bboil (?:it|this) down|\bin (?:a few|one|two|three) "
        r"(?:sentences?|lines?|bullet)|\bshorten|\br[ée]sum[eé]|\br[ée]sumer|\br[ée]sumez"
        r"|\bsynth[eè]se|\bresum[eaio]|\bsamenvat|\briassum|\bresumen|\bresúm|\bzusammenfass"
        r"|\bzusammen\b|\bkurzfassung"
        r"|\b(?:short|shorter|brief|condensed|quick) (?:version|recap|overview)|\brecap\b"
        r"|总结|摘要|概括|归纳|概述|要点",
        rank=80),),
    planning=Planning(combines=True),
    noun="the summary",
    say=words.headed_as("Summary", "The summary is empty."),
)
