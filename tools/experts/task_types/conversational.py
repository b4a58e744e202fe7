"""conversational: what it takes and gives, and how an answer says it."""

from __future__ import annotations

from hugginggpt.tools.experts import words
from hugginggpt.tools.experts.tasks import TEXT, Cue, Output, Planning, TaskType

TASK = TaskType(
    "conversational",
    "Reply to a message as a chat assistant.",
    args=(TEXT,),
    outputs=(Output("text", "text"),),
    aliases=("chat",),
    nondeterministic=True,
    cues=(Cue(
        r"\breply\b|\brespond\b|\bchat ?bot|\bchat with me|\bwhat would you (?:say|reply)"
        r"|\br[ée]pond|\bresponde|\bantworte|回复|回答他|回答她",
        rank=210),),
    planning=Planning(combines=True, generative=True),
    noun="the reply",
    say=words.headed_as("Reply", "The model gave an empty reply."),
)
