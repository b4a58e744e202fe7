"""The arguments of a planned step, bound to what its clause names and what is at hand;
see :mod:`~hugginggpt.nodes.planning.steps` for the rules."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from hugginggpt.nodes.planning.clauses import (
    COMBINE,
    EVERY,
    FILE_STAGE,
    POLITE,
    Clause,
    detected_language,
    is_quoted_question,
    needs_phrase,
    plain_question,
    planning,
    prompt,
    stage,
)
from hugginggpt.nodes.planning.declared import asks_question
from hugginggpt.nodes.planning.reading import (
    PLACEHOLDER,
    Masked,
    files_in,
    mentioned_language,
    source_language,
    target_languages,
    text_files_in,
)
from hugginggpt.tools.experts.tasks import get_task_type
from hugginggpt.tools.kinds import is_text_file, kind_of_literal

__all__ = ["Arguments"]


@dataclass
class Arguments:
    """The plan so far, and the arguments of each step added to it: what is at hand
    (files, texts, earlier outputs) and which of it a step of a clause takes.
    ``problems`` says why a clause gave no step."""

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

    def _has_text(self, clause: Clause) -> bool:
        return bool(clause.literals) or bool(self._latest("text"))

    def _text_at_hand(self, clause: Clause) -> bool:
        """Whether a text step has a text to work on besides the files of other kinds:
        a text in the request, a text file, or an earlier step's text."""
        return bool(self.masked.texts or self._text_files(clause) or self._latest("text"))

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

