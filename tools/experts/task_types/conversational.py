"""conversational: what it takes and gives, and how an answer says it."""

from __future__ import annotations

from hugginggpt.tools.experts import words
from hugginggpt.tools.experts.tasks import TEXT, Output, TaskType

TASK = TaskType(
    "conversational",
    "Reply to a message as a chat assistant.",
    args=(TEXT,),
    outputs=(Output("text", "text"),),
    aliases=("chat",),
    nondeterministic=True,
    noun="the reply",
    say=words.headed_as("Reply", "The model gave an empty reply."),
)
