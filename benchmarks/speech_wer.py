"""Offline speech round trip: sentences spoken by eSpeak NG, transcribed by PocketSphinx,
scored by word error rate (WER), on the lite backend's own engines.

Each sentence goes the way a "read it aloud, then transcribe it" request goes: the lite
text-to-speech engine (``tools/experts/lite/speech.py``: eSpeak NG's Klatt voice at 150
words a minute, US English) writes a 16-bit WAV, and the lite speech recogniser reads
that file back (soundfile, soxr to 16 kHz, PocketSphinx's en-us models). WER is
(substitutions + deletions + insertions) / words said, on lower-case words without
punctuation (numbers are written as words in the sentences, as a recogniser writes them).

Baseline, in the same run: what eSpeak gives without this project's choice of voice
(its default voice at its default 175 words a minute), through the same recogniser.
Verdict: the engine's voice has a lower overall WER than the default voice. It can be
false (a recogniser or voice update could reverse it), and the script then exits 1.

Times are wall times on a machine that may be busy (the header prints the load
average); the first sentence also pays for loading PocketSphinx (about 1.5 s).

Usage: ``python benchmarks/speech_wer.py [--baseline/--no-baseline]``.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

SENTENCES = (
    "The weather is nice today.",
    "Please call me back tomorrow morning.",
    "The quick brown fox jumps over the lazy dog.",
    "I would like a cup of coffee with milk.",
    "The meeting starts at nine o'clock in the main office.",
    "She bought three red apples at the market.",
    "Turn left at the next traffic light.",
    "My brother lives in a small house near the river.",
    "Can you send me the report by Friday?",
    "The train to the city leaves every twenty minutes.",
)
"""Ten everyday English sentences: statements, a question, a request, numbers as words,
from five to ten words."""


def words(text: str) -> list[str]:
    return re.findall(r"[a-z']+", text.lower())


def word_errors(reference: str, heard: str) -> tuple[int, int]:
    """(edit distance in words, words in the reference)."""
    said, got = words(reference), words(heard)
    row = list(range(len(got) + 1))
    for i, word in enumerate(said, 1):
        previous, row[0] = row[0], i
        for j, other in enumerate(got, 1):
            previous, row[j] = row[j], min(row[j] + 1, row[j - 1] + 1,
                                           previous + (word != other))
    return row[-1], len(said)


@dataclass
class Trial:
    sentence: str
    heard: str
    errors: int
    said: int
    speak_s: float
    hear_s: float
    audio_s: float
    confidence: float | None = None
    """PocketSphinx's mean word posterior, as a run's result carries it."""
    uncertain: bool = False
    """Under the thresholds of ``tools/experts/confidence.py``: the answer says so."""

    @property
    def wer(self) -> float:
        return self.errors / self.said


def trial(sentence: str, folder: Path, voice_variant: str, words_per_minute: int) -> Trial:
    """One sentence through eSpeak (with this voice) to a WAV file, and back through the
    lite speech recogniser."""
    import soundfile

    from hugginggpt.tools.artifacts import ArtifactStore
    from hugginggpt.tools.audio import write_wav
    from hugginggpt.tools.experts.lite import POCKETSPHINX, speech
    from hugginggpt.tools.experts.lite.engines import espeak
    from hugginggpt.tools.experts.registry import ToolContext

    start = time.perf_counter()
    engine = espeak()
    raw = engine.synthesize(sentence, speech.voice_for(sentence), words_per_minute,
                            voice_variant)
    path = write_wav(folder / f"{abs(hash((sentence, voice_variant)))}.wav",
                     raw.astype("float32") / 32768.0, engine.rate)
    spoken = time.perf_counter()
    ctx = ToolContext(subtask_id=0, task="automatic-speech-recognition", model=POCKETSPHINX,
                      artifacts=ArtifactStore(folder, "speech-wer"))
    heard = speech.automatic_speech_recognition(path, ctx)
    done = time.perf_counter()
    errors, said = word_errors(sentence, heard)
    confidence = ctx.confidence
    return Trial(sentence, heard, errors, said, spoken - start, done - spoken,
                 soundfile.info(str(path)).duration,
                 confidence.score if confidence else None,
                 bool(confidence and confidence.uncertain))


def report(title: str, trials: list[Trial]) -> float:
    """Print the table of one voice; return its overall WER."""
    print(f"\n{title}")
    print(f"{'WER':>5} {'audio s':>7} {'speak s':>7} {'hear s':>6} {'conf':>5}  "
          "sentence -> heard (? = marked uncertain)")
    for t in trials:
        conf = f"{t.confidence:5.2f}" if t.confidence is not None else "    -"
        print(f"{t.wer:5.2f} {t.audio_s:7.2f} {t.speak_s:7.3f} {t.hear_s:6.2f} {conf}"
              f"{'?' if t.uncertain else ' '} {t.sentence} -> {t.heard!r}")
    for marked, name in ((True, "marked uncertain"), (False, "not marked")):
        group = [t for t in trials if t.uncertain is marked]
        if group:
            print(f"{name}: {len(group)} sentences, WER "
                  f"{sum(t.errors for t in group) / sum(t.said for t in group):.3f}")
    errors, said = sum(t.errors for t in trials), sum(t.said for t in trials)
    audio, hearing = sum(t.audio_s for t in trials), sum(t.hear_s for t in trials)
    print(f"overall WER {errors / said:.3f} ({errors} errors in {said} words); "
          f"{audio:.1f} s of speech made in {sum(t.speak_s for t in trials):.2f} s, "
          f"recognised in {hearing:.1f} s ({hearing / audio:.2f}x real time)")
    return errors / said


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", action=argparse.BooleanOptionalAction, default=True,
                        help="also measure eSpeak's default voice (and give a verdict)")
    args = parser.parse_args(argv)
    from hugginggpt.tools.experts.lite import speech

    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs; "
          f"{len(SENTENCES)} sentences")
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        chosen = report(
            f"lite engines: eSpeak NG +{speech.VOICE_VARIANT} voice at "
            f"{speech.WORDS_PER_MINUTE} wpm -> PocketSphinx en-us",
            [trial(s, folder, speech.VOICE_VARIANT, speech.WORDS_PER_MINUTE)
             for s in SENTENCES])
        if not args.baseline:
            return 0
        default = report("baseline: eSpeak NG's default voice at 175 wpm -> PocketSphinx en-us",
                         [trial(s, folder, "", 175) for s in SENTENCES])
    better = chosen < default
    print(f"\nverdict: {'PASS' if better else 'FAIL'}: the engine's voice has "
          f"{'a lower' if better else 'no lower'} WER than eSpeak's default "
          f"({chosen:.3f} vs {default:.3f})")
    return 0 if better else 1


if __name__ == "__main__":
    sys.exit(main())
