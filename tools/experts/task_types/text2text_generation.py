"""text2text-generation: what it takes and gives, and how an answer says it."""

from __future__ import annotations

from hugginggpt.tools.experts import words
from hugginggpt.tools.experts.tasks import TEXT, Output, TaskType

TASK = TaskType(
    "text2text-generation",
    "Rewrite a text into another text (instructions, paraphrase).",
    args=(TEXT,),
    outputs=(Output("text", "text"),),
    noun="rewriting the text",
    say=words.headed_as("Result", "The model returned an empty text."),
)
