"""text2text-generation: what it takes and gives, and how an answer says it."""

from __future__ import annotations

from hugginggpt.tools.experts import words
from hugginggpt.tools.experts.tasks import TEXT, Cue, Output, Planning, TaskType

TASK = TaskType(
    "text2text-generation",
    "Rewrite a text into another text (instructions, paraphrase).",
    args=(TEXT,),
    outputs=(Output("text", "text"),),
    cues=(Cue(
        r"\brewrite|\bparaphras|\brephrase|\breword|\bsimplif|\bmore formal|\bless formal"
        r"|\bmore polite|\bcorrect (?:the |my |its )?(?:grammar|spelling)|\bfix (?:the |my )?"
        r"(?:grammar|spelling|typos)|\bproofread|\breformul|\br[ée][ée]cri|\breescrib|\bparafras"
        r"|\bumformulier|\bumschreib|\bkorrigier|改写|润色|重写|改正|改一下",
        rank=190),),
    planning=Planning(combines=True, generative=True),
    noun="rewriting the text",
    say=words.headed_as("Result", "The model returned an empty text."),
)
