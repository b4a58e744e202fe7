"""The task-type registry: what each Hugging Face task type takes and returns, and how
an answer speaks of it.

A plan names task types from here only. Each task type is declared once, in its own
module of :mod:`hugginggpt.tools.experts.task_types` (a ``TASK``, registered on first
use): which arguments carry data (text, image, audio, ...) and which are plain
parameters (a target language, a list of labels), what kinds of output the task
produces, so that plans can be checked in code before anything runs, and the words an
answer uses for it (its result's sentence, the noun for a failure). A plugin adds one
with :func:`register_task_type`.
"""

from __future__ import annotations

import importlib
import pkgutil
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

from hugginggpt.tools.kinds import DATA_KINDS, TEXT_LIKE, Kind
from hugginggpt.tools.lexicon import KINDS

if TYPE_CHECKING:
    from hugginggpt.tools.experts.words import Saying

__all__ = [
    "Arg",
    "Cue",
    "Planning",
    "Output",
    "TaskType",
    "register_task_type",
    "get_task_type",
    "task_types",
    "TEXT",
    "IMAGE",
    "AUDIO",
    "QUESTION",
    "TABLE",
]


@dataclass(frozen=True)
class Arg:
    """One argument of a task type.

    Attributes:
        name: the key in a subtask's ``args``.
        kind: a data kind (text, image, audio, video, table) for arguments that carry
            data and may be ``<GENERATED>-k``; ``"param"`` for plain parameters.
        required: whether a plan must give it.
        description: shown to the planner.
    """

    name: str
    kind: Kind | str
    required: bool = True
    description: str = ""

    @property
    def is_data(self) -> bool:
        return self.kind in DATA_KINDS


@dataclass(frozen=True)
class Output:
    """One named output of a task type; the first output is the primary one."""

    name: str
    kind: Kind


@dataclass(frozen=True)
class Cue:
    """Words that say a clause of a request asks for a task type (the offline planner
    reads requests by them, in English, French, Spanish, German, Portuguese, Dutch,
    Italian and Chinese).

    Attributes:
        pattern: a regular expression, matched without regard to case. A group named
            ``labels`` in it is what the clause names for the step to look for: its
            labels ("find the red mug in": "red mug"; several: "the red mug and the
            kettle").
        needs: the kind of input the task needs (a caption means nothing without an
            image to caption); None for a text task.
        weak: counts only when no other cue matched ("write", "tell me").
        intent: what was asked, where one task type serves several asks (sentiment,
            language).
        rank: where two cues' matches overlap, the lower rank wins ("detect the
            language" is language identification, not object detection).
    """

    pattern: str
    needs: str | None = None
    weak: bool = False
    intent: str = ""
    rank: int = 100


@dataclass(frozen=True)
class Planning:
    """How the offline planner treats a task type's step, beyond its arguments.

    Attributes:
        stage: when its step runs among a clause's asks: ``file`` (reads a file), ``text``
            (works on text), ``make`` (makes media from text: after the text steps); None:
            ``file`` when a required argument is a file, else ``text``.
        reads: the kind of file it turns into text (an image read or captioned, a
            recording transcribed), so that a text task on such a file runs after it.
        chains: works on what another ask of the same clause made ("translate it and read
            it aloud": the translation's output is read).
        combines: may work on several earlier outputs at once ("one summary of both").
        generative: makes something new from a prompt, so the request's own words may be
            its text.
        renders: puts its text into another medium as it is (reads it aloud): a text at
            hand, never a prompt.
        prompt: its text is a description, with its lead words taken off ("an image of a
            cat": "a cat").
        into_language: a language a clause names as a target ("into French") asks for it.
        told_before: a text told before its question ("<a review>. good or bad?") is the
            text it works on.
        image_question: asks an image a question in words; when none of its models can
            run, the step is moved to a task that answers that kind of question.
        answers: the kind of question about an image it answers in place of one that
            cannot run: ``presence`` (whether things are there, how many) or ``written``
            (what is written: an amount, a date, a line). Its cue in a question that asks
            no such thing ("what is the man holding?") asks a question about the image.
        ask: what its step does whatever the input, shared by the task types that do it
            on other kinds of input: ``question`` (answers a question about a text, a
            table, an image), ``classify`` (says what a text or a recording is; with
            labels, which of them fits), ``find`` (names the things in a text, the
            objects in an image). A cue for one of them is read as the one for the
            input at hand, where that task type declares ``replaces``.
        replaces: when it replaces the task type its ask was cued for: where the clause
            names its kind of file and quotes no text (``named``: "the sentiment of
            call.wav"), or also where that kind is at hand and no text is (``at_hand``:
            "which product sold best?" with sales.csv attached). None: only a question
            about its input asks for it.
        documents: of its ask's task types on images, the one for a document (a receipt,
            a scanned page).
    """

    stage: Literal["file", "text", "make"] | None = None
    reads: str | None = None
    chains: bool = False
    combines: bool = False
    generative: bool = False
    renders: bool = False
    prompt: bool = False
    into_language: bool = False
    told_before: bool = False
    image_question: bool = False
    answers: Literal["presence", "written"] | None = None
    ask: Literal["question", "classify", "find"] | None = None
    replaces: Literal["named", "at_hand"] | None = None
    documents: bool = False


@dataclass(frozen=True)
class TaskType:
    name: str
    description: str
    args: tuple[Arg, ...]
    outputs: tuple[Output, ...]
    aliases: tuple[str, ...] = field(default=())
    nondeterministic: bool = False
    """Its models usually sample (an image from a prompt, free text): the same inputs
    give another output next time, so a result is not reused (the result cache) unless
    the tool declares itself deterministic (a fixed seed, greedy decoding)."""
    cues: tuple[Cue, ...] = ()
    """The words that say a request asks for it (none: only an LLM or the example bank
    plans it)."""
    planning: Planning = field(default_factory=Planning)
    """How the offline planner treats its step."""
    picks_one: bool = False
    """Its labels are alternatives, one of which is the answer (a classifier), so the top
    label's probability says how sure its model was; not a list of entities or objects
    found (:func:`~hugginggpt.tools.experts.confidence.from_labels`)."""
    kinds: tuple[str, ...] = ()
    """The kinds of answer its models give, where its name does not say which is asked
    (sentiment, emotion, a language, a sound: :data:`~hugginggpt.tools.lexicon.KINDS`):
    the request's words do, and selection keeps the models of the kind asked for
    (:mod:`hugginggpt.nodes.intent`). A cue's ``intent`` is one of them."""

    def __post_init__(self) -> None:
        unknown = {c.intent for c in self.cues if c.intent} - set(self.kinds)
        unknown |= set(self.kinds) - set(KINDS)
        if unknown:
            raise ValueError(f"{self.name}: kinds {sorted(unknown)} are not declared "
                             f"(known: {sorted(KINDS)})")
    noun: str = ""
    """What a step of this type is called in a sentence: "the translation" ("The
    translation failed: ..."); empty: "the <name> step"."""
    say: Saying | None = field(default=None, compare=False)
    """Its result in the sentence a person would write (:mod:`.words`); None: output by
    output."""

    def arg(self, name: str) -> Arg | None:
        return next((a for a in self.args if a.name == name), None)

    @property
    def output_kinds(self) -> frozenset[str]:
        return frozenset(o.kind for o in self.outputs)

    def output_for(self, kind: str) -> Output | None:
        """The output that feeds an argument of ``kind`` through ``<GENERATED>-k``: the
        first of that kind; for text, labels or a number do too (written out as text, so
        "classify, then read the verdict aloud" can be planned)."""
        found = next((o for o in self.outputs if o.kind == kind), None)
        if found is None and kind == "text":
            found = next((o for o in self.outputs if o.kind in TEXT_LIKE), None)
        return found

    def describe(self) -> str:
        """One line for the planner prompt."""
        args = ", ".join(
            f"{a.name}: {a.kind}{'' if a.required else ' (optional)'}" for a in self.args
        )
        outs = ", ".join(f"{o.name}: {o.kind}" for o in self.outputs)
        return f"- {self.name}({args}) -> {outs}. {self.description}"


_REGISTRY: dict[str, TaskType] = {}
_ALIASES: dict[str, str] = {}
_DECLARED: list[bool] = []


def _declare_all() -> None:
    """Register every module of :mod:`.task_types` (once, on first use)."""
    if _DECLARED:
        return
    _DECLARED.append(True)
    import hugginggpt.tools.experts.task_types as declared

    for module in pkgutil.iter_modules(declared.__path__):
        register_task_type(importlib.import_module(f"{declared.__name__}.{module.name}").TASK)


def register_task_type(task_type: TaskType) -> TaskType:
    """Declare a task type (or replace one of the same name) and return it."""
    _declare_all()
    names = {a.name for a in task_type.args}
    if len(names) != len(task_type.args):
        raise ValueError(f"task type {task_type.name!r} declares an argument twice")
    if not task_type.outputs:
        raise ValueError(f"task type {task_type.name!r} declares no output")
    _REGISTRY[task_type.name] = task_type
    for alias in task_type.aliases:
        _ALIASES[alias] = task_type.name
    return task_type


def get_task_type(name: str) -> TaskType | None:
    """Look a task type up by name or alias, case-insensitively and whether its words are
    joined by hyphens, spaces or underscores ("Object Detection" is object-detection)."""
    _declare_all()
    key = "-".join(name.strip().lower().replace("_", " ").split())
    return _REGISTRY.get(key) or _REGISTRY.get(_ALIASES.get(key, ""))


def task_types() -> list[TaskType]:
    _declare_all()
    return sorted(_REGISTRY.values(), key=lambda t: t.name)


TEXT = Arg("text", "text", description="the input text")
IMAGE = Arg("image", "image", description="an image file, URL or <GENERATED>-k")
AUDIO = Arg("audio", "audio", description="an audio file, URL or <GENERATED>-k")
QUESTION = Arg("question", "text", description="the question to answer")
TABLE = Arg("table", "table", description="a CSV file, URL or <GENERATED>-k")
