"""object-detection: what it takes and gives, and how an answer says it."""

from __future__ import annotations

from hugginggpt.tools.experts import words
from hugginggpt.tools.experts.tasks import IMAGE, Cue, Output, Planning, TaskType

TASK = TaskType(
    "object-detection",
    "Find objects in an image; returns an annotated image and boxes.",
    args=(IMAGE,),
    outputs=(Output("image", "image"), Output("objects", "labels")),
    cues=(Cue(
        r"\bdetect|\bobjects?\b|\bbounding box|\blocate\b|\bfind (?:all |every )?(?:the )?\w+ "
        r"(?:in|on)\b|\bcount (?:the |all |how many )|\bhow many\b|\bspot (?:the|all|every)"
        r"|\bd[ée]tect|\bobjet|\bobjeto|\berkenn|\bobjekt|\bcombien|\bcu[aá]nt[oa]s|\bwie viele"
        r"|检测|物体|目标|数一数|有几个|有多少|找出|有什么东西|哪些东西|什么物品",
        needs="image", rank=130),),
    planning=Planning(ask="find", replaces="named", answers="presence"),
    noun="the object detection",
    say=words.objects,
)
