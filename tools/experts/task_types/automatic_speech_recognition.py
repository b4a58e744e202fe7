"""automatic-speech-recognition: what it takes and gives, and how an answer says it."""

from __future__ import annotations

from hugginggpt.tools.experts import words
from hugginggpt.tools.experts.tasks import AUDIO, Cue, Output, Planning, TaskType

TASK = TaskType(
    "automatic-speech-recognition",
    "Transcribe speech.",
    args=(AUDIO,),
    outputs=(Output("text", "text"),),
    aliases=("speech-recognition", "asr"),
    cues=(Cue(
        r"\btranscri|\bspeech[- ]to[- ]text|\bwrite down what|\bwrite (?:it|this|that) (?:out"
        r"|down)\b|\bwhat (?:is|was|'s) (?:being )?"
        r"said|\bwhat (?:does|did) (?:he|she|they|the speaker|the caller|it|\w+) say|\bdictat"
        r"|\btranskri|\babschrift|\btranscrev|\bo que (?:ele|ela|a pessoa) (?:diz|disse)"
        r"|\buitschrijven"
        r"|\bwat (?:zegt|zei) (?:hij|zij|ze)|\btrascriv|\bcosa (?:dice|ha detto)"
        r"|\bwas .{0,20}gesagt|\bce qu'(?:il|elle|on) dit|\bce qui est "
        r"dit|\blo que (?:se )?dice|\bqu[ée] dice|转录|转写|转成文字|转为文字|听写|说了什么"
        r"|语音识别|说的是什么",
        needs="audio", rank=50),),
    planning=Planning(reads="audio"),
    noun="the transcription",
    say=words.headed_as("Transcript",
                        "No speech was recognised in the recording."),
)
