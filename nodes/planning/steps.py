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
from dataclasses import dataclass, field
from typing import Any

from hugginggpt.nodes.planning.clauses import (
    COMBINE,
    EVERY,
    FILE_STAGE,
    MAKE_STAGE,
    POLITE,
    SCANNED,
    TEXT_STAGE,
    Clause,
    clauses_of,
    detected_language,
    is_quoted_question,
    makes_text,
    names_languages,
    needs_phrase,
    plain_question,
    planning,
    prompt,
    stage,
)
from hugginggpt.nodes.planning.cues import DOCUMENT_NAME, GENERIC_LOOK, Match
from hugginggpt.nodes.planning.reading import (
    PLACEHOLDER,
    Masked,
    files_in,
    mentioned_language,
    source_language,
    target_languages,
    text_files_in,
)
from hugginggpt.tools.experts.tasks import get_task_type, task_types
from hugginggpt.tools.kinds import is_text_file, kind_of_literal

__all__ = ["Clause", "PlanReader", "clauses_of"]

_ASKS = re.compile(r"\b(?:is there|are there|what|which|who|where)\b", re.IGNORECASE)
_FINDS = re.compile(r"\b(?:how many|detect|count|objects?|locate|find)\b", re.IGNORECASE)
"""A question that asks what or where something is, unless it asks to find or count."""

def _readers() -> list[tuple[str, str]]:
    """(kind, task): the steps that turn a file into text (OCR or a caption, a
    transcript), images first."""
    return sorted(((t.planning.reads, t.name) for t in task_types() if t.planning.reads),
                  key=lambda found: found[0] != "image")


def _reader(kind: str) -> str | None:
    return next((task for read, task in _readers() if read == kind), None)


def _translator() -> str:
    """The task a language named as a target asks for."""
    return next(t.name for t in task_types() if t.planning.into_language)


def input_kind(task: str) -> str | None:
    """The kind of input ``task`` works on: its first required argument's, a question
    aside ("text" for question answering, "table" for a question about a table)."""
    task_type = get_task_type(task)
    return next((str(a.kind) for a in task_type.args if a.required and a.name != "question"),
                None) if task_type else None


def takes_labels(task: str) -> bool:
    task_type = get_task_type(task)
    return task_type is not None and any(a.name == "labels" for a in task_type.args)


def asks_question(task: str) -> bool:
    task_type = get_task_type(task)
    return task_type is not None and any(a.name == "question" for a in task_type.args)


def doing(ask: str | None, kind: str, *, labelled: bool | None = None,
          documents: bool = False) -> str | None:
    """The task type that does ``ask`` on an input of ``kind`` (with labels or without,
    when ``labelled`` says), as the declarations say (:attr:`Planning.ask`)."""
    return next((t.name for t in task_types() if ask and t.planning.ask == ask
                 and input_kind(t.name) == kind and t.planning.documents == documents
                 and (labelled is None or takes_labels(t.name) == labelled)), None)


@dataclass
class PlanReader:
    """Builds the plan step by step; ``problems`` says why a clause gave no step."""

    masked: Masked
    attached: list[str]
    steps: list[dict[str, Any]] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    used_texts: set[int] = field(default_factory=set)
    used_files: set[str] = field(default_factory=set)
    clause_start: int = 0

    def __post_init__(self) -> None:
        self.files = files_in(self.masked.instruction, self.attached)
        self.text_files = text_files_in(self.masked.instruction, self.attached)
        self.targets = target_languages(PLACEHOLDER.sub(" ", self.masked.instruction))

    # what is at hand
    def available(self, clause: Clause) -> set[str]:
        kinds = set(clause.files) or set(self.files)
        for step in self.steps:
            kinds |= self._made(step)
        return kinds | {"text"}

    @staticmethod
    def _made(step: dict[str, Any]) -> set[str]:
        task_type = get_task_type(step["task"])
        return {o.kind for o in task_type.outputs} if task_type else set()

    def _latest(self, kind: str, skip: int = 0) -> list[int]:
        return [i for i in range(len(self.steps) - 1, -1, -1)
                if kind in self._made(self.steps[i])][skip:]

    def _feeding(self, task: str) -> list[int]:
        """The earlier steps with a text output that may feed ``task``, latest first. Two
        asks of one clause work on the same input ("the short version, plus every person
        named": both on the transcript), so a step of this clause feeds another only when
        it reads a file (the transcript itself) or the ask is to translate or speak."""
        chains = planning(task).chains
        return [i for i in self._latest("text") if i < self.clause_start or chains
                or stage(self.steps[i]["task"]) == FILE_STAGE]

    # tasks of a clause
    def tasks(self, clause: Clause, fallback: str | None) -> list[tuple[str, str]]:
        """(task, intent) pairs the clause asks for, in the order they run."""
        self.clause_start = len(self.steps)
        at_hand = self.available(clause)
        asked: list[tuple[str, str]] = []
        labels = {w.strip().lower() for w in (clause.labels or "").split(",")}
        for match in clause.matches:
            if clause.text[match.start:match.end].lower() in labels:
                continue  # a label named ("spam, work or personal?"), not an ask
            task = self._refine(match, clause, at_hand)
            if task and (task, match.cue.intent) not in asked:
                asked.append((task, match.cue.intent))
        if not asked and clause.question and names_languages(clause.text):  # "is it X or Y?"
            audio = "audio" in clause.files or ("audio" in self.files and not clause.literals)
            if task := doing("classify", "audio" if audio else "text", labelled=False):
                asked.append((task, "language"))
        if not asked and clause.targets and self._has_text(clause):  # "put it in English"
            asked.append((_translator(), ""))
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
        no_text = not (clause.literals or self._latest("text") or self.masked.texts
                       or self._text_files(clause, prose=True))
        for other in task_types():
            replaces, kind = other.planning.replaces, input_kind(other.name)
            if other.planning.ask == how.ask and takes_labels(other.name) == labelled and (
                    replaces and kind in clause.files and not clause.literals
                    or replaces == "at_hand" and kind in at_hand and no_text):
                return other.name
        return task

    def _has_text(self, clause: Clause) -> bool:
        return bool(clause.literals) or bool(self._latest("text"))

    def _question_task(self, clause: Clause, at_hand: set[str]) -> str | None:
        files = clause.files or self.files
        if "image" in at_hand and "image" in files:
            name = files["image"][0]
            if DOCUMENT_NAME.search(name) or SCANNED.search(self.masked.instruction):
                return doing("question", "image", documents=True)
            return _reader("image") if GENERIC_LOOK.search(clause.text) else (
                doing("question", "image"))
        if "table" in at_hand and "table" in files:
            return doing("question", "table")
        if "audio" in clause.files:
            return _reader("audio")
        contexts = [i for i in clause.literals + self._all_texts()
                    if not is_quoted_question(self.masked, i)]
        if contexts or self._latest("text") or self._text_files(clause, prose=True):
            return doing("question", "text")
        return None

    def _by_inputs(self, clause: Clause, at_hand: set[str]) -> str | None:
        if clause.question:
            return self._question_task(clause, at_hand)
        return next((_reader(kind) for kind in ("image", "audio") if kind in clause.files),
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
        readers = _readers()
        for kind, task in readers:
            if kind in clause.files and kind not in needs:
                asked = [(task, ""), *asked]
        if any(k in clause.files for k, _ in readers) or self._text_at_hand(clause):
            return asked
        attached = files_in("", self.attached)  # a file named in another clause is its own
        for kind, task in readers:  # no text at hand: the words are in the attached file
            if kind in attached and kind not in needs:
                return [(task, ""), *asked]
        return asked

    def _text_at_hand(self, clause: Clause) -> bool:
        """Whether a text step has a text to work on besides the files of other kinds:
        a text in the request, a text file, or an earlier step's text."""
        return bool(self.masked.texts or self._text_files(clause) or self._latest("text"))

    @staticmethod
    def _implied_translation(asked: list[tuple[str, str]]) -> list[tuple[str, str]]:
        speaks = any(planning(t).renders for t, _ in asked)
        writes = any(not planning(t).generative and makes_text(t) for t, _ in asked)
        return [*asked, (_translator(), "")] if speaks or writes else asked

    def _all_texts(self) -> list[int]:
        return list(range(len(self.masked.texts)))

    # arguments
    def add(self, clause: Clause, task: str, intent: str) -> None:
        task_type = get_task_type(task)
        if task_type is None:
            return
        variants: list[dict[str, str]] = [{}]
        for arg in task_type.args:
            values = self._values(arg.name, str(arg.kind), task, clause, not arg.required)
            if values is None:
                if arg.required:
                    self.problems.append(f"{task} in {clause.masked.restore(clause.text)!r} "
                                         f"needs {needs_phrase(str(arg.kind), arg.name)}")
                    return
                continue
            variants = [{**v, arg.name: value} for v in variants for value in values]
        for args in variants:
            if planning(task).into_language:
                args = self._translation_args(args, clause)
            self._append(task, args, intent)

    def _append(self, task: str, args: dict[str, str], intent: str) -> None:
        refs = sorted({int(k) for v in args.values() for k in re.findall(
            r"<GENERATED>-(\d+)", v)})
        step = {"id": len(self.steps), "task": task, "dep": refs, "args": args}
        if any(s["task"] == task and s["args"] == args for s in self.steps):
            return
        self.steps.append(step)

    def _values(self, name: str, kind: str, task: str, clause: Clause,
                optional: bool) -> list[str] | None:
        if kind in ("image", "audio", "table", "video"):
            return self._files(kind, clause)
        if name == "labels":
            return [clause.labels] if clause.labels else None
        if name == "tgt_lang":
            return clause.targets or self.targets or [mentioned_language(clause.text) or "en"]
        if name == "src_lang":
            return None
        if name == "question":
            question = clause.question or plain_question(clause)
            return [question] if question else None
        if name == "text2":
            return self._second_text(clause)
        if optional:  # an instruction for the image ("make it look like winter")
            text = POLITE.sub("", clause.masked.restore(clause.text)).strip()
            return [text] if len(text) > 8 else None
        return self._text(task, clause)

    def _files(self, kind: str, clause: Clause) -> list[str] | None:
        own = clause.files.get(kind, [])
        if own:
            self.used_files.update(own)
            return own
        made = self._latest(kind)
        if made and (clause.refers_back or kind not in self.files):
            return [f"<GENERATED>-{made[0]}"]
        pool = self.files.get(kind, [])
        unused = [f for f in pool if f not in self.used_files]
        every = EVERY.search(clause.text) and len(unused) > 1
        chosen = unused if every else (unused[:1] or pool[:1])
        self.used_files.update(chosen)
        return chosen or None

    def _text(self, task: str, clause: Clause) -> list[str] | None:
        texts = self.masked.texts
        own = [i for i in clause.literals if i not in self.used_texts
               and not (asks_question(task) and is_quoted_question(self.masked, i))]
        quoted = [i for i in own if i != self.masked.pasted]
        if asks_question(task):
            context = [i for i in clause.literals + self._all_texts()
                       if not is_quoted_question(self.masked, i)]
            made = self._feeding(task)
            if context and not (made and clause.refers_back and not own):
                return [texts[context[0]]]
            if (files := self._text_files(clause, prose=True)) and not (
                    made and clause.refers_back):
                return files[:1]
            return [f"<GENERATED>-{made[0]}"] if made else None
        made = self._feeding(task)
        how = planning(task)
        if how.combines and made and COMBINE.search(clause.text):
            leaves = self._leaves()
            if len(leaves) > 1:
                if not how.generative:
                    return [" ".join(f"<GENERATED>-{i}" for i in leaves)]
                restored = clause.masked.restore(clause.text)
                refs = " and ".join(f"<GENERATED>-{i}" for i in leaves)
                return [f"{POLITE.sub('', restored).strip()}: {refs}"]
        if not how.combines and made and EVERY.search(clause.text) and not own:
            leaves = [i for i in self._leaves() if i in made]
            if len(leaves) > 1:  # "translate both captions": one step each
                return [f"<GENERATED>-{i}" for i in sorted(leaves)]
        if quoted or (own and not (made and clause.refers_back)):
            index = (quoted or own)[0]
            self.used_texts.add(index)
            return [texts[index]]
        if not how.generative and (files := self._text_files(
                clause, prose=clause.refers_back)) and (  # "the result" is no table
                self._text_files(clause, own=True) or not made):
            chosen = files if EVERY.search(clause.text) else files[:1]
            self.used_files.update(chosen)
            return chosen
        if made and (clause.refers_back or not texts or how.renders
                     or self.used_texts >= set(self._all_texts())):
            return [f"<GENERATED>-{made[0]}"]
        unused = [i for i in self._all_texts() if i not in self.used_texts]
        if unused and not how.generative:
            self.used_texts.add(unused[0])
            return [texts[unused[0]]]
        if how.renders and texts:
            return [texts[0]]
        if how.generative or how.renders:
            return [prompt(task, clause)]
        if made:
            return [f"<GENERATED>-{made[0]}"]
        return [texts[0]] if texts else None

    def _text_files(self, clause: Clause, own: bool = False, prose: bool = False
                    ) -> list[str]:
        """The files whose content is the text to work on: those the clause names, else
        (unless ``own``) the request's unused ones. A table file (CSV) only where no
        table step took it, and never for a question (``prose``): a question about a
        table is table question answering."""
        named = text_files_in(clause.text)
        found = named if named or own else [f for f in self.text_files
                                            if f not in self.used_files]
        return [f for f in found if not (prose and kind_of_literal(f) == "table")]

    def _second_text(self, clause: Clause) -> list[str] | None:
        texts = self.masked.texts
        own = [i for i in clause.literals if not is_quoted_question(self.masked, i)]
        if len(own) >= 2:
            return [texts[own[1]]]
        made = self._latest("text")
        if len(made) >= 2 and not own:
            return [f"<GENERATED>-{made[0]}"]
        if own and made:
            return [f"<GENERATED>-{made[0]}"]
        spare = [i for i in self._all_texts() if i not in self.used_texts and i not in own
                 and not is_quoted_question(self.masked, i)]
        if spare and not made:  # "are these alike? 'A' and 'B'": the texts follow the question
            self.used_texts.add(spare[0])
            return [texts[spare[0]]]
        return None

    def _translation_args(self, args: dict[str, str], clause: Clause) -> dict[str, str]:
        text = args.get("text", "")
        source = source_language(PLACEHOLDER.sub(" ", clause.text)) or (
            detected_language(text) if "<GENERATED>" not in text and not is_text_file(text)
            else None)
        if source and source != args.get("tgt_lang"):
            return {**args, "src_lang": source}
        return args

    def _leaves(self) -> list[int]:
        fed = {d for s in self.steps for d in s["dep"]}
        return [s["id"] for s in self.steps if s["id"] not in fed
                and self._made(s) & {"text", "labels", "number"}]

    def finish(self) -> list[dict[str, Any]]:
        """The steps, with the second text of a comparison taken before the first one
        read from the same source."""
        for step in self.steps:
            if "text2" in step["args"] and step["args"].get(
                    "text") == step["args"].get("text2"):
                made = [i for i in self._latest("text") if i < step["id"]]
                if len(made) >= 2:
                    step["args"] = {**step["args"], "text": f"<GENERATED>-{made[1]}",
                                    "text2": f"<GENERATED>-{made[0]}"}
                    step["dep"] = sorted({made[0], made[1]})
        return self.steps
