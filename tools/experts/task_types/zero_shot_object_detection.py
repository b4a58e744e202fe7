"""zero-shot-object-detection: what it takes and gives, and how an answer says it."""

from __future__ import annotations

from typing import Any

from hugginggpt.tools.experts.tasks import IMAGE, Arg, Cue, Output, TaskType
from hugginggpt.tools.experts.words import (
    MAX_LISTED,
    Finished,
    file_shown,
    label_items,
    label_name,
    listed,
    plural,
    shown_score,
)

_ARTICLES = r"the|a|an|my|our|your|any|every|each|all"
_FUNCTION = (r"and|or|in|on|at|of|from|with|inside|within|to|for|about|by|into|it|its|them"
             r"|their|this|that|these|those|which")
_ANY_KIND = r"objects?|things?|items?|areas?|regions?|parts?|portions?|sections?|spots?"
_IN_PICTURE = (r"located|hidden|present|shown|visible|seen|placed|depicted|pictured|displayed"
               r"|written|printed|drawn")
_WORD = rf"\b(?!(?:{_ARTICLES}|{_FUNCTION}|{_ANY_KIND}|{_IN_PICTURE})\b)[^\W\d_]+"
_THING = rf"{_WORD}(?:[ -]{_WORD}){{1,3}}"
"""A thing described in two words or more ("red mug", "car keys"): what a detector of
fixed classes does not know. Content words only: a bare class ("the dogs", "faces") is
object detection's, and objects, things, items or areas of any kind ("the other
objects", "the relevant area") name nothing to look for."""
_WHERE = rf"(?:\s+(?:{_IN_PICTURE}))?"
"""A word saying the thing is in the picture, after it and not part of it: "the green
apple located in the image" looks for a green apple, "the text hidden in the image" for
text (one word: not this task's)."""
_MORE = (rf"(?:\s*,\s*(?:(?:and|or)\s+)?|\s+(?:and|or)\s+)(?:(?:{_ARTICLES})\s+)?"
         rf"{_WORD}(?:[ -]{_WORD}){{0,3}}")

_PICTURE = (r"(?:it|them|(?:(?:the|this|that|my|your|our|these|those)\s+)?(?:[^\W\d_]+\s+)?"
            r"(?:image|photo|picture|pic|shot|screenshot|snapshot|frame|scene)s?\b"
            r"|FILE\b)")
"""Where the things are looked for: a picture, by name or by its file ("in the edited
image", "on kitchen.jpg", a file name being ``FILE`` to the cues), not a text or a
document read for an answer."""


def _found(done: Finished) -> str:
    """What was found of what was asked (where, and how well each box matched), what was
    not, and the image the boxes are drawn on."""
    asked = [label.strip() for label in str(done.args.get("labels", "")).split(",")
             if label.strip()]
    groups: dict[str, list[dict[str, Any]]] = {}
    for item in label_items(done.outputs.get("objects")):
        groups.setdefault(label_name(item), []).append(item)
    image = file_shown(done.outputs.get("image"))
    missing = [label for label in asked
               if label_name({"label": label}).lower() not in {g.lower() for g in groups}]
    if not groups:
        looked_for = " or ".join(asked) if asked else "object"
        return (f"No {looked_for} was found in the image: nothing in it matched well enough. "
                f"The image is at {image}.")
    parts = [f"{_counted(label, len(boxes))} ({'; '.join(_box(b) for b in boxes[:4])}"
             f"{'; ...' if len(boxes) > 4 else ''})"
             for label, boxes in list(groups.items())[:MAX_LISTED]]
    not_found = f" No {' or '.join(missing)} was found." if missing else ""
    return (f"Found {listed(parts, max(0, len(groups) - MAX_LISTED))}; the boxes are drawn "
            f"on {image}.{not_found}")


def _counted(label: str, n: int) -> str:
    """"a red mug", "2 red mugs"; a label already plural ("car keys") as it is."""
    return label if label.endswith("s") and not label.endswith("ss") else plural(label, n)


def _box(item: dict[str, Any]) -> str:
    """One box: its score (a number: a detector scores each box on its own, so a score
    is no probability) and where it is, in pixels."""
    score = shown_score(item.get("score"), probabilities=False)
    box = item.get("box")
    at = (f"at x {box['xmin']}-{box['xmax']}, y {box['ymin']}-{box['ymax']}"
          if isinstance(box, dict) and {"xmin", "xmax", "ymin", "ymax"} <= set(box) else "")
    return ", ".join(part for part in (f"score {score}" if score else "", at) if part)


TASK = TaskType(
    "zero-shot-object-detection",
    "Find the things the user names in an image (open-vocabulary detection, as OWL-ViT "
    "does); returns the image with the boxes drawn, and the boxes.",
    args=(IMAGE, Arg("labels", "param", description="comma-separated things to look for")),
    outputs=(Output("image", "image"), Output("objects", "labels")),
    cues=(Cue(  # English only: OWL-ViT's and OWLv2's text towers read English labels
        r"\b(?:find|locate|spot|detect|look for|search for|point out|highlight|circle|mark"
        rf"|show me|where(?:'s| is| are))\s+(?:(?:{_ARTICLES})\s+)*(?P<labels>{_THING}"
        rf"(?:{_MORE})*){_WHERE}\s+(?:in|on|inside|within)\s+{_PICTURE}",
        needs="image", rank=125),),
    noun="the search of the image",
    say=_found,
)
