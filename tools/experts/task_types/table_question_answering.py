"""table-question-answering: what it takes and gives, and how an answer says it."""

from __future__ import annotations

from hugginggpt.tools.experts import words
from hugginggpt.tools.experts.tasks import QUESTION, TABLE, Output, Planning, TaskType

TASK = TaskType(
    "table-question-answering",
    "Answer a question about a table (a CSV file).",
    args=(TABLE, QUESTION),
    outputs=(Output("text", "text"),),
    aliases=("tableqa",),
    planning=Planning(ask="question", replaces="at_hand"),
    noun="answering from the table",
    say=words.headed_as("Answer from the table",
                        "No answer was found in the table."),
)
