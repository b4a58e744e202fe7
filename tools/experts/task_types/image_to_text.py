"""image-to-text: what it takes and gives, and how an answer says it."""

from __future__ import annotations

from hugginggpt.tools.experts.tasks import IMAGE, Cue, Output, Planning, TaskType
from hugginggpt.tools.experts.words import Finished, headed


def _image_to_text(done: Finished) -> str:
    text = done.outputs.get("text")
    reads = any(word in done.model.lower() for word in ("ocr", "donut")) or (
        isinstance(text, str) and "\n" in text.strip())  # a caption is one line
    return headed("The image says" if reads else "Caption", done.outputs.get("text"),
                   "No text was read in the image." if reads else "The caption is empty.")


TASK = TaskType(
    "image-to-text",
    "Caption an image, or read the text in it (OCR).",
    args=(IMAGE,),
    outputs=(Output("text", "text"),),
    aliases=("image-captioning", "ocr"),
    cues=(Cue(
        r"\bcaption|\bdescri(?:be|ption)\b|\bocr\b|\bextract (?:the |all |any )?(?:text|words)"
        r"|\bread (?:the |out the )?(?:text|words|writing|sign|label|document)|\bwhat (?:does|do)"
        r" (?:it|the [^?]{1,40}|this [^?]{1,40}) say\b|\bwhat(?:'s| is) (?:written|shown|on|in)"
        r" (?:in |on )?(?:the |this |my )?(?:image|photo|picture|pic|screenshot|scan)"
        r"|\bwhat(?:'s| is) (?:in|on) (?:the |this |my )?FILE\b"
        r"|\btext (?:from|in|of)\b|\bl[ée]gende"
        r"|\bd[ée]cri[rstv]|\bdescrib[ea]|\bbeschreib|\bbildunterschrift|\btexto de|\btext aus"
        r"|描述|说明文字|配文|识别.{0,6}文字|提取.{0,6}文字|图中.{0,4}文字|写了什么|图片里|照片里"
        r"|\bqu[ée] (?:pone|dice)\b|\bque dit\b|\bqu'est-ce qui est [ée]crit|\bwas steht"
        r"|\bwas sagt (?:das|der|die)|\bo que (?:diz|est[aá] escrito)|\bque diz\b|\bwat staat er"
        r"|\bwat zegt (?:het|dit|de|deze)\b|\bcosa (?:dice|c'[èe] scritto)"
        r"|写的是什么|写着什么|上面写",
        needs="image", rank=140),),
    planning=Planning(reads="image"),
    noun="reading the image",
    say=_image_to_text,
)
