"""text-classification: what it takes and gives, and how an answer says it."""

from __future__ import annotations

from hugginggpt.tools.experts import words
from hugginggpt.tools.experts.tasks import TEXT, Output, TaskType

TASK = TaskType(
    "text-classification",
    "Classify a text (sentiment, topic, ...).",
    args=(TEXT,),
    outputs=(Output("labels", "labels"),),
    aliases=("sentiment-analysis",),
    noun="the classification",
    say=words.classified(),
)
