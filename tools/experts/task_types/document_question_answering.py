"""document-question-answering: what it takes and gives, and how an answer says it."""

from __future__ import annotations

from hugginggpt.tools.experts import words
from hugginggpt.tools.experts.tasks import IMAGE, QUESTION, Output, Planning, TaskType

TASK = TaskType(
    "document-question-answering",
    "Answer a question about a document image (a scan, a receipt, a form).",
    args=(IMAGE, QUESTION),
    outputs=(Output("text", "text"),),
    aliases=("docqa",),
    planning=Planning(ask="question", documents=True, answers="written"),
    noun="the question about the document",
    say=words.headed_as("From the document",
                        "No answer was found in the document."),
)
