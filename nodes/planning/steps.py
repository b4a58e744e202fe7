"""A plan read from the request, clause by clause: what each clause asks for, bound to
the files, texts, languages, labels and questions it names, fed by earlier steps where
it refers back.

For each clause of the masked instruction (:func:`~hugginggpt.nodes.planning.reading.mask`)
the task types come from cue words (:mod:`~hugginggpt.nodes.planning.cues`), else from a
question and the inputs at hand (an image and a question is visual question answering),
else from the example bank's nearest one-step example, which the caller looks up for all
such clauses in one batch. Then each task gets its arguments:

- a file argument takes the clause's own files of its kind (one step per file: "the
  text of a.png and b.png" is two steps), else an earlier step's output of that kind
  when the clause refers back or the request has no such file, else the request's next
  unused file of that kind (every one of them with "both", "each", "these");
- a text argument takes the clause's quoted text, else the pasted text, else a text file
  the clause names or the request attaches ("summarize my notes" with ``notes.txt``: the
  file's content is read when the step runs), else the latest earlier *text* output when
  the clause refers back ("it", "the summary", "它") or the request quotes nothing, else
  the request's texts; a label or a score never feeds a text step;
- a text step with no text at hand and an image or a recording attached works on the
  words in it: OCR (image-to-text) or a transcript runs first ("what's the sentiment of
  the review in this screenshot?");
- a question is the quoted question or the sentence ending in "?", never the context;
- labels come from "as A, B or C"; a target language from the clause's words, with one
  step per language; the source language is detected from a literal text;
- a target language named in a clause that asks for something else ("what does the sign
  say in English", "read it aloud in French") adds the translation the ask implies.

Identical steps are planned once.
"""

from __future__ import annotations

import re

from hugginggpt.nodes.planning.arguments import Arguments
from hugginggpt.nodes.planning.clauses import (
    MAKE_STAGE,
    SCANNED,
    TEXT_STAGE,
    Clause,
    clauses_of,
    is_quoted_question,
    makes_text,
    names_languages,
    planning,
    stage,
)
from hugginggpt.nodes.planning.cues import DOCUMENT_NAME, GENERIC_LOOK, Match
from hugginggpt.nodes.planning.declared import (
    doing,
    input_kind,
    reader,
    readers,
    takes_labels,
    translator,
)
from hugginggpt.nodes.planning.reading import files_in
from hugginggpt.tools.experts.tasks import get_task_type, task_types

__all__ = ["Clause", "PlanReader", "clauses_of"]

_ASKS = re.compile(r"\b(?:is there|are there|what|which|who|where)\b", re.IGNORECASE)
_FINDS = re.compile(r"\b(?:how many|detect|count|objects?|locate|find)\b", re.IGNORECASE)
"""A question that asks what or where something is, unless it asks to find or count."""


class PlanReader(Arguments):
    """Builds the plan clause by clause: the tasks each clause asks for
    (:meth:`tasks`), then each one's arguments (:meth:`Arguments.add`)."""

    # tasks of a clause
    def tasks(self, clause: Clause, fallback: str | None) -> list[tuple[str, str]]:
        """(task, intent) pairs the clause asks for, in the order they run."""
        self.clause_start = len(self.steps)
        at_hand = self.available(clause)
        asked: list[tuple[str, str]] = []
        labels = {w.strip().lower() for w in (clause.labels or "").split(",")}
        for match in clause.matches:
            if planning(match.task).ask == "classify" and not takes_labels(match.task) \
                    and clause.text[match.start:match.end].lower() in labels:
                continue  # a label named ("spam, work or personal?"), not a sentiment asked
            task = self._refine(match, clause, at_hand)
            if task and (task, match.cue.intent) not in asked:
                asked.append((task, match.cue.intent))
        if not asked and clause.question and names_languages(clause.text):  # "is it X or Y?"
            audio = "audio" in clause.files or ("audio" in self.files and not clause.literals)
            if task := doing("classify", "audio" if audio else "text", labelled=False):
                asked.append((task, "language"))
        if not asked and clause.targets and self._has_text(clause):  # "put it in English"
            asked.append((translator(), ""))
        if not asked and clause.labels and clause.question:  # "... sport or music?"
            image = "image" in clause.files and not clause.literals
            if task := doing("classify", "image" if image else "text", labelled=True):
                asked.append((task, ""))
        if not asked and (task := self._by_inputs(clause, at_hand)):
            asked.append((task, ""))
        if not asked and fallback:
            asked.append((fallback, ""))
        asked = self._producers(clause, asked)
        if any(planning(t).ask == "classify" and takes_labels(t) for t, _ in asked):
            asked = [(t, i) for t, i in asked  # labels offered: which fits, no sentiment
                     if i or planning(t).ask != "classify" or takes_labels(t)]
        if clause.targets and not any(planning(t).into_language for t, _ in asked):
            asked = self._implied_translation(asked)
        rendered = any(planning(t).renders for t, _ in asked)

        def order(ask: tuple[str, str]) -> float:
            """A step that works on another ask's output (a translation to be read
            aloud) runs just before the step that renders it."""
            if planning(ask[0]).chains and stage(ask[0]) == TEXT_STAGE:
                return MAKE_STAGE - 0.5 if rendered else TEXT_STAGE
            return stage(ask[0])
        return sorted(asked, key=order)

    def _refine(self, match: Match, clause: Clause, at_hand: set[str]) -> str | None:
        """The task the cue's ask is on the clause's input: a question in the words of
        a finding ("what is the man holding?") is the image's question; a labelled ask
        with no labels is for the sentiment or language, alone; else the ask on the
        file the clause names, or with no text at hand, on the input at hand."""
        task, how = match.task, planning(match.task)
        if how.answers and clause.question and _ASKS.search(clause.text) and not \
                _FINDS.search(clause.text):
            return self._question_task(clause, at_hand)
        if not how.ask:
            return task
        labelled = takes_labels(task)
        if labelled and not clause.labels:
            return doing(how.ask, "text", labelled=False) if not clause.matches[1:] else None
        no_text = not (clause.literals or self._latest("text")
                       or self._text_files(clause, prose=True))
        for other in task_types():
            replaces, kind = other.planning.replaces, input_kind(other.name)
            if other.planning.ask == how.ask and takes_labels(other.name) == labelled and (
                    replaces and kind in clause.files and not clause.literals
                    or replaces == "at_hand" and kind in at_hand and no_text):
                return other.name
        return task

    def _question_task(self, clause: Clause, at_hand: set[str]) -> str | None:
        files = clause.files or self.files
        if "image" in at_hand and "image" in files:
            name = files["image"][0]
            if DOCUMENT_NAME.search(name) or SCANNED.search(self.masked.instruction):
                return doing("question", "image", documents=True)
            return reader("image") if GENERIC_LOOK.search(clause.text) else (
                doing("question", "image"))
        if "table" in at_hand and "table" in files:
            return doing("question", "table")
        if "audio" in clause.files:
            return reader("audio")
        contexts = [i for i in clause.literals + self._all_texts()
                    if not is_quoted_question(self.masked, i)]
        if contexts or self._latest("text") or self._text_files(clause, prose=True):
            return doing("question", "text")
        return None

    def _by_inputs(self, clause: Clause, at_hand: set[str]) -> str | None:
        if clause.question:
            return self._question_task(clause, at_hand)
        return next((reader(kind) for kind in ("image", "audio") if kind in clause.files),
                    None)

    def _producers(self, clause: Clause, asked: list[tuple[str, str]]
                   ) -> list[tuple[str, str]]:
        """The asks with a caption or a transcript first where the clause names an image
        or a recording and only asks for work on text ("summarise podcast.mp3")."""
        if not asked or self._latest("text") and clause.refers_back:
            return asked
        needs = {a.kind for t, _ in asked if (tt := get_task_type(t)) for a in tt.args
                 if a.required}
        if "text" not in needs or clause.literals:
            return asked
        found = readers()
        for kind, task in found:
            if kind in clause.files and kind not in needs:
                asked = [(task, ""), *asked]
        if any(k in clause.files for k, _ in found) or self._text_at_hand(clause):
            return asked
        attached = files_in("", self.attached)  # a file named in another clause is its own
        for kind, task in found:  # no text at hand: the words are in the attached file
            if kind in attached and kind not in needs:
                return [(task, ""), *asked]
        return asked

    @staticmethod
    def _implied_translation(asked: list[tuple[str, str]]) -> list[tuple[str, str]]:
        speaks = any(planning(t).renders for t, _ in asked)
        writes = any(not planning(t).generative and makes_text(t) for t, _ in asked)
        return [*asked, (translator(), "")] if speaks or writes else asked
