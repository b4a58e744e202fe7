"""The task-type registry: what each Hugging Face task type takes and returns.

A plan names task types from here only. Each declaration says which arguments carry
data (text, image, audio, ...) and which are plain parameters (a target language, a list
of labels), and what kinds of output the task produces, so that plans can be checked in
code before anything runs. Adding a task type is one :func:`register_task_type` call.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from hugginggpt.tools.kinds import DATA_KINDS, TEXT_LIKE, Kind

__all__ = [
    "Arg",
    "Output",
    "TaskType",
    "register_task_type",
    "get_task_type",
    "task_types",
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


def register_task_type(task_type: TaskType) -> TaskType:
    """Declare a task type (or replace one of the same name) and return it."""
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
    key = "-".join(name.strip().lower().replace("_", " ").split())
    return _REGISTRY.get(key) or _REGISTRY.get(_ALIASES.get(key, ""))


def task_types() -> list[TaskType]:
    return sorted(_REGISTRY.values(), key=lambda t: t.name)


def _declare(
    name: str,
    description: str,
    args: Iterable[Arg],
    outputs: Iterable[Output],
    aliases: Iterable[str] = (),
    nondeterministic: bool = False,
) -> None:
    register_task_type(TaskType(name, description, tuple(args), tuple(outputs), tuple(aliases),
                                nondeterministic=nondeterministic))


_TEXT = Arg("text", "text", description="the input text")
_IMAGE = Arg("image", "image", description="an image file, URL or <GENERATED>-k")
_AUDIO = Arg("audio", "audio", description="an audio file, URL or <GENERATED>-k")
_QUESTION = Arg("question", "text", description="the question to answer")

# Natural language.
_declare("text-classification", "Classify a text (sentiment, topic, ...).",
         [_TEXT], [Output("labels", "labels")], aliases=["sentiment-analysis"])
_declare("zero-shot-classification", "Classify a text into labels the user names.",
         [_TEXT, Arg("labels", "param", description="comma-separated candidate labels")],
         [Output("labels", "labels")])
_declare("token-classification", "Find named entities or other token labels in a text.",
         [_TEXT], [Output("entities", "labels")], aliases=["ner"])
_declare("summarization", "Summarise a text.", [_TEXT], [Output("text", "text")])
_declare("translation", "Translate a text into another language.",
         [_TEXT,
          Arg("tgt_lang", "param", required=False, description="target language code, e.g. fr"),
          Arg("src_lang", "param", required=False, description="source language code")],
         [Output("text", "text")])
_declare("question-answering", "Answer a question from a context text.",
         [_QUESTION, Arg("text", "text", description="the context to answer from")],
         [Output("text", "text")])
_declare("text-generation", "Continue or answer a prompt with generated text.",
         [_TEXT], [Output("text", "text")],
         nondeterministic=True)
_declare("text2text-generation", "Rewrite a text into another text (instructions, paraphrase).",
         [_TEXT], [Output("text", "text")])
_declare("conversational", "Reply to a message as a chat assistant.",
         [_TEXT], [Output("text", "text")], aliases=["chat"],
         nondeterministic=True)
_declare("sentence-similarity",
         "How similar two texts are in meaning (cosine of sentence embeddings, -1..1).",
         [Arg("text", "text", description="the first text"),
          Arg("text2", "text", description="the second text")],
         [Output("score", "number")])
_declare("feature-extraction", "A sentence embedding of a text, stored as an artifact.",
         [_TEXT], [Output("embedding", "vector")], aliases=["sentence-embedding"])
_declare("fill-mask",
         "Fill in the blank of a sentence: the text holds one [MASK] (or <mask>, ___).",
         [Arg("text", "text", description="a sentence with one [MASK] where a word is missing")],
         [Output("text", "text"), Output("labels", "labels")], aliases=["fill-in-the-blank"])

# Tables.
_TABLE = Arg("table", "table", description="a CSV file, URL or <GENERATED>-k")
_declare("tabular-classification", "Classify the rows of a table (a CSV file).",
         [_TABLE], [Output("labels", "labels")])
_declare("table-question-answering", "Answer a question about a table (a CSV file).",
         [_TABLE, _QUESTION], [Output("text", "text")], aliases=["tableqa"])

# Vision.
_declare("image-classification", "Classify what an image shows.",
         [_IMAGE], [Output("labels", "labels")])
_declare("object-detection", "Find objects in an image; returns an annotated image and boxes.",
         [_IMAGE], [Output("image", "image"), Output("objects", "labels")])
_declare("image-segmentation", "Segment an image; returns a mask image and the segments.",
         [_IMAGE], [Output("image", "image"), Output("segments", "labels")])
_declare("depth-estimation", "Estimate depth; returns a depth-map image.",
         [_IMAGE], [Output("image", "image")])
_declare("image-to-text", "Caption an image, or read the text in it (OCR).",
         [_IMAGE], [Output("text", "text")], aliases=["image-captioning", "ocr"])
_declare("zero-shot-image-classification",
         "Classify an image into labels the user names (CLIP-style image-text matching).",
         [_IMAGE, Arg("labels", "param", description="comma-separated candidate labels")],
         [Output("labels", "labels")])
_declare("image-text-to-text",
         "A vision-language model answers an instruction or question about an image "
         "(describe it in detail, read it, reason about it).",
         [_IMAGE, Arg("text", "text", required=False,
                      description="the instruction or question (default: describe the image)")],
         [Output("text", "text")], aliases=["vision-language", "vlm"],
         nondeterministic=True)
_declare("image-to-image", "Transform an image, optionally following a text instruction.",
         [_IMAGE, Arg("text", "text", required=False, description="what to change")],
         [Output("image", "image")], aliases=["image-editing"])
_declare("text-to-image", "Generate an image from a text prompt.",
         [_TEXT], [Output("image", "image")],
         nondeterministic=True)
_declare("text-to-video", "Generate a short video from a text prompt.",
         [_TEXT], [Output("video", "video")],
         nondeterministic=True)
_declare("visual-question-answering", "Answer a question about an image.",
         [_IMAGE, _QUESTION], [Output("text", "text")], aliases=["vqa"])
_declare("document-question-answering",
         "Answer a question about a document image (a scan, a receipt, a form).",
         [_IMAGE, _QUESTION], [Output("text", "text")], aliases=["docqa"])

# Audio.
_declare("text-to-speech", "Read a text aloud.", [_TEXT], [Output("audio", "audio")],
         aliases=["tts"])
_declare("automatic-speech-recognition", "Transcribe speech.", [_AUDIO],
         [Output("text", "text")], aliases=["speech-recognition", "asr"])
_declare("audio-to-audio", "Transform audio (enhance speech, separate sources).",
         [_AUDIO], [Output("audio", "audio")])
_declare("audio-classification", "Classify a sound or a speaker's language or emotion.",
         [_AUDIO], [Output("labels", "labels")])
