"""question-answering: what it takes and gives, and how an answer says it."""

from __future__ import annotations

from hugginggpt.tools.experts import words
from hugginggpt.tools.experts.tasks import QUESTION, Arg, Output, TaskType

TASK = TaskType(
    "question-answering",
    "Answer a question from a context text.",
    args=(QUESTION, Arg("text", "text", description="the context to answer from")),
    outputs=(Output("text", "text"),),
    noun="answering the question",
    say=words.headed_as("Answer", "No answer was found in the text."),
)
