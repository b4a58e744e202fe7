"""summarization: what it takes and gives, and how an answer says it."""

from __future__ import annotations

from hugginggpt.tools.experts import words
from hugginggpt.tools.experts.tasks import TEXT, Output, TaskType

TASK = TaskType(
    "summarization",
    "Summarise a text.",
    args=(TEXT,),
    outputs=(Output("text", "text"),),
    noun="the summary",
    say=words.headed_as("Summary", "The summary is empty."),
)
