"""The local backend's speech and audio tools: speech recognition, audio classification
and text to speech, all through transformers pipelines.

Recordings come in as WAV, FLAC, OGG or MP3 (see :mod:`.audio`); speech goes out as a
16-bit mono WAV in the run's artifact store.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hugginggpt.tools.audio import read_audio, write_wav
from hugginggpt.tools.experts.local.audio import _audio_input
from hugginggpt.tools.experts.local.models import Loading, _running, adapter
from hugginggpt.tools.experts.local.outputs import MAX_TOP_K, _labels
from hugginggpt.tools.experts.registry import ToolContext

__all__ = ["automatic_speech_recognition", "audio_classification", "text_to_speech"]


@adapter("automatic-speech-recognition", Loading(pipeline="automatic-speech-recognition"))
def automatic_speech_recognition(audio: Path, model: str) -> str:
    """The transcript of a recording."""
    recording = read_audio(audio)
    with _running("automatic-speech-recognition", model) as pipe:
        inputs = _audio_input(pipe, recording)
        long = len(inputs["raw"]) > 30 * inputs["sampling_rate"]
        out = pipe(inputs, **({"chunk_length_s": 30} if long else {}))
    return str(out["text"]).strip()


@adapter("audio-classification", Loading(pipeline="audio-classification"))
def audio_classification(audio: Path, model: str) -> list[dict[str, Any]]:
    """What a recording contains (a keyword, a sound, a language), best first."""
    recording = read_audio(audio)
    with _running("audio-classification", model) as pipe:
        return _labels(pipe(_audio_input(pipe, recording), top_k=MAX_TOP_K))


@adapter("text-to-speech", Loading(pipeline="text-to-audio"))
def text_to_speech(text: str, model: str, ctx: ToolContext) -> Path:
    """The text read aloud, as a 16-bit mono WAV file."""
    with _running("text-to-speech", model) as pipe:
        out = pipe(text)
    _, path = ctx.artifacts.new_path(".wav")
    return write_wav(path, out["audio"], int(out["sampling_rate"]))

