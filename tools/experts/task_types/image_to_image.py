"""image-to-image: what it takes and gives, and how an answer says it."""

from __future__ import annotations

from hugginggpt.tools.experts import words
from hugginggpt.tools.experts.tasks import IMAGE, Arg, Cue, Output, TaskType

TASK = TaskType(
    "image-to-image",
    "Transform an image, optionally following a text instruction.",
    args=(IMAGE, Arg("text", "text", required=False, description="what to change")),
    outputs=(Output("image", "image"),),
    aliases=("image-editing",),
    cues=(Cue(
        r"\bedit|\blook like\b|\bturn (?:it|the (?:photo|image|picture)|this (?:photo|image)"
        r"|FILE\s*) into|\bmake (?:it|the (?:photo|image|picture)) (?:look|more|less"
        r"|black|bright|dark)"
        r"|\bstyle of|\bcartoon|\bcolori[sz]|\bsharpen|\bupscale|\bretouch|\bbrighten|\bblack and"
        r" white|\bwatercolou?r|\bsketch version|\bmodifi|\bbearbeit|修图|风格|变成|改成",
        needs="image", rank=150),),
    noun="editing the image",
    say=words.saved("Edited image", "image"),
)
