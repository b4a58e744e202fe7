"""zero-shot-classification: what it takes and gives, and how an answer says it."""

from __future__ import annotations

from hugginggpt.tools.experts import words
from hugginggpt.tools.experts.tasks import TEXT, Arg, Output, TaskType

TASK = TaskType(
    "zero-shot-classification",
    "Classify a text into labels the user names.",
    args=(TEXT, Arg("labels", "param", description="comma-separated candidate labels")),
    outputs=(Output("labels", "labels"),),
    noun="the classification",
    say=words.best_fit("The best fit is"),
)
