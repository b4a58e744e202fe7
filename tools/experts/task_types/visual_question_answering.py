"""visual-question-answering: what it takes and gives, and how an answer says it."""

from __future__ import annotations

from hugginggpt.tools.experts import words
from hugginggpt.tools.experts.tasks import IMAGE, QUESTION, Output, Planning, TaskType

TASK = TaskType(
    "visual-question-answering",
    "Answer a question about an image.",
    args=(IMAGE, QUESTION),
    outputs=(Output("text", "text"),),
    aliases=("vqa",),
    planning=Planning(ask="question", image_question=True),
    noun="the question about the image",
    say=words.headed_as("Answer", "The model gave an empty answer."),
)
