"""text-to-speech: what it takes and gives, and how an answer says it."""

from __future__ import annotations

from hugginggpt.tools.experts import words
from hugginggpt.tools.experts.tasks import TEXT, Cue, Output, Planning, TaskType

TASK = TaskType(
    "text-to-speech",
    "Read a text aloud.",
    args=(TEXT,),
    outputs=(Output("audio", "audio"),),
    aliases=("tts",),
    cues=(Cue(
        r"\baloud\b|\bout loud\b|\bread (?:it|this|that|them|the \w+) (?:out|to me)\b|\bspeak"
        r"\b|\bspoken version|\bvoice ?over|\bnarrat|\btext[- ]to[- ]speech|\btts\b|\baudio "
        r"(?:version|file|clip|recording) of|\bturn (?:it|this|that|\w+) into (?:speech|audio)"
        r"|\b(?:to|into) (?:an? )?(?:speech|audio|mp3|wav|voice recording)\b|\baudio (?:file "
        r"|clip |version )?(?:from|of)\b|\bmake (?:an? )?(?:audio|recording|mp3)\b"
        r"|\bsay (?:it|this|that)\b|\bpronounc|\bvoice message|\bspoken\b"
        r"|\bas (?:an? )?(?:audio|speech|voice|mp3|sound)(?: file| clip)?\b"
        r"|\bvoix haute|\bhaute voix|\bvoz alta|\bvoorlezen|\bhardop|\bad alta voce|\bvorles"
        r"|\bvorlesen|\blaut vor|\bsprich|\bmp3 of"
        r"|\blies\b.{0,60}\bvor\b|\bl[ée]elo|\blee (?:esto|este|esta|en voz)"
        r"|朗读|读出来|念出来|读给我|念给我|转成语音|语音合成|读一下|念一下|读出",
        rank=60),),
    planning=Planning(stage="make", chains=True, renders=True, told_before=True),
    noun="reading the text aloud",
    say=words.saved("Speech", "audio"),
)
