"""The lite speech tools: text to speech with eSpeak NG, speech recognition with
PocketSphinx, both offline on the data their wheels ship.

eSpeak NG is a formant synthesiser: intelligible in about 100 languages, and robotic.
The voice follows the text's language (lingua); English is read in US English, the
accent the recogniser knows. PocketSphinx is a 2010s HMM recogniser for US English with
a general trigram language model: on eSpeak's voice it gets some sentences word for word
and garbles others (``benchmarks/speech_wer.py`` measures it), and names, accents, noise
and other languages are beyond it.
"""

from __future__ import annotations

import io
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hugginggpt.tools.audio import read_audio, resample, write_wav
from hugginggpt.tools.errors import ToolExecutionError
from hugginggpt.tools.experts.confidence import from_speech
from hugginggpt.tools.experts.lite.engines import (
    ESPEAK,
    POCKETSPHINX,
    SPHINX_LOCK,
    SPHINX_RATE,
    engine,
    espeak,
    sphinx,
)
from hugginggpt.tools.experts.lite.espeak import Voice
from hugginggpt.tools.experts.lite.languages import language_of
from hugginggpt.tools.experts.registry import ToolContext

__all__ = ["MAX_SPEECH_CHARS", "WORDS_PER_MINUTE", "VOICE_VARIANT", "voice_for", "speak",
           "text_to_speech", "transcribe", "transcribe_scored", "Heard",
           "automatic_speech_recognition"]

MAX_SPEECH_CHARS = 5000
"""Longest text read aloud: about six minutes of speech, within what speech recognition
reads back (:data:`hugginggpt.tools.audio.MAX_AUDIO_S`)."""
WORDS_PER_MINUTE = 140
"""Slower than eSpeak's 175: easier to follow, and to recognise."""
VOICE_VARIANT = "klatt4"
"""One of eSpeak's Klatt-synthesiser variants: less buzzy than the default voice, and
PocketSphinx recognises it far better (benchmarks/speech_wer.py; of the six Klatt
variants at 140 words a minute, klatt3 and klatt4 had the fewest word errors)."""
DEFAULT_LANGUAGE = "en-us"
_PAD_S = 0.2
"""Silence put around a recording before decoding: speech that starts at the first sample
loses its first phone."""
_SILENCE = 1e-3
"""A recording whose loudest sample is below this (-60 dBFS) holds no speech."""
_SEGMENT_ABOVE_S = 20.0
"""Longer recordings are cut at pauses (PocketSphinx's voice activity detector) and decoded
piece by piece: one utterance of minutes makes the search slow and the guesses worse."""


def voice_for(text: str, language: str | None = None) -> Voice:
    """The eSpeak NG voice for ``language`` (default: the text's language by lingua,
    else US English); English is read in US English, the accent PocketSphinx knows.

    Raises:
        ToolExecutionError: eSpeak has no voice for the language nor for English.
    """
    engine = espeak()
    code = language or language_of(text) or DEFAULT_LANGUAGE
    code = DEFAULT_LANGUAGE if code == "en" else code
    voice = engine.voice_for(code) or engine.voice_for(DEFAULT_LANGUAGE)
    if voice is None:
        raise ToolExecutionError(f"{ESPEAK}: no voice for {code!r}, nor for English")
    return voice


def speak(text: str, language: str | None = None) -> tuple[Any, int]:
    """``text`` read by eSpeak NG in ``language`` (default: the text's own, else US
    English), as float32 samples in [-1, 1] and their rate.

    Raises:
        ToolExecutionError: the text is empty, too long or has nothing to pronounce.
    """
    if not text.strip():
        raise ToolExecutionError(f"{ESPEAK}: the text is empty")
    if len(text) > MAX_SPEECH_CHARS:
        raise ToolExecutionError(
            f"{ESPEAK}: the text has {len(text)} characters, more than {MAX_SPEECH_CHARS}")
    engine = espeak()
    voice = voice_for(text, language)
    samples = engine.synthesize(text, voice, WORDS_PER_MINUTE, VOICE_VARIANT)
    if len(samples) == 0:
        raise ToolExecutionError(f"{ESPEAK}: nothing to pronounce in {text[:60]!r}")
    return samples.astype("float32") / 32768.0, engine.rate


@engine(
    "text-to-speech", ESPEAK,
    "Text to speech with eSpeak NG (formant synthesis; libespeak-ng and its voice data "
    "ship in the espeakng-loader package): reads a text aloud in about 100 languages, the "
    "voice chosen from the text's language (lingua; US English when it cannot tell), "
    "as a 22 kHz mono WAV. Intelligible but robotic, flat intonation; foreign names and "
    "mixed-language text are mispronounced.",
    license="gpl-3.0", languages=["multilingual"], size_mb=20, latency_s=0.2,
    limits="eSpeak NG is a formant synthesiser: its voice is intelligible but robotic, "
           "with flat intonation.",
)
def text_to_speech(text: str, ctx: ToolContext) -> Path:
    """The text read aloud by eSpeak NG, in the voice of its language, as a 16-bit
    mono WAV file."""
    samples, rate = speak(text)
    _, path = ctx.artifacts.new_path(".wav")
    return write_wav(path, samples, rate)


def _utterances(pcm: bytes) -> list[bytes]:
    """The recording as PocketSphinx decodes it: whole when short, else cut at pauses."""
    if len(pcm) <= _SEGMENT_ABOVE_S * SPHINX_RATE * 2:
        return [pcm]
    from pocketsphinx import Segmenter

    pieces = [segment.pcm for segment in Segmenter(sample_rate=SPHINX_RATE).segment(
        io.BytesIO(pcm))]
    return pieces or [pcm]


def transcribe(samples: Any, rate: int) -> str:
    """What PocketSphinx hears in mono float32 ``samples`` at ``rate`` Hz (lower-case
    words, no punctuation); an empty string when it hears no word."""
    return transcribe_scored(samples, rate).text


@dataclass(frozen=True)
class Heard:
    """A transcript and the two measures of how sure PocketSphinx was."""

    text: str
    posterior: float | None = None
    """The mean word posterior (None: no word heard)."""
    words_per_s: float | None = None
    """Words heard per second of sound (10 ms frames louder than 5% of the loudest):
    eSpeak's clear speech gave 2.6-4.4; a tone, overlapping voices or speech sped up
    gave 0.3-1.4, with high posteriors on the one or two words heard."""


def _sounding_s(audio: Any) -> float:
    """Seconds of the recording that carry sound (10 ms frames whose RMS is over 5% of
    the loudest frame's), pauses left out."""
    import numpy as np

    step = SPHINX_RATE // 100
    frames = audio[: audio.size // step * step].reshape(-1, step)
    if not frames.size:
        return 0.0
    rms = np.sqrt((frames.astype(np.float64) ** 2).mean(axis=1))
    return float((rms > 0.05 * rms.max()).sum()) / 100


def _posteriors(decoder: Any) -> tuple[float, int]:
    """The words' lattice posteriors summed, each weighted by its frames, and the frames:
    silences and fillers (``<sil>``, ``[NOISE]``, ``++UH++``) do not count."""
    weighted, frames = 0.0, 0
    for segment in decoder.seg():
        if segment.word[:1] in "<[+":
            continue
        length = segment.end_frame - segment.start_frame + 1
        weighted += min(float(segment.prob), 1.0) * length
        frames += length
    return weighted, frames


def transcribe_scored(samples: Any, rate: int) -> Heard:
    """:func:`transcribe` and how sure PocketSphinx was: its mean word posterior, each
    word's lattice posterior weighted by its length, and the words heard per second of
    sound (a short hypothesis over long audio gets a high posterior all the same).

    The posteriors are the decoder's own (pocketsphinx 5 ``Decoder.seg()``, already
    probabilities); the utterance's ``hyp().prob`` multiplies them and shrinks with the
    length of the speech, so it says nothing comparable across recordings.
    """
    import numpy as np

    audio = np.asarray(resample(np.asarray(samples, dtype=np.float32), rate, SPHINX_RATE))
    if audio.size == 0 or float(np.abs(audio).max()) < _SILENCE:
        return Heard("")  # the decoder "hears" words in digital silence
    pad = np.zeros(int(_PAD_S * SPHINX_RATE), dtype=np.float32)
    padded = np.concatenate([pad, audio, pad])
    pcm = (np.clip(padded, -1.0, 1.0) * 32767).astype("<i2").tobytes()
    decoder = sphinx()
    words: list[str] = []
    weighted, frames, count = 0.0, 0, 0
    with SPHINX_LOCK:
        for piece in _utterances(pcm):
            decoder.start_utt()
            decoder.process_raw(piece, full_utt=True)
            decoder.end_utt()
            hypothesis = decoder.hyp()
            if hypothesis is not None and hypothesis.hypstr.strip():
                words.append(hypothesis.hypstr.strip())
                more, length = _posteriors(decoder)
                weighted, frames = weighted + more, frames + length
                count += len(hypothesis.hypstr.split())
    sounding = _sounding_s(audio)
    return Heard(" ".join(words), weighted / frames if frames else None,
                 count / sounding if sounding and count else None)


@engine(
    "automatic-speech-recognition", POCKETSPHINX,
    "Speech recognition with CMU PocketSphinx (HMM acoustic model, trigram language "
    "model and dictionary for US English, shipped in the pocketsphinx package): "
    "transcribes WAV, FLAC, OGG or MP3 recordings as lower-case words without "
    "punctuation. US English only; a small, older model: on eSpeak's synthetic voice "
    "more than half of the words come back wrong (WER 0.57, benchmarks/speech_wer.py); "
    "names, rare words, noise, accents and fast speech are hard for it.",
    license="bsd-2-clause", languages=["en"], size_mb=39, latency_s=2.0,
    limits="PocketSphinx is a small, older US-English recogniser: expect misheard words "
           "even on clear speech (a word error rate of 0.57 on eSpeak's voice), no "
           "punctuation, and no other languages.",
)
def automatic_speech_recognition(audio: Path, ctx: ToolContext | None = None) -> str:
    """The words PocketSphinx hears in a recording (WAV, FLAC, OGG or MP3), US English;
    in a run, ``ctx.confidence`` says how sure it was (:func:`transcribe_scored`), and a
    transcript under the floor is not handed on to later steps.

    Raises:
        ToolExecutionError: the file is not readable audio, or no word was heard (an
            empty transcript would pass silence on to the steps that read it).
    """
    samples, rate = read_audio(Path(audio), rate=SPHINX_RATE)
    heard = transcribe_scored(samples, rate)
    text = heard.text
    if ctx is not None:
        ctx.confidence = from_speech(heard.posterior, heard.words_per_s)
    if not text:
        raise ToolExecutionError(
            f"{POCKETSPHINX} heard no words in {Path(audio).name} (it recognises US "
            "English speech only)")
    return text
