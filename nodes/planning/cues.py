"""Cue words: which task types a clause asks for, in English, French, Spanish, German,
Portuguese, Dutch, Italian and Chinese (the first five most fully).

The bundled MiniLM only knows English, so the offline planner reads what a clause asks
for from these words first, and falls back on the example bank's nearest one-step
example for a clause they do not cover. The table is hand-written; each entry is a task
type, the kind of input it needs (a cue for a caption means nothing without an image to
caption), and a pattern. A clause is matched against every entry; where two matches
overlap, the one earlier in the table wins ("detect the language" is language
identification, not object detection), and a *weak* cue ("write", "tell me") counts only
when nothing else matched.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from hugginggpt.nodes.planning.reading import LANGUAGE_CHOICE, POLAR_CHOICE

__all__ = ["Cue", "CUES", "Match", "cues_in", "DOCUMENT_NAME", "EVERY_KIND", "GENERIC_LOOK"]


@dataclass(frozen=True)
class Cue:
    task: str
    pattern: re.Pattern[str]
    needs: str | None = None
    """The kind of input the task needs (image, audio, table); None for a text task."""
    weak: bool = False
    intent: str = ""
    """What was asked, where one task type serves several asks (sentiment, language)."""


@dataclass(frozen=True)
class Match:
    task: str
    start: int
    end: int
    cue: Cue


def _cue(task: str, pattern: str, needs: str | None = None, *, weak: bool = False,
         intent: str = "") -> Cue:
    return Cue(task, re.compile(pattern, re.IGNORECASE), needs, weak, intent)


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
CUES: tuple[Cue, ...] = (
    _cue("text-classification", _LANGUAGE_ID, intent="language"),
    _cue("token-classification",
         r"\bentit|\bner\b|\bpeople,? (?:and |or )?(?:places|organi[sz]ations|companies)"
         r"|\bnames? of (?:the )?(?:people|persons|places|companies|organi[sz]ations|cities)"
         r"|\bwho and where\b|\bwhich (?:people|persons|names|places|companies|organi[sz]ations"
         r"|cities|countries)|\b(?:people|persons|names|places|locations|companies|"
         r"organi[sz]ations|cities|countries|dates)\b[^.?!]{0,30}\bmentioned|\b(?:extract|list|"
         r"find|pull out|get) (?:all )?(?:the )?(?:names|people|persons|places|locations|"
         r"organi[sz]ations|companies|dates)|\bnoms (?:de personnes|propres|des)|\bpersonnes"
         r"|\blieux\b|\bnombres (?:propios|de)|\bpersonas\b|\blugares\b|\bnamen\b|\bpersonen\b"
         r"|\borte\b|实体|人名|地名|机构名|组织名|公司名"
         r"|\b(?:every|evry|each|all|any) (?:the )?(?:company|companies|person|people|persons|"
         r"organi[sz]ations?|places?|names?|brands?)\b[^.?!]{0,30}\b(?:mention|name|said)"
         r"|\ball the \w+ (?:mentioned|named)\b|\bwho(?:'s| is| was)? mentioned"
         r"|\b(?:wer|wen|welche \w+)\b.{0,40}(?:erwähnt|genannt)|\bmentionn[ée]|\bmencionad"
         r"|\bnombrad|提到了谁|提到的|提及"),
    _cue("sentence-similarity",
         r"\bsimilar|\bsame meaning|\bhow close\b|\bparaphrases? of each other|\bmean the same"
         r"|\bthe same thing\b|\bsame (?:content|words|message)|\bsemblabl|\bsimilaire"
         r"|\bsimilares?\b|\bparecid|\b[äa]hnlich|\b(?:as|say|mean) the same\b|\bse parecen"
         r"|\blo mismo"
         r"|\bla m[êe]me chose|\bm[êe]me sens|\bsemelhant|\bmesm[oa] (?:coisa|sentido)"
         r"|\bo mesmo\b|\bdasselbe|\bdas gleiche|\bgleiche bedeutung|\bhetzelfde"
         r"|\blijken op elkaar|\bvergelijkbaar|\bsimil[ei]|\bstessa cosa"
         r"|相似|相近|意思一样|一样吗"),
    _cue("audio-to-audio",
         r"\bdenois|\bnoise|\bhiss\b|\bhum\b|\bstatic\b|\bcrackl|\bclean (?:up )?(?:the |this "
         r"|my )?(?:audio|recording|sound)"
         r"|\benhance (?:the |this |my )?(?:audio|recording|speech|sound|voice)|\bseparate the"
         r" (?:voice|vocals|speakers|sources)|\bisolate|\bremove (?:the )?(?:background )?(?:hum|"
         r"music|hiss)|\bbruit|\bruido|\brauschen|降噪|去噪|噪音|杂音", "audio"),
    _cue("audio-classification",
         r"\bwhat (?:sound|noise|kind of (?:sound|noise)|instrument|animal|bird)s?\b|\bwhich "
         r"(?:sound|instrument|bird|animal)|\bclassify (?:the |this )?(?:sound|audio|recording"
         r"|clip)"
         r"|\bgenre\b|\bspeaker'?s? (?:mood|emotion|gender|age)|\bemotion in (?:the |his |her )?"
         r"voice|\bquel (?:son|bruit)|\bqu[ée] (?:sonido|ruido)|\bwelches? (?:geräusch|instrument)"
         r"|什么声音|什么乐器", "audio"),
    _cue("automatic-speech-recognition",
         r"\btranscri|\bspeech[- ]to[- ]text|\bwrite down what|\bwrite (?:it|this|that) (?:out"
         r"|down)\b|\bwhat (?:is|was|'s) (?:being )?"
         r"said|\bwhat (?:does|did) (?:he|she|they|the speaker|the caller|it|\w+) say|\bdictat"
         r"|\btranskri|\babschrift|\btranscrev|\bo que (?:ele|ela|a pessoa) (?:diz|disse)"
         r"|\buitschrijven"
         r"|\bwat (?:zegt|zei) (?:hij|zij|ze)|\btrascriv|\bcosa (?:dice|ha detto)"
         r"|\bwas .{0,20}gesagt|\bce qu'(?:il|elle|on) dit|\bce qui est "
         r"dit|\blo que (?:se )?dice|\bqu[ée] dice|转录|转写|转成文字|转为文字|听写|说了什么"
         r"|语音识别|说的是什么", "audio"),
    _cue("text-to-speech",
         r"\baloud\b|\bout loud\b|\bread (?:it|this|that|them|the \w+) (?:out|to me)\b|\bspeak"
         r"\b|\bspoken version|\bvoice ?over|\bnarrat|\btext[- ]to[- ]speech|\btts\b|\baudio "
         r"(?:version|file|clip|recording) of|\bturn (?:it|this|that|\w+) into (?:speech|audio)"
         r"|\b(?:to|into) (?:an? )?(?:speech|audio|mp3|wav|voice recording)\b|\baudio (?:file "
         r"|clip |version )?(?:from|of)\b|\bmake (?:an? )?(?:audio|recording|mp3)\b"
         r"|\bsay (?:it|this|that)\b|\bpronounc|\bvoice message|\bspoken\b"
         r"|\bas (?:an? )?(?:audio|speech|voice|mp3|sound)(?: file| clip)?\b"
         r"|\bvoix haute|\bhaute voix|\bvoz alta|\bvoorlezen|\bhardop|\bad alta voce|\bvorles"
         r"|\bvorlesen|\blaut vor|\bsprich|\bmp3 of"
         r"|\blies\b.{0,60}\bvor\b|\bl[ée]elo|\blee (?:esto|este|esta|en voz)"
         r"|朗读|读出来|念出来|读给我|念给我|转成语音|语音合成|读一下|念一下|读出"),
    _cue("translation",
         r"\btranslat|\bvertaal|\bvertaling|\btraduc|\btradu[iz]|\btradu[sc]|\b[üu]bersetz"
         r"|\bueber?setz|翻译|翻成|译成"
         r"|译为|翻譯|譯成"),
    _cue("summarization",
         r"\bsumm?ar|\bsum (?:it |this |that |them )?up\b|\btl;?dr\b|\bgist\b|\bcondense|\bkey"
         r" points\b|\bmain points\b|\bboil (?:it|this) down|\bin (?:a few|one|two|three) "
         r"(?:sentences?|lines?|bullet)|\bshorten|\br[ée]sum[eé]|\br[ée]sumer|\br[ée]sumez"
         r"|\bsynth[eè]se|\bresum[eaio]|\bsamenvat|\briassum|\bresumen|\bresúm|\bzusammenfass"
         r"|\bzusammen\b|\bkurzfassung"
         r"|\b(?:short|shorter|brief|condensed|quick) (?:version|recap|overview)|\brecap\b"
         r"|总结|摘要|概括|归纳|概述|要点"),
    _cue("image-segmentation",
         r"\bsegment|\bmasks?\b|\bcut out|\bcut (?:the |a |an )?\w+ out\b"
         r"|\bremove the background|\bbackground removal"
         r"|\bseparate the (?:foreground|background|objects)|\bsegmenta|\bsegmentier|分割|抠图",
         "image"),
    _cue("depth-estimation",
         r"\bdepth|\bhow far\b|\bdistance map|\b3d\b|\bprofondeur|\bprofundidad|\btiefe|深度|景深",
         "image"),
    _cue("image-text-to-text",
         r"\bin (?:great |full )?detail\b|\bdetailed description|\bexplain (?:the|this|what)"
         r" (?:image|photo|picture|chart|diagram|meme|graph)|\breason about|\bstep by step",
         "image"),
    _cue("image-classification",
         r"\bclassify (?:the |this |my )?(?:image|photo|picture|pic)|\bwhat (?:kind|type|species"
         r"|breed|sort) of|\bwhat (?:breed|species|kind|type|sort)\b|\bwhich (?:animal|species"
         r"|breed|bird|plant|flower|dog|cat|car|kind)"
         r"|\bidentify (?:the )?(?:animal|species|breed|object|plant|bird|flower)|\bwhat is this"
         r"\b|\bquel(?:le)? (?:type|genre|espèce|race)|\bqu[ée] (?:tipo|clase|especie|raza)"
         r"|\bwelche (?:art|rasse|sorte)|什么动物|什么品种|哪种", "image"),
    _cue("object-detection",
         r"\bdetect|\bobjects?\b|\bbounding box|\blocate\b|\bfind (?:all |every )?(?:the )?\w+ "
         r"(?:in|on)\b|\bcount (?:the |all |how many )|\bhow many\b|\bspot (?:the|all|every)"
         r"|\bd[ée]tect|\bobjet|\bobjeto|\berkenn|\bobjekt|\bcombien|\bcu[aá]nt[oa]s|\bwie viele"
         r"|检测|物体|目标|数一数|有几个|有多少|找出|有什么东西|哪些东西|什么物品", "image"),
    _cue("image-to-text",
         r"\bcaption|\bdescri(?:be|ption)\b|\bocr\b|\bextract (?:the |all |any )?(?:text|words)"
         r"|\bread (?:the |out the )?(?:text|words|writing|sign|label|document)|\bwhat (?:does|do)"
         r" (?:it|the [^?]{1,40}|this [^?]{1,40}) say\b|\bwhat(?:'s| is) (?:written|shown|on|in)"
         r" (?:in |on )?(?:the |this |my )?(?:image|photo|picture|pic|screenshot|scan)"
         r"|\bwhat(?:'s| is) (?:in|on) (?:the |this |my )?FILE\b"
         r"|\btext (?:from|in|of)\b|\bl[ée]gende"
         r"|\bd[ée]cri[rstv]|\bdescrib[ea]|\bbeschreib|\bbildunterschrift|\btexto de|\btext aus"
         r"|描述|说明文字|配文|识别.{0,6}文字|提取.{0,6}文字|图中.{0,4}文字|写了什么|图片里|照片里"
         r"|\bqu[ée] (?:pone|dice)\b|\bque dit\b|\bqu'est-ce qui est [ée]crit|\bwas steht"
         r"|\bwas sagt (?:das|der|die)|\bo que (?:diz|est[aá] escrito)|\bque diz\b|\bwat staat er"
         r"|\bwat zegt (?:het|dit|de|deze)\b|\bcosa (?:dice|c'[èe] scritto)"
         r"|写的是什么|写着什么|上面写",
         "image"),
    _cue("image-to-image",
         r"\bedit|\blook like\b|\bturn (?:it|the (?:photo|image|picture)|this (?:photo|image)"
         r"|FILE\s*) into|\bmake (?:it|the (?:photo|image|picture)) (?:look|more|less"
         r"|black|bright|dark)"
         r"|\bstyle of|\bcartoon|\bcolori[sz]|\bsharpen|\bupscale|\bretouch|\bbrighten|\bblack and"
         r" white|\bwatercolou?r|\bsketch version|\bmodifi|\bbearbeit|修图|风格|变成|改成",
         "image"),
    _cue("text-to-video",
         r"\bvideo\b|\banimation\b|\banimate|\bvid[ée]o|视频|动画"),
    _cue("text-to-image",
         r"\bdraw|\bpaint\b|\bsketch\b|\billustrat|\b(?:generate|create|make|produce|render|"
         r"design|give me) (?:me )?(?:an? |some |one )?(?:\w+ )?(?:image|picture|photo|drawing|"
         r"illustration|painting|poster|logo|wallpaper|artwork|icon)s?\b|\bdessine|\bg[ée]n[eè]re"
         r"\w* (?:une |un )?(?:image|dessin)|\bcr[ée]e\w* (?:une )?image|\bdibuj|\bgenera\w* (?:una"
         r" )?(?:imagen|foto)|\bcrea\w* (?:una )?imagen|\bzeichne|\berstell\w* .{0,20}bild"
         r"|\bgeneriere .{0,20}bild|\bmale\b|画|生成.{0,6}(?:图|图片|图像|照片)"),
    _cue("text-classification", _SENTIMENT, intent="sentiment"),
    _cue("text2text-generation",
         r"\brewrite|\bparaphras|\brephrase|\breword|\bsimplif|\bmore formal|\bless formal"
         r"|\bmore polite|\bcorrect (?:the |my |its )?(?:grammar|spelling)|\bfix (?:the |my )?"
         r"(?:grammar|spelling|typos)|\bproofread|\breformul|\br[ée][ée]cri|\breescrib|\bparafras"
         r"|\bumformulier|\bumschreib|\bkorrigier|改写|润色|重写|改正|改一下"),
    _cue("feature-extraction", r"\bembedding|\bvectori[sz]|\bvector\b|\bencode\b"),
    _cue("conversational",
         r"\breply\b|\brespond\b|\bchat ?bot|\bchat with me|\bwhat would you (?:say|reply)"
         r"|\br[ée]pond|\bresponde|\bantworte|回复|回答他|回答她"),
    _cue("tabular-classification",
         r"\bclassify|\bpredict|\bfor each row|\beach row|\bevery row|\bcategori[sz]e|\bmodel\b"
         r"|\blikely to|\bwill (?:leave|churn|default|buy|pay)|\bchurn|\bfraud", "table"),
    _cue("zero-shot-classification",
         r"\bclassify|\bcategori[sz]e|\bsort (?:it|this|them|these|the \w+)? ?into|\blabel (?:it|"
         r"this)|\btag (?:it|this)|\bwhich (?:topic|category|class)|\bis (?:it|this|that) about"
         r"|\bfile (?:it|this) under|\bclass(?:e|er|ifie|ific)|\bcat[ée]gor|\bclasific"
         r"|\bklassifizier"
         r"|\beinordn|\bkategori|分类|归类|属于哪|属于"),
    _cue("question-answering",
         r"\baccording to\b|\bbased on (?:the|this|that)\b|\bfrom (?:the|this) (?:text|passage|"
         r"article|paragraph|email|letter)\b|\bd'après\b|\bselon\b|\bseg[uú]n\b|\blaut\b"
         r"|\bgemäß\b|根据"),
    _cue("text-generation",
         r"\bwrite|\bcompose|\bcontinue|\bdraft|\bcome up with|\bbrainstorm|\bcomplete (?:this|"
         r"the) (?:sentence|story|text)|\bstory|\bpoem|\bhaiku|\bslogan|\bjoke|\blimerick|\btweet"
         r"|\bgenerate (?:a |an |some )?(?:text|list|title|name|description|email|letter)"
         r"|\b[ée]cri[rstv]|\bescrib|\bredact|\bschreib|\bverfass|写|编一个|创作|作一首",
         weak=True),
)
"""The cues in order of precedence."""

DOCUMENT_NAME = re.compile(
    r"receipt|invoice|scan|form|document|doc|page|letter|contract|bill|statement|ticket"
    r"|menu|certificate|passport|licen[cs]e|report|memo|factura|rechnung|facture", re.IGNORECASE)
"""A file name that says an image is a document (questions about it go to document QA)."""
GENERIC_LOOK = re.compile(
    r"\bwhat(?:'s| is) (?:in|on) (?:it|this|that|the (?:image|photo|picture|pic))\b|^\W*(?:"
    r"what(?:'s| is) (?:in|on|this)|what do you see|describe|qu'y a-t-il|qu[ée] hay|"
    r"was ist (?:auf|in)|图片里有什么)|里有什么|中有什么|上有什么", re.IGNORECASE)
"""A question about an image that asks for its description, not a fact in it."""


_MENTIONED = re.compile(
    r"\b(?:the|this|that|its|their|le|la|el|die|das|den)\s+(?:summary|summaries|transcript|"
    r"transcription|caption|translation|translated text|description|answer|result|résumé|"
    r"traduction|transcription|légende|resumen|traducción|transcripción|zusammenfassung|"
    r"übersetzung|beschreibung|depth map|mask|annotated image|edited (?:photo|image|picture)|new "
    r"(?:image|picture)|generated (?:image|picture))\b", re.IGNORECASE)
"""An earlier output named as such ("translate the summary"): the clause works on it,
it does not ask for another one."""
_FILE = re.compile(r"(?:https?://\S+|[\w./-]+\.[A-Za-z][A-Za-z0-9]{1,4})(?![\w/])")
EVERY_KIND = frozenset({"text", "image", "audio", "table", "video"})


def cues_in(clause: str, available: set[str] | frozenset[str] = EVERY_KIND) -> list[Match]:
    """The task types ``clause`` asks for, in order of mention, given the kinds of input
    ``available`` to it (files it or the request names, outputs of earlier steps).

    Where matches overlap, the earlier cue of :data:`CUES` wins; weak cues count only
    when no other cue matched.
    """
    clause = _FILE.sub(lambda m: "FILE".ljust(len(m.group(0))), clause)  # "clip.mp4" asks nothing
    clause = _MENTIONED.sub(lambda m: " " * len(m.group(0)), clause)
    found: list[Match] = []
    for cue in CUES:
        if cue.needs is not None and cue.needs not in available:
            continue
        for match in cue.pattern.finditer(clause):
            if any(match.start() < m.end and m.start < match.end() for m in found):
                continue
            if any(m.task == cue.task and m.cue.intent == cue.intent for m in found):
                continue
            found.append(Match(cue.task, match.start(), match.end(), cue))
    strong = [m for m in found if not m.cue.weak]
    return sorted(strong or found, key=lambda m: m.start)
