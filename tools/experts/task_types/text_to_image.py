"""text-to-image: what it takes and gives, and how an answer says it."""

from __future__ import annotations

from hugginggpt.tools.experts import words
from hugginggpt.tools.experts.tasks import TEXT, Cue, Output, Planning, TaskType

TASK = TaskType(
    "text-to-image",
    "Generate an image from a text prompt.",
    args=(TEXT,),
    outputs=(Output("image", "image"),),
    nondeterministic=True,
    cues=(Cue(
        r"\bdraw|\bpaint\b|\bsketch\b|\billustrat|\b(?:generate|create|make|produce|render|"
        r"design|give me) (?:me )?(?:an? |some |one )?(?:\w+ )?(?:image|picture|photo|drawing|"
        r"illustration|painting|poster|logo|wallpaper|artwork|icon)s?\b|\bdessine|\bg[ée]n[eè]re"
        r"\w* (?:une |un )?(?:image|dessin)|\bcr[ée]e\w* (?:une )?image|\bdibuj|\bgenera\w* (?:una"
        r" )?(?:imagen|foto)|\bcrea\w* (?:una )?imagen|\bzeichne|\berstell\w* .{0,20}bild"
        r"|\bgeneriere .{0,20}bild|\bmale\b|画|生成.{0,6}(?:图|图片|图像|照片)",
        rank=170),),
    planning=Planning(stage="make", generative=True, prompt=True),
    noun="generating the image",
    say=words.saved("Image", "image"),
)
