"""image-segmentation: what it takes and gives, and how an answer says it."""

from __future__ import annotations

from hugginggpt.tools.experts.tasks import IMAGE, Cue, Output, TaskType
from hugginggpt.tools.experts.words import (
    MAX_LISTED,
    Finished,
    file_shown,
    label_items,
    label_name,
    listed,
    percent,
    plural,
    shown_score,
)


def _segments(done: Finished) -> str:
    found = label_items(done.outputs.get("segments"))
    where = f"the segment map is at {file_shown(done.outputs.get('image'))}"
    if not found:
        return f"No segments were found; {where}."
    parts = []
    for item in found[:MAX_LISTED]:
        if isinstance(item.get("area"), float):
            parts.append(f"{label_name(item)} ({percent(item['area'])} of the image)")
        elif isinstance(item.get("score"), float):
            parts.append(f"{label_name(item)} ({shown_score(item['score'], done.probabilities)})")
        else:
            parts.append(label_name(item))
    return (f"Found {plural('segment', len(found))}: "
            f"{listed(parts, max(0, len(found) - MAX_LISTED))}; {where}.")


TASK = TaskType(
    "image-segmentation",
    "Segment an image; returns a mask image and the segments.",
    args=(IMAGE,),
    outputs=(Output("image", "image"), Output("segments", "labels")),
    cues=(Cue(
        r"\bsegment|\bmasks?\b|\bcut out|\bcut (?:the |a |an )?\w+ out\b"
        r"|\bremove the background|\bbackground removal"
        r"|\bseparate the (?:foreground|background|objects)|\bsegmenta|\bsegmentier|分割|抠图",
        needs="image", rank=90),),
    noun="the segmentation",
    say=_segments,
)
