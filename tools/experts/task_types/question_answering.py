"""question-answering: what it takes and gives, and how an answer says it."""

from __future__ import annotations

from hugginggpt.tools.experts import words
from hugginggpt.tools.experts.tasks import QUESTION, Arg, Cue, Output, Planning, TaskType

TASK = TaskType(
    "question-answering",
    "Answer a question from a context text.",
    args=(QUESTION, Arg("text", "text", description="the context to answer from")),
    outputs=(Output("text", "text"),),
    cues=(Cue(
        r"\baccording to\b|\bbased on (?:the|this|that)\b|\bfrom (?:the|this) (?:text|passage|"
        r"article|paragraph|email|letter)\b|\bd'après\b|\bselon\b|\bseg[uú]n\b|\blaut\b"
        r"|\bgemäß\b|根据",
        rank=240),),
    planning=Planning(ask="question"),
    noun="answering the question",
    say=words.headed_as("Answer", "No answer was found in the text."),
)
