"""text-generation: what it takes and gives, and how an answer says it."""

from __future__ import annotations

from hugginggpt.tools.experts import words
from hugginggpt.tools.experts.tasks import TEXT, Output, TaskType

TASK = TaskType(
    "text-generation",
    "Continue or answer a prompt with generated text.",
    args=(TEXT,),
    outputs=(Output("text", "text"),),
    nondeterministic=True,
    noun="the text generation",
    say=words.headed_as("Generated text", "The model generated nothing."),
)
