"""text-classification: what it takes and gives, and how an answer says it."""

from __future__ import annotations

from hugginggpt.tools.experts import words
from hugginggpt.tools.experts.tasks import TEXT, Cue, Output, Planning, TaskType
from hugginggpt.tools.lexicon import LANGUAGE_CHOICE, POLAR_CHOICE

_LANGUAGE_ID = (
    r"\bwhich language|\bwhat language|\bdetect (?:the |its )?language|\bidentify (?:the |its )?"
    r"language|\blanguage (?:is|of)\b|\bwhat(?:'s| is) the language|\bquelle (?:est la )?langue"
    r"|\ben quelle langue|\bqu[ée] idioma|\bcu[aá]l es el idioma|\ben qu[ée] idioma"
    r"|\bwelche sprache|\bin welcher sprache|\bqual (?:é )?(?:a )?l[ií]ngua|\b(?:em )?que l[ií]ngua"
    r"|\bqual idioma|\bque idioma|\b(?:in )?welke taal|\bwat voor taal|\b(?:in )?che lingua"
    r"|\bquale lingua|什么语言|哪种语言|哪国语言|语种|哪门语言"
    rf"|\b(?:is|are|was) (?:it|this|that|they) (?:in |written in )?(?:{LANGUAGE_CHOICE.pattern})")
_SENTIMENT = (
    r"\bsentiment|\bpositive\b|\bnegative\b|\btone\b|\bmood\b|\bemotion|\bfeel(?:s|ing|ings)?\b"
    r"|\bangry\b|\bhappy\b|\bupset\b|\bopinion|\bpolarity|\btoxic|\bspam\b|\bsarcas|\bpositi[fv]"
    r"|\bn[ée]gati[fv]|\bsentimiento|\bemoci[oó]n|\bpositivo|\bnegativo|\bstimmung|\bgef[üu]hl"
    r"|\bpositiv|\bnegativ|\bpositief|\bnegatief|\bstemming|\bsentimento|\bton\b|\bde qu[ée] humor"
    r"|\bd'humeur|\bhumeur|\blaune|情感|情绪|正面"
    r"|负面|积极|消极|褒贬|态度|心情"
    rf"|{POLAR_CHOICE.pattern}")

TASK = TaskType(
    "text-classification",
    "Classify a text (sentiment, topic, ...).",
    args=(TEXT,),
    outputs=(Output("labels", "labels"),),
    aliases=("sentiment-analysis",),
    cues=(Cue(_LANGUAGE_ID, intent="language", rank=0),
          Cue(_SENTIMENT, intent="sentiment", rank=180)),
    planning=Planning(ask="classify", told_before=True),
    kinds=("sentiment", "emotion", "language"),
    picks_one=True,
    noun="the classification",
    say=words.classified(),
)
