"""sentence-similarity: what it takes and gives, and how an answer says it."""

from __future__ import annotations

import re

from hugginggpt.tools.experts.tasks import Arg, Cue, Output, TaskType
from hugginggpt.tools.experts.words import Finished


def _similarity(done: Finished) -> str:
    score = done.outputs.get("score")
    if not isinstance(score, (int, float)):
        return "No similarity score came out."
    texts = [done.args.get("text", ""), done.args.get("text2", "")]
    sentences = all(t and "<GENERATED>" not in t and len(t) < 200
                    and len(re.findall(r"[.!?](\s|$)", t.strip())) <= 1 for t in texts)
    what = "sentences" if sentences else "texts"
    if score >= 0.8:
        verdict = "mean nearly the same"
    elif score >= 0.6:
        verdict = "are similar"
    elif score >= 0.4:
        verdict = "are related but not the same"
    elif score >= 0.2:
        verdict = "are only loosely related"
    else:
        verdict = "are unrelated"
    return f"The two {what} {verdict} (similarity {score:.2f})."


TASK = TaskType(
    "sentence-similarity",
    "How similar two texts are in meaning (cosine of sentence embeddings, -1..1).",
    args=(Arg("text", "text", description="the first text"),
          Arg("text2", "text", description="the second text")),
    outputs=(Output("score", "number"),),
    cues=(Cue(
        r"\bsimilar|\bsame meaning|\bhow close\b|\bparaphrases? of each other|\bmean the same"
        r"|\bthe same thing\b|\bsame (?:content|words|message)|\bsemblabl|\bsimilaire"
        r"|\bsimilares?\b|\bparecid|\b[äa]hnlich|\b(?:as|say|mean) the same\b|\bse parecen"
        r"|\blo mismo"
        r"|\bla m[êe]me chose|\bm[êe]me sens|\bsemelhant|\bmesm[oa] (?:coisa|sentido)"
        r"|\bo mesmo\b|\bdasselbe|\bdas gleiche|\bgleiche bedeutung|\bhetzelfde"
        r"|\blijken op elkaar|\bvergelijkbaar|\bsimil[ei]|\bstessa cosa"
        r"|相似|相近|意思一样|一样吗",
        rank=20),),
    noun="the similarity",
    say=_similarity,
)
