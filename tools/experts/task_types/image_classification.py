"""image-classification: what it takes and gives, and how an answer says it."""

from __future__ import annotations

from hugginggpt.tools.experts.tasks import IMAGE, Cue, Output, TaskType
from hugginggpt.tools.experts.words import Finished, classified, label_items, label_name

_AS_CLASSIFIED = classified("image")


def _image_classification(done: Finished) -> str:
    labels = label_items(done.outputs.get("labels"))
    if not labels:
        return "No label was given for the image."
    top = {**labels[0], "label": label_name(labels[0]).split(",")[0]}
    return _AS_CLASSIFIED(Finished(done.task, {"labels": [top, *labels[1:]]},
                                  probabilities=done.probabilities))


TASK = TaskType(
    "image-classification",
    "Classify what an image shows.",
    args=(IMAGE,),
    outputs=(Output("labels", "labels"),),
    cues=(Cue(
        r"\bclassify (?:the |this |my )?(?:image|photo|picture|pic)|\bwhat (?:kind|type|species"
        r"|breed|sort) of|\bwhat (?:breed|species|kind|type|sort)\b|\bwhich (?:animal|species"
        r"|breed|bird|plant|flower|dog|cat|car|kind)"
        r"|\bidentify (?:the )?(?:animal|species|breed|object|plant|bird|flower)|\bwhat is this"
        r"\b|\bquel(?:le)? (?:type|genre|espèce|race)|\bqu[ée] (?:tipo|clase|especie|raza)"
        r"|\bwelche (?:art|rasse|sorte)|什么动物|什么品种|哪种",
        needs="image", rank=120),),
    kinds=("emotion",),
    picks_one=True,
    noun="classifying the image",
    say=_image_classification,
)
