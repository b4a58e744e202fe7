"""text-generation: what it takes and gives, and how an answer says it."""

from __future__ import annotations

from hugginggpt.tools.experts import words
from hugginggpt.tools.experts.tasks import TEXT, Cue, Output, Planning, TaskType

TASK = TaskType(
    "text-generation",
    "Continue or answer a prompt with generated text.",
    args=(TEXT,),
    outputs=(Output("text", "text"),),
    nondeterministic=True,
    cues=(Cue(
        r"\bwrite|\bcompose|\bcontinue|\bdraft|\bcome up with|\bbrainstorm|\bcomplete (?:this|"
        r"the) (?:sentence|story|text)|\bstory|\bpoem|\bhaiku|\bslogan|\bjoke|\blimerick|\btweet"
        r"|\bgenerate (?:a |an |some )?(?:text|list|title|name|description|email|letter)"
        r"|\b[ée]cri[rstv]|\bescrib|\bredact|\bschreib|\bverfass|写|编一个|创作|作一首",
        weak=True, rank=250),),
    planning=Planning(combines=True, generative=True),
    noun="the text generation",
    say=words.headed_as("Generated text", "The model generated nothing."),
)
