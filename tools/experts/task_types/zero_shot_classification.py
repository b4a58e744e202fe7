"""zero-shot-classification: what it takes and gives, and how an answer says it."""

from __future__ import annotations

from hugginggpt.tools.experts import words
from hugginggpt.tools.experts.tasks import TEXT, Arg, Cue, Output, Planning, TaskType

TASK = TaskType(
    "zero-shot-classification",
    "Classify a text into labels the user names.",
    args=(TEXT, Arg("labels", "param", description="comma-separated candidate labels")),
    outputs=(Output("labels", "labels"),),
    cues=(Cue(
        r"\bclassify|\bcategori[sz]e|\bsort (?:it|this|them|these|the \w+)? ?into|\blabel (?:it|"
        r"this)|\btag (?:it|this)|\bwhich (?:topic|category|class)|\bis (?:it|this|that) about"
        r"|\bfile (?:it|this) under|\bclass(?:e|er|ifie|ific)|\bcat[ée]gor|\bclasific"
        r"|\bklassifizier"
        r"|\beinordn|\bkategori|分类|归类|属于哪|属于",
        rank=230),),
    planning=Planning(ask="classify", told_before=True),
    picks_one=True,
    noun="the classification",
    say=words.best_fit("The best fit is"),
)
