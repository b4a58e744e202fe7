"""translation: what it takes and gives, and how an answer says it."""

from __future__ import annotations

from hugginggpt.tools.experts.tasks import TEXT, Arg, Cue, Output, Planning, TaskType
from hugginggpt.tools.experts.words import Finished, headed, language_name


def _translation(done: Finished) -> str:
    target = done.args.get("tgt_lang", "").strip()
    named = language_name(target) if target and "<GENERATED>" not in target else None
    return headed(f"In {named}" if named else "Translation", done.outputs.get("text"),
                   "The translation is empty.")


TASK = TaskType(
    "translation",
    "Translate a text into another language.",
    args=(TEXT,
          Arg("tgt_lang", "param", required=False, description="target language code, e.g. fr"),
          Arg("src_lang", "param", required=False, description="source language code")),
    outputs=(Output("text", "text"),),
    cues=(Cue(
        r"\btranslat|\bvertaal|\bvertaling|\btraduc|\btradu[iz]|\btradu[sc]|\b[üu]bersetz"
        r"|\bueber?setz|翻译|翻成|译成"
        r"|译为|翻譯|譯成",
        rank=70),),
    planning=Planning(chains=True, into_language=True, told_before=True),
    noun="the translation",
    say=_translation,
)
