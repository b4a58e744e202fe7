"""Audio input for the local backend: recordings read by :mod:`hugginggpt.tools.audio`.

A recording (WAV, FLAC, OGG, MP3: soundfile's libsndfile reads them, no ffmpeg needed)
is mixed to mono and, for a pipeline, resampled with soxr to its feature extractor's
sampling rate. Importing this module imports nothing heavy.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, BinaryIO

from hugginggpt.tools.audio import MAX_AUDIO_S, read_audio, resample

__all__ = ["MAX_AUDIO_S", "read_audio", "read_wav"]


def read_wav(source: Path | BinaryIO) -> tuple[Any, int]:
    """A recording as a mono float32 array and its own sampling rate (the name stays for
    callers from when only WAV was read; any format :func:`read_audio` reads works)."""
    return read_audio(source)


def _audio_input(pipe: Any, recording: tuple[Any, int]) -> dict[str, Any]:
    """A recording as the pipeline takes it, at its feature extractor's sampling rate."""
    samples, rate = recording
    target = getattr(pipe.feature_extractor, "sampling_rate", None) or rate
    return {"raw": resample(samples, rate, target), "sampling_rate": target}
