"""fill-mask: what it takes and gives, and how an answer says it."""

from __future__ import annotations

from hugginggpt.tools.experts.tasks import Arg, Output, TaskType
from hugginggpt.tools.experts.words import Finished, label_items, ranked, shown_text


def _fill_mask(done: Finished) -> str:
    labels = label_items(done.outputs.get("labels"))
    text = shown_text(done.outputs.get("text"))
    if not labels:
        return f"Filled in: {text}"
    guesses = ranked(labels, done.probabilities, limit=4).replace("; then", "; other guesses:")
    return f"Filled in: {text} (the word: {guesses})"


TASK = TaskType(
    "fill-mask",
    "Fill in the blank of a sentence: the text holds one [MASK] (or <mask>, ___).",
    args=(Arg("text", "text", description="a sentence with one [MASK] where a word is missing"),),
    outputs=(Output("text", "text"), Output("labels", "labels")),
    aliases=("fill-in-the-blank",),
    noun="filling in the blank",
    say=_fill_mask,
)
