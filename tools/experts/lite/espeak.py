"""eSpeak NG through ctypes: the ``libespeak-ng.so`` and voice data that
``espeakng-loader`` ships, with no system package and no subprocess.

The library keeps one global synthesiser, so one :class:`ESpeak` serves the process
(:func:`~hugginggpt.tools.experts.lite.engines.espeak` loads it once) and calls take
turns under its lock. It synthesises into memory
(``AUDIO_OUTPUT_RETRIEVAL``): samples arrive through a callback, 16-bit mono at the
library's rate (22 050 Hz). No maintained Python binding installs offline: ``espeakng``
and ``py-espeak-ng`` run the ``espeak-ng`` program, which is not installed here, and
phonemizer's wrapper only phonemises.
"""

from __future__ import annotations

import ctypes
import threading
from dataclasses import dataclass
from typing import Any

from hugginggpt.tools.errors import ToolExecutionError

__all__ = ["ESpeak", "Voice"]

_AUDIO_OUTPUT_RETRIEVAL = 1
_POS_CHARACTER = 1
_CHARS_UTF8 = 1
_RATE = 1
"""``espeakRATE``: words per minute."""
_SYNTH_CALLBACK = ctypes.CFUNCTYPE(
    ctypes.c_int, ctypes.POINTER(ctypes.c_short), ctypes.c_int, ctypes.c_void_p)


class _VoiceStruct(ctypes.Structure):
    """``espeak_VOICE`` from speak_lib.h."""

    _fields_ = [
        ("name", ctypes.c_char_p),
        ("languages", ctypes.c_void_p),  # (priority byte, language, NUL)*, then a 0 byte
        ("identifier", ctypes.c_char_p),
        ("gender", ctypes.c_ubyte),
        ("age", ctypes.c_ubyte),
        ("variant", ctypes.c_ubyte),
        ("xx1", ctypes.c_ubyte),
        ("score", ctypes.c_int),
        ("spare", ctypes.c_void_p),
    ]


@dataclass(frozen=True)
class Voice:
    """An eSpeak NG voice: its identifier (``gmw/en-US``), name and the languages it
    speaks, each with eSpeak's priority for it (lower is better: ``(2, "en-us")``)."""

    identifier: str
    name: str
    languages: tuple[tuple[int, str], ...]

    def priority(self, code: str) -> int | None:
        """eSpeak's priority of this voice for language ``code``; None if it does not
        speak it."""
        return min((p for p, c in self.languages if c == code), default=None)


def _languages(pointer: int | None) -> tuple[tuple[int, str], ...]:
    """The (priority, language code) pairs of an ``espeak_VOICE.languages`` list."""
    if not pointer:
        return ()
    found: list[tuple[int, str]] = []
    offset = 0
    while (priority := ctypes.c_ubyte.from_address(pointer + offset).value) != 0:
        code = ctypes.string_at(pointer + offset + 1)
        found.append((priority, code.decode("ascii", "replace")))
        offset += len(code) + 2
    return tuple(found)


class ESpeak:
    """The process's eSpeak NG synthesiser.

    Args:
        library: path of ``libespeak-ng.so``.
        data: path of its ``espeak-ng-data`` folder.

    Raises:
        ToolExecutionError: the library cannot be loaded or initialised.
    """

    def __init__(self, library: str, data: str) -> None:
        try:
            lib = ctypes.CDLL(library)
        except OSError as exc:
            raise ToolExecutionError(f"cannot load eSpeak NG ({library}): {exc}") from exc
        lib.espeak_Initialize.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_char_p,
                                          ctypes.c_int]
        lib.espeak_SetSynthCallback.argtypes = [_SYNTH_CALLBACK]
        lib.espeak_SetVoiceByName.argtypes = [ctypes.c_char_p]
        lib.espeak_SetParameter.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_int]
        lib.espeak_ListVoices.argtypes = [ctypes.c_void_p]
        lib.espeak_ListVoices.restype = ctypes.POINTER(ctypes.POINTER(_VoiceStruct))
        lib.espeak_Synth.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_uint,
                                     ctypes.c_int, ctypes.c_uint, ctypes.c_uint,
                                     ctypes.c_void_p, ctypes.c_void_p]
        self.rate = int(lib.espeak_Initialize(_AUDIO_OUTPUT_RETRIEVAL, 0, data.encode(), 0))
        if self.rate <= 0:
            raise ToolExecutionError(f"eSpeak NG did not start (data folder {data})")
        self._lib = lib
        self._lock = threading.Lock()
        self._chunks: list[Any] = []
        self._callback = _SYNTH_CALLBACK(self._collect)  # kept alive as long as self
        lib.espeak_SetSynthCallback(self._callback)
        self.voices = self._list_voices()

    def _collect(self, wav: Any, count: int, _events: Any) -> int:
        import numpy as np

        if wav and count > 0:
            self._chunks.append(np.ctypeslib.as_array(wav, shape=(count,)).copy())
        return 0  # 0: go on synthesising

    def _list_voices(self) -> list[Voice]:
        listed = self._lib.espeak_ListVoices(None)
        voices = []
        for i in range(10_000):  # a NULL-terminated array; the data has a few hundred
            if not listed[i]:
                break
            v = listed[i].contents
            voices.append(Voice((v.identifier or b"").decode(), (v.name or b"").decode(),
                                _languages(v.languages)))
        return voices

    def voice_for(self, language: str) -> Voice | None:
        """The voice that speaks ``language`` (``fr``, ``pt-br``, ``zh``) best by eSpeak's
        priorities, else the best for its base language (``pt`` for ``pt-xx``)."""
        for code in dict.fromkeys((language.lower(), language.lower().split("-")[0])):
            ranked = sorted((p, v.identifier, v) for v in self.voices
                            if (p := v.priority(code)) is not None)
            if ranked:
                return ranked[0][2]
        return None

    def synthesize(self, text: str, voice: Voice, words_per_minute: int,
                   variant: str = "") -> Any:
        """``text`` spoken by ``voice`` (with a variant such as ``klatt``), as int16 samples
        at :attr:`rate`.

        Raises:
            ToolExecutionError: the library refused the voice or the text.
        """
        import numpy as np

        encoded = text.encode("utf-8")
        name = voice.identifier.rsplit("/", 1)[-1] + (f"+{variant}" if variant else "")
        with self._lock:
            if self._lib.espeak_SetVoiceByName(name.encode()) != 0:
                raise ToolExecutionError(f"eSpeak NG has no voice {name!r}")
            self._lib.espeak_SetParameter(_RATE, words_per_minute, 0)
            self._chunks = []
            status = self._lib.espeak_Synth(encoded, len(encoded) + 1, 0, _POS_CHARACTER, 0,
                                            _CHARS_UTF8, None, None)
            self._lib.espeak_Synchronize()
            chunks, self._chunks = self._chunks, []
        if status != 0:
            raise ToolExecutionError(f"eSpeak NG could not synthesise the text (error {status})")
        return np.concatenate(chunks) if chunks else np.zeros(0, dtype=np.int16)
