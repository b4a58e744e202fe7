"""Audio files in and out: read with soundfile, resampled with soxr, written as WAV.

Every backend that takes a recording reads it here: the local backend's speech
recognition and audio classification, and the lite backend's PocketSphinx. soundfile's
wheels bundle libsndfile, so WAV, FLAC, OGG (Vorbis, Opus) and MP3 are read without
ffmpeg; hf-inference text-to-speech writes FLAC, which speech recognition can now read
back. A recording is mixed to mono, and resampled with soxr's high-quality filter (a
linear interpolation, as before, folds high frequencies back into the speech band).
Importing this module imports nothing heavy (numpy, soundfile and soxr load on first use).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, BinaryIO

from hugginggpt.tools.errors import ToolExecutionError

__all__ = ["MAX_AUDIO_S", "AUDIO_FORMATS", "read_audio", "resample", "write_wav", "duration_s"]

MAX_AUDIO_S = 600.0
"""Longer recordings are refused rather than transcribed for minutes."""
AUDIO_FORMATS = "WAV, FLAC, OGG (Vorbis, Opus), MP3, AIFF"
"""What :func:`read_audio` reads, as error messages say it (libsndfile's formats)."""


def _name(source: Path | BinaryIO) -> str:
    return Path(str(getattr(source, "name", "input"))).name


def read_audio(source: Path | BinaryIO, rate: int | None = None) -> tuple[Any, int]:
    """A recording as a mono float32 array in [-1, 1] and its sampling rate.

    Args:
        source: an audio file (path or open binary file) in a format libsndfile reads.
        rate: resample to this rate (Hz); None keeps the file's own.

    Raises:
        ToolExecutionError: the file cannot be decoded, is empty, or is longer than
            :data:`MAX_AUDIO_S`; the message names the file and the formats read.
    """
    import numpy as np
    import soundfile

    opened = str(source) if isinstance(source, Path) else source
    try:
        with soundfile.SoundFile(opened) as audio:
            native = int(audio.samplerate)
            if audio.frames / max(native, 1) > MAX_AUDIO_S:
                raise ToolExecutionError(
                    f"the audio {_name(source)} lasts {audio.frames / native:.0f} s; at most "
                    f"{MAX_AUDIO_S:.0f} s")
            samples = audio.read(dtype="float32", always_2d=True)
    except (soundfile.LibsndfileError, RuntimeError, EOFError) as exc:
        raise ToolExecutionError(
            f"cannot read the audio {_name(source)}: {exc} (formats read: {AUDIO_FORMATS})"
        ) from exc
    if samples.size == 0:
        raise ToolExecutionError(f"the audio {_name(source)} holds no samples")
    mono = samples.mean(axis=1) if samples.shape[1] > 1 else samples[:, 0]
    mono = np.ascontiguousarray(mono, dtype=np.float32)
    if rate is None or rate == native:
        return mono, native
    return resample(mono, native, rate), rate


def resample(samples: Any, rate: int, target: int) -> Any:
    """``samples`` (mono float32) taken from ``rate`` to ``target`` Hz with soxr's
    high-quality filter: band-limited, so nothing above the new Nyquist frequency aliases
    into the speech band."""
    import numpy as np

    if rate == target or len(samples) == 0:
        return samples
    import soxr

    return np.asarray(soxr.resample(samples, rate, target, quality="HQ"), dtype=np.float32)


def write_wav(path: Path, samples: Any, rate: int) -> Path:
    """Mono samples in [-1, 1] written as a 16-bit PCM WAV file (what every player and
    every speech recogniser here reads); values outside [-1, 1] are clipped."""
    import numpy as np
    import soundfile

    clipped = np.clip(np.asarray(samples, dtype=np.float32).reshape(-1), -1.0, 1.0)
    soundfile.write(str(path), clipped, int(rate), subtype="PCM_16", format="WAV")
    return path


def duration_s(path: Path) -> float | None:
    """A recording's length in seconds from its header (the answer says how long the
    speech is); None when libsndfile cannot read it (a format it lacks)."""
    import soundfile

    try:
        info = soundfile.info(str(path))
    except (soundfile.LibsndfileError, RuntimeError, OSError):
        return None
    return round(info.frames / info.samplerate, 2) if info.samplerate > 0 else None
