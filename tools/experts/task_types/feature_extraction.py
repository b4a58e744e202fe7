"""feature-extraction: what it takes and gives, and how an answer says it."""

from __future__ import annotations

from hugginggpt.tools.experts.tasks import TEXT, Cue, Output, TaskType
from hugginggpt.tools.experts.words import Finished, file_shown


def _embedding(done: Finished) -> str:
    ref = done.outputs.get("embedding")
    dims = ref.get("dims") if isinstance(ref, dict) else None
    size = f" ({dims} numbers)" if dims else ""
    return f"Computed the text's embedding{size}, saved in {file_shown(ref)}."


TASK = TaskType(
    "feature-extraction",
    "A sentence embedding of a text, stored as an artifact.",
    args=(TEXT,),
    outputs=(Output("embedding", "vector"),),
    aliases=("sentence-embedding",),
    cues=(Cue(
        r"\bembedding|\bvectori[sz]|\bvector\b|\bencode\b",
        rank=200),),
    noun="the embedding",
    say=_embedding,
)
