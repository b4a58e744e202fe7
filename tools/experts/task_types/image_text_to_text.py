"""image-text-to-text: what it takes and gives, and how an answer says it."""

from __future__ import annotations

from hugginggpt.tools.experts.tasks import IMAGE, Arg, Cue, Output, Planning, TaskType
from hugginggpt.tools.experts.words import Finished, headed


def _image_text(done: Finished) -> str:
    asked = bool(done.args.get("text", "").strip())
    return headed("Answer" if asked else "Description", done.outputs.get("text"),
                   "The model gave an empty answer.")


TASK = TaskType(
    "image-text-to-text",
    "A vision-language model answers an instruction or question about an image "
    "(describe it in detail, read it, reason about it).",
    args=(IMAGE, Arg("text", "text", required=False,
          description="the instruction or question (default: describe the image)")),
    outputs=(Output("text", "text"),),
    aliases=("vision-language", "vlm"),
    nondeterministic=True,
    cues=(Cue(
        r"\bin (?:great |full )?detail\b|\bdetailed description|\bexplain (?:the|this|what)"
        r" (?:image|photo|picture|chart|diagram|meme|graph)|\breason about|\bstep by step",
        needs="image", rank=110),),
    planning=Planning(image_question=True),
    noun="the question about the image",
    say=_image_text,
)
