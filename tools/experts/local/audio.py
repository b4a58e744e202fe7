"""Audio input for the local backend: WAV files read with the standard library.

There is no ffmpeg here, so only PCM WAV is read; a recording is mixed to mono and,
for a pipeline, resampled (linearly) to its feature extractor's sampling rate.
Importing this module imports nothing heavy (numpy only when a file is read).
"""

from __future__ import annotations

import wave
from pathlib import Path
from typing import Any, BinaryIO

from hugginggpt.tools.errors import ToolExecutionError

__all__ = ["MAX_AUDIO_S", "read_wav"]

MAX_AUDIO_S = 600.0
"""Longer recordings are refused rather than transcribed for minutes."""


def read_wav(source: Path | BinaryIO) -> tuple[Any, int]:
    """A WAV file as a mono float32 array in [-1, 1] and its sampling rate.

    Only PCM WAV is read (with the stdlib; there is no ffmpeg to decode other formats).
    """
    import numpy as np

    try:
        with wave.open(str(source) if isinstance(source, Path) else source, "rb") as wav:
            channels, width, rate = wav.getnchannels(), wav.getsampwidth(), wav.getframerate()
            frames = wav.getnframes()
            if frames / max(rate, 1) > MAX_AUDIO_S:
                raise ToolExecutionError(
                    f"the audio lasts {frames / rate:.0f} s; at most {MAX_AUDIO_S:.0f} s")
            raw = wav.readframes(frames)
    except (wave.Error, EOFError) as exc:
        raise ToolExecutionError(
            f"cannot read the audio {getattr(source, 'name', 'input')}: {exc} "
            "(the local backend reads PCM WAV only; there is no ffmpeg here)"
        ) from exc
    if width == 1:
        samples = (np.frombuffer(raw, dtype=np.uint8).astype(np.float32) - 128.0) / 128.0
    elif width == 2:
        samples = np.frombuffer(raw, dtype="<i2").astype(np.float32) / 32768.0
    elif width == 3:
        bytes3 = np.frombuffer(raw, dtype=np.uint8).reshape(-1, 3).astype(np.int32)
        ints = bytes3[:, 0] | (bytes3[:, 1] << 8) | (bytes3[:, 2] << 16)
        samples = np.where(ints >= 1 << 23, ints - (1 << 24), ints).astype(np.float32) / 2**23
    elif width == 4:
        samples = np.frombuffer(raw, dtype="<i4").astype(np.float32) / 2**31
    else:
        raise ToolExecutionError(f"unsupported WAV sample width: {width} bytes")
    if channels > 1:
        samples = samples.reshape(-1, channels).mean(axis=1)
    return samples, rate


def _resample(samples: Any, rate: int, target: int) -> Any:
    """Linear interpolation: crude, but enough for speech models, and needs no ffmpeg."""
    import numpy as np

    if rate == target or len(samples) == 0:
        return samples
    count = max(1, round(len(samples) * target / rate))
    positions = np.linspace(0, len(samples) - 1, count)
    return np.interp(positions, np.arange(len(samples)), samples).astype(np.float32)


def _audio_input(pipe: Any, recording: tuple[Any, int]) -> dict[str, Any]:
    """A recording as the pipeline takes it, at its feature extractor's sampling rate."""
    samples, rate = recording
    target = getattr(pipe.feature_extractor, "sampling_rate", None) or rate
    return {"raw": _resample(samples, rate, target), "sampling_rate": target}
