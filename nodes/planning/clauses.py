"""The clauses of a request, and what the plan reader needs to know about them: the
words that refer back to an earlier output, ask for every file or for one combined
result, or say that an image is a document; where a task runs in a clause's order of
work; the question, the prompt and the languages a clause names."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from hugginggpt.nodes.planning.cues import Match
from hugginggpt.nodes.planning.reading import (
    PLACEHOLDER,
    Masked,
    clause_spans,
    files_in,
    labels_in,
    languages_named,
    named_labels,
    question_in,
    target_languages,
)
from hugginggpt.tools.experts.tasks import Planning, get_task_type
from hugginggpt.tools.kinds import FILE_KINDS

__all__ = ["Clause", "clauses_of", "stage", "FILE_STAGE", "TEXT_STAGE", "MAKE_STAGE",
           "REFERS_BACK", "EVERY", "COMBINE", "planning", "SCANNED", "POLITE",
           "names_languages", "is_quoted_question", "plain_question", "prompt", "makes_text",
           "needs_phrase", "detected_language"]

REFERS_BACK = re.compile(
    r"\b(?:it|its|that|them|they|these|those|both|the result|the results|the output|the "
    r"(?:caption|text|transcript|transcription|summary|translation|answer|description|story|"
    r"poem|reply|words|recording|speech|audio|image|picture|photo|two|depth map|mask|new image|"
    r"generated image|edited (?:photo|image)))\b|\b(?:ça|le résultat|"
    r"la traduction|le résumé|la transcription|la légende|lo|la|el resultado|la traducción|"
    r"el resumen|la transcripción|es|das ergebnis|die übersetzung|die zusammenfassung|"
    r"das transkript)\b|它|结果|译文|摘要|内容|文字", re.IGNORECASE)
EVERY = re.compile(r"\b(?:both|each|all|these|every|two|les deux|chacune?|ambas|ambos|"
                    r"beide|jede)\b|两|每", re.IGNORECASE)
COMBINE = re.compile(r"\b(?:combin|together|merge|both|all of|single|one (?:summary|text|"
                      r"paragraph|story)|from (?:the|these) (?:results|outputs))|\bensemble|\bjunt"
                      r"|\bzusammen|结合|综合", re.IGNORECASE)
SCANNED = re.compile(r"\b(?:scan(?:ned)?|document|receipt|invoice|form|letter|contract|"
                      r"page|notice|flyer|poster|ticket)\b", re.IGNORECASE)
"""Words that say the image of a request is a document: its questions go to document QA."""
PROMPT_LEAD = re.compile(
    r"^.*?\b(?:image|picture|photo|drawing|illustration|painting|poster|logo|wallpaper|"
    r"artwork|icon|video|animation|clip)s?\s+(?:of|showing|with|where)\s+|^.*?\b(?:draw|paint|"
    r"sketch|illustrate|animate)\s+(?:me\s+)?", re.IGNORECASE)
POLITE = re.compile(r"^(?:(?:please|could you|can you|would you|kindly|hey|hi|ok|okay|now)"
                     r"[\s,]+)+", re.IGNORECASE)
FILE_STAGE = 0
TEXT_STAGE = 1
MAKE_STAGE = 2
_STAGES = {"file": FILE_STAGE, "text": TEXT_STAGE, "make": MAKE_STAGE}


@dataclass
class Clause:
    """One clause of the masked instruction, with what it names."""

    text: str
    masked: Masked
    files: dict[str, list[str]]
    literals: list[int]
    targets: list[str]
    listed: str | None
    """Labels listed as choices ("as sports, politics or science")."""
    question: str | None
    matches: list[Match] = field(default_factory=list)

    @property
    def labels(self) -> str | None:
        """Its labels, comma-separated: those listed as choices, else what its cue words
        say to look for ("find the red mug in kitchen.jpg": "red mug")."""
        named = next((m.labels for m in self.matches if m.labels), "")
        return self.listed or named_labels(named)

    @property
    def plain(self) -> str:
        """The clause with its placeholders blanked, character for character (cue matches
        index both)."""
        return PLACEHOLDER.sub(lambda m: " " * len(m.group(0)), self.text)

    @property
    def refers_back(self) -> bool:
        return bool(REFERS_BACK.search(PLACEHOLDER.sub(" ", self.text)))


def clauses_of(masked: Masked) -> list[Clause]:
    """The clauses of the instruction with their files, texts, languages and labels."""
    found: list[Clause] = []
    spans = clause_spans(masked.instruction)
    merged: list[tuple[int, int]] = []
    for start, end in spans:  # a clause of quoted text alone belongs to the one before
        if merged and not PLACEHOLDER.sub("", masked.instruction[start:end]).strip(" ,.:"):
            merged[-1] = (merged[-1][0], end)
        else:
            merged.append((start, end))
    for start, end in merged:
        text = masked.instruction[start:end].strip(" ,.")
        plain = PLACEHOLDER.sub(" ", text)
        found.append(Clause(
            text=text, masked=masked, files=files_in(text),
            literals=[int(i) for i in PLACEHOLDER.findall(text)],
            targets=target_languages(plain), listed=labels_in(text),
            question=question_in(masked, text)))
    return found


def planning(task: str) -> Planning:
    """How the offline planner treats a step of ``task``, as its declaration says."""
    task_type = get_task_type(task)
    return task_type.planning if task_type is not None else Planning()


def stage(task: str) -> int:
    task_type = get_task_type(task)
    if task_type is None:
        return TEXT_STAGE
    if task_type.planning.stage is not None:
        return _STAGES[task_type.planning.stage]
    if any(a.kind in FILE_KINDS for a in task_type.args if a.required):
        return FILE_STAGE
    return TEXT_STAGE


def names_languages(text: str) -> bool:
    """Whether a question names a language as what the text might be in ("i think it is
    portuguese but it could be galician??"), not as a target."""
    plain = PLACEHOLDER.sub(" ", text)
    return bool(languages_named(plain)) and not target_languages(plain)


def is_quoted_question(masked: Masked, index: int) -> bool:
    return index != masked.pasted and masked.texts[index].rstrip().endswith(("?", "？"))


def plain_question(clause: Clause) -> str | None:
    text = clause.masked.restore(PLACEHOLDER.sub(" ", clause.text)).strip()
    text = POLITE.sub("", text)
    return text if len(text) > 3 else None


def prompt(task: str, clause: Clause) -> str:
    restored = clause.masked.restore(clause.text).strip()
    if planning(task).prompt:
        prompt = PROMPT_LEAD.sub("", restored, count=1).strip()
        return prompt or restored
    return POLITE.sub("", restored).strip() or restored


def makes_text(task: str) -> bool:
    task_type = get_task_type(task)
    return task_type is not None and any(o.kind == "text" for o in task_type.outputs)


def needs_phrase(kind: str, name: str) -> str:
    if kind in ("image", "audio", "table", "video"):
        article = "an" if kind[0] in "aeiou" else "a"
        return f"{article} {kind}: attach one or name it"
    if name == "labels":
        return "candidate labels (e.g. 'as sports, politics or science')"
    if name == "text":
        return "a text: quote it, paste it after a colon, or attach a text file"
    return f"a {name}"


def detected_language(text: str) -> str | None:
    """The likeliest language of a text to translate (None when too short to tell)."""
    from hugginggpt.tools.experts.lite.languages import language_of

    return language_of(text)
