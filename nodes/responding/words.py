"""What a finished subtask produced, in the sentence a person would write.

Every task type of :mod:`hugginggpt.tools.experts.tasks` has its wording ("The review is
negative (89%)", "Speech saved to artifacts/t/3f2a.wav (3.2 s)"); a type this module does
not know (a plugin's) is told output by output. Probabilities are whole percents, other
scores two decimals; language codes are named; a long text is clipped, saying where the
whole of it is; a file is its workspace path, a recording with its length.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from hugginggpt.nodes.responding.phrasing import (
    MAX_LISTED,
    file_shown,
    headed,
    label_items,
    label_name,
    language_name,
    listed,
    percent,
    plural,
    ranked,
    shown_score,
    shown_text,
)
from hugginggpt.tools.artifacts import is_artifact_ref

__all__ = ["Finished", "say"]



@dataclass(frozen=True)
class Finished:
    """A done subtask, as its sentence needs it."""

    task: str
    outputs: dict[str, Any]
    args: dict[str, str] = field(default_factory=dict)
    request: str = ""
    model: str = ""
    probabilities: bool = True
    """Whether its label scores are probabilities (shown as percents); a card that says
    they are not (cosines, detector scores) makes them plain numbers."""
    looks_for: str = "objects"
    """What a detector looks for, in the plural: a specialist's card names it ("faces"),
    so that finding none is said in the words of the question."""


# ------------------------------------------------------------------ classification

_SENTIMENTS = {"positive": "positive", "pos": "positive", "negative": "negative",
               "neg": "negative", "neutral": "neutral", "neu": "neutral"}
_EMOTIONS = {"joy": "joy", "sadness": "sadness", "anger": "anger", "fear": "fear",
             "surprise": "surprise", "love": "love", "disgust": "disgust",
             "optimism": "optimism", "hap": "happiness", "ang": "anger", "sad": "sadness"}
_SUBJECT = re.compile(r"\b(review|comment|tweet|post|message|e-?mail|sentence|headline|"
                      r"letter|paragraph|phrase|feedback|answer)s?\b", re.IGNORECASE)


def _subject(request: str) -> str:
    """What the user called the text ("the review"), else "the text"."""
    found = _SUBJECT.search(request)
    return found.group(1).lower().replace("e-mail", "email") if found else "text"


def _classified(done: Finished, what: str) -> str:
    labels = label_items(done.outputs.get("labels"))
    if not labels:
        return f"No label was given for the {what}."
    top = labels[0]
    name, score = label_name(top), shown_score(top.get("score"), done.probabilities)
    shown = f" ({score})" if score else ""
    language = [language_name(label_name(label)) for label in labels[:3]]
    if all(language):
        others = [f"{lang} ({shown_score(label.get('score'), done.probabilities)})"
                  for lang, label in zip(language[1:], labels[1:3], strict=False)
                  if isinstance(label.get("score"), float) and label["score"] >= 0.05]
        also = f"; then {listed(others)}" if others else ""
        spoken = "speech" if what == "recording" else what
        return f"The {spoken} is in {language[0]}{shown}{also}."
    key = name.lower()
    if key in _SENTIMENTS:
        return f"The {what} is {_SENTIMENTS[key]}{shown}."
    if key in _EMOTIONS:
        return f"The {what} expresses {_EMOTIONS[key]}{shown}."
    rest = [f"{label_name(label)} ({shown_score(label['score'], done.probabilities)})"
            for label in labels[1:3]
            if isinstance(label.get("score"), float) and label["score"] >= 0.1]
    then = f"; then {listed(rest)}" if rest else ""
    return f"The {what} is classified as {name}{shown}{then}."


def _text_classification(done: Finished) -> str:
    return _classified(done, _subject(done.request))


def _image_classification(done: Finished) -> str:
    labels = label_items(done.outputs.get("labels"))
    if not labels:
        return "No label was given for the image."
    top = {**labels[0], "label": label_name(labels[0]).split(",")[0]}
    return _classified(Finished(done.task, {"labels": [top, *labels[1:]]},
                                probabilities=done.probabilities), "image")


def _audio_classification(done: Finished) -> str:
    return _classified(done, "recording")


def _zero_shot(done: Finished) -> str:
    labels = label_items(done.outputs.get("labels"))
    if not labels:
        return "No label was given."
    subject = "The image best fits" if done.task.endswith("image-classification") \
        else "The best fit is"
    return f"{subject} {ranked(labels, done.probabilities, similarity=True)}."


_GROUPS = {"per": "person", "loc": "location", "org": "organisation", "misc": "other",
           "gpe": "place", "date": "date", "time": "time", "money": "money",
           "norp": "group", "fac": "building", "event": "event", "product": "product"}


def _entities(done: Finished) -> str:
    found: dict[tuple[str, str], None] = {}
    for item in label_items(done.outputs.get("entities")):
        word = " ".join(str(item.get("word", "")).replace("##", "").split())
        group = str(item.get("entity_group") or item.get("entity") or "")
        group = re.sub(r"^[BIES]-", "", group)
        if word:
            found[(word, _GROUPS.get(group.lower(), group.lower() or "entity"))] = None
    if not found:
        return "No named entities were found."
    shown = [f"{word} ({group})" for word, group in list(found)[:MAX_LISTED]]
    return f"Entities: {listed(shown, max(0, len(found) - MAX_LISTED))}."


def _tabular(done: Finished) -> str:
    rows = label_items(done.outputs.get("labels"))
    if not rows:
        return "No row was classified."
    counts: dict[str, int] = {}
    for row in rows:
        counts[label_name(row)] = counts.get(label_name(row), 0) + 1
    tally = ", ".join(f"{n} {label}" for label, n in counts.items())
    each = [f"row {int(r.get('row', i)) + 1}: {label_name(r)}"
            + (f" {shown_score(r['score'], True)}" if isinstance(r.get("score"), float) else "")
            for i, r in enumerate(rows[:MAX_LISTED])]
    more = f", and {len(rows) - MAX_LISTED} more in --json" if len(rows) > MAX_LISTED else ""
    return f"Classified {plural('row', len(rows))}: {tally} ({', '.join(each)}{more})."


# ------------------------------------------------------------------ vision

def _objects(done: Finished) -> str:
    found = label_items(done.outputs.get("objects"))
    where = f"the annotated image is at {file_shown(done.outputs.get('image'))}"
    if not found:
        return f"No {done.looks_for} were found; {where}."
    groups: dict[str, list[Any]] = {}
    for item in found:
        groups.setdefault(label_name(item), []).append(item.get("score"))
    parts = []
    for label, scores in list(groups.items())[:MAX_LISTED]:
        shown = [shown_score(s, True) for s in scores[:4]] if done.probabilities else []
        shown = [s for s in shown if s] + (["..."] if done.probabilities and len(scores) > 4
                                           else [])
        parts.append(plural(label, len(scores)) + (f" ({', '.join(shown)})" if shown else ""))
    listed_parts = listed(parts, max(0, len(groups) - MAX_LISTED))
    if len(groups) == 1:
        return f"Found {listed_parts}; {where}."
    return f"Found {len(found)} objects: {listed_parts}; {where}."


def _segments(done: Finished) -> str:
    found = label_items(done.outputs.get("segments"))
    where = f"the segment map is at {file_shown(done.outputs.get('image'))}"
    if not found:
        return f"No segments were found; {where}."
    parts = []
    for item in found[:MAX_LISTED]:
        if isinstance(item.get("area"), float):
            parts.append(f"{label_name(item)} ({percent(item['area'])} of the image)")
        elif isinstance(item.get("score"), float):
            parts.append(f"{label_name(item)} ({shown_score(item['score'], done.probabilities)})")
        else:
            parts.append(label_name(item))
    return (f"Found {plural('segment', len(found))}: "
            f"{listed(parts, max(0, len(found) - MAX_LISTED))}; {where}.")


def _image_to_text(done: Finished) -> str:
    text = done.outputs.get("text")
    reads = any(word in done.model.lower() for word in ("ocr", "donut")) or (
        isinstance(text, str) and "\n" in text.strip())  # a caption is one line
    return headed("The image says" if reads else "Caption", done.outputs.get("text"),
                   "No text was read in the image." if reads else "The caption is empty.")


def _image_text(done: Finished) -> str:
    asked = bool(done.args.get("text", "").strip())
    return headed("Answer" if asked else "Description", done.outputs.get("text"),
                   "The model gave an empty answer.")


# ------------------------------------------------------------------ the rest

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


def _embedding(done: Finished) -> str:
    ref = done.outputs.get("embedding")
    dims = ref.get("dims") if isinstance(ref, dict) else None
    size = f" ({dims} numbers)" if dims else ""
    return f"Computed the text's embedding{size}, saved in {file_shown(ref)}."


def _fill_mask(done: Finished) -> str:
    labels = label_items(done.outputs.get("labels"))
    text = shown_text(done.outputs.get("text"))
    if not labels:
        return f"Filled in: {text}"
    guesses = ranked(labels, done.probabilities, limit=4).replace("; then", "; other guesses:")
    return f"Filled in: {text} (the word: {guesses})"


def _translation(done: Finished) -> str:
    target = done.args.get("tgt_lang", "").strip()
    named = language_name(target) if target and "<GENERATED>" not in target else None
    return headed(f"In {named}" if named else "Translation", done.outputs.get("text"),
                   "The translation is empty.")


def _transcript(done: Finished) -> str:
    return headed("Transcript", done.outputs.get("text"),
                   "No speech was recognised in the recording.")


def _saved(what: str, output: str) -> Callable[[Finished], str]:
    return lambda done: f"{what} saved to {file_shown(done.outputs.get(output))}."


def _headed_as(head: str, empty: str) -> Callable[[Finished], str]:
    return lambda done: headed(head, done.outputs.get("text"), empty)


_SAY: dict[str, Callable[[Finished], str]] = {
    "text-classification": _text_classification,
    "zero-shot-classification": _zero_shot,
    "token-classification": _entities,
    "summarization": _headed_as("Summary", "The summary is empty."),
    "translation": _translation,
    "question-answering": _headed_as("Answer", "No answer was found in the text."),
    "text-generation": _headed_as("Generated text", "The model generated nothing."),
    "text2text-generation": _headed_as("Result", "The model returned an empty text."),
    "conversational": _headed_as("Reply", "The model gave an empty reply."),
    "sentence-similarity": _similarity,
    "feature-extraction": _embedding,
    "fill-mask": _fill_mask,
    "tabular-classification": _tabular,
    "table-question-answering": _headed_as("Answer from the table",
                                           "No answer was found in the table."),
    "image-classification": _image_classification,
    "object-detection": _objects,
    "image-segmentation": _segments,
    "depth-estimation": _saved("Depth map", "image"),
    "image-to-text": _image_to_text,
    "zero-shot-image-classification": _zero_shot,
    "image-text-to-text": _image_text,
    "image-to-image": _saved("Edited image", "image"),
    "text-to-image": _saved("Image", "image"),
    "text-to-video": _saved("Video", "video"),
    "visual-question-answering": _headed_as("Answer", "The model gave an empty answer."),
    "document-question-answering": _headed_as("From the document",
                                              "No answer was found in the document."),
    "text-to-speech": _saved("Speech", "audio"),
    "automatic-speech-recognition": _transcript,
    "audio-to-audio": _saved("Processed audio", "audio"),
    "audio-classification": _audio_classification,
}


def _generic(done: Finished) -> str:
    """A task type without its own wording: each output in turn."""
    parts = []
    for name, value in done.outputs.items():
        if is_artifact_ref(value) and value.get("kind") != "text":
            parts.append(f"{name} saved to {file_shown(value)}")
        elif isinstance(value, float):
            parts.append(f"{name}: {value:.2f}")
        elif isinstance(value, list) and label_items(value):
            parts.append(f"{name}: {ranked(label_items(value), done.probabilities)}")
        else:
            parts.append(f"{name}: {shown_text(value)}")
    return "; ".join(parts) + "." if parts else "It finished with no output."


def say(done: Finished) -> str:
    """The sentence for one done subtask (several lines when a text output has them)."""
    return _SAY.get(done.task, _generic)(done)
