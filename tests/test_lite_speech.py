"""The lite backend's speech and face engines, for real: eSpeak NG writes speech that
PocketSphinx reads back (from WAV, FLAC and OGG files), OpenCV's Haar cascade finds a
face the test draws and none where there is none, and the face detector is offered only
to requests about faces or people. Then whole runs offline with no LLM: a sentence read
aloud and transcribed back, and faces found in a picture while cars are not asked of a
face detector."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
import soundfile
from PIL import Image

from hugginggpt.evaluation.answer_files import drawn_face as _drawn_face
from hugginggpt.evaluation.answer_files import drawn_street as _street
from hugginggpt.graph.context import Context
from hugginggpt.nodes.ranking import Query, rank_candidates
from hugginggpt.tools.artifacts import ArtifactStore
from hugginggpt.tools.audio import resample
from hugginggpt.tools.errors import ToolExecutionError
from hugginggpt.tools.experts import load_catalog
from hugginggpt.tools.experts.availability import explain_unavailable
from hugginggpt.tools.experts.lite import (
    ESPEAK,
    HAAR_FACES,
    LITE_BACKEND,
    POCKETSPHINX,
    faces,
    speech,
)
from hugginggpt.tools.experts.registry import ToolContext
from tests.conftest import run

SENTENCE = "The weather is nice today."


def _words(text: str) -> list[str]:
    return re.findall(r"[a-z']+", text.lower())


def _recall(reference: str, heard: str) -> float:
    """The share of the reference's words that were heard."""
    said, got = _words(reference), _words(heard)
    return sum(min(said.count(w), got.count(w)) for w in set(said)) / len(said)


def _context(tmp_path: Path, task: str, model: str) -> ToolContext:
    return ToolContext(subtask_id=0, task=task, model=model,
                       artifacts=ArtifactStore(tmp_path, "t"))




# eSpeak NG


def test_espeak_writes_a_playable_wav_as_long_as_the_speech(tmp_path):
    short = speech.text_to_speech(SENTENCE, _context(tmp_path, "text-to-speech", ESPEAK))
    info = soundfile.info(str(short))
    assert (info.format, info.subtype, info.channels) == ("WAV", "PCM_16", 1)
    assert info.samplerate == 22050
    assert 1.0 < info.duration < 4.0  # five words at 150 words a minute
    samples, _ = soundfile.read(str(short), dtype="float32")
    assert float(np.sqrt(np.mean(samples**2))) > 0.02  # speech, not silence
    longer = speech.text_to_speech(
        "The train to the city leaves every twenty minutes from the second platform.",
        _context(tmp_path, "text-to-speech", ESPEAK))
    assert soundfile.info(str(longer)).duration > 2 * info.duration


@pytest.mark.parametrize(("text", "voice"), [
    ("Le train pour Lyon part toutes les vingt minutes du quai numéro deux.", "roa/fr"),
    ("Der Zug nach Berlin fährt alle zwanzig Minuten vom zweiten Gleis ab.", "gmw/de"),
    ("El tren a Madrid sale cada veinte minutos desde el segundo andén.", "roa/es"),
    ("The train to Boston leaves every twenty minutes from the second platform.",
     "gmw/en-US"),
    ("Hi!", "gmw/en-US"),  # too short to tell: US English
])
def test_the_voice_follows_the_texts_language(text, voice):
    assert speech.voice_for(text).identifier == voice
    samples, rate = speech.speak(text)
    assert rate == 22050 and len(samples) > 0.3 * rate


def test_espeak_refuses_empty_and_overlong_texts():
    with pytest.raises(ToolExecutionError, match="empty"):
        speech.speak("   ")
    with pytest.raises(ToolExecutionError, match="more than"):
        speech.speak("word " * (speech.MAX_SPEECH_CHARS // 5 + 1))


# PocketSphinx


def test_pocketsphinx_reads_espeak_speech_back_from_wav_flac_and_ogg(tmp_path):
    samples, rate = speech.speak(SENTENCE)
    files = {"speech.flac": (samples, rate), "speech.ogg": (samples, rate),
             # 44.1 kHz stereo: mixed to mono and resampled to 16 kHz on reading
             "speech.wav": (np.repeat(resample(samples, rate, 44100)[:, None], 2, axis=1),
                            44100)}
    for name, (data, file_rate) in files.items():
        soundfile.write(str(tmp_path / name), data, file_rate)
        heard = speech.automatic_speech_recognition(tmp_path / name)
        assert _recall(SENTENCE, heard) >= 0.8, (name, heard)


def test_pocketsphinx_says_when_it_hears_nothing_or_cannot_read(tmp_path):
    soundfile.write(str(tmp_path / "silence.wav"), np.zeros(16000, dtype=np.float32), 16000)
    with pytest.raises(ToolExecutionError, match=f"{POCKETSPHINX} heard no words"):
        speech.automatic_speech_recognition(tmp_path / "silence.wav")
    (tmp_path / "notes.ogg").write_text("not a recording")
    with pytest.raises(ToolExecutionError, match="cannot read the audio notes.ogg"):
        speech.automatic_speech_recognition(tmp_path / "notes.ogg")


# faces


def test_the_haar_cascade_finds_the_drawn_face_and_marks_it(tmp_path):
    picture = _drawn_face(tmp_path / "face.png")
    out = faces.detect_faces(picture, _context(tmp_path, "object-detection", HAAR_FACES))
    (face,) = out["objects"]
    assert face["label"] == "face" and 0.5 < face["score"] < 1.0
    box = face["box"]
    assert box["xmin"] < 200 < box["xmax"] and box["ymin"] < 200 < box["ymax"]
    assert 80 < box["xmax"] - box["xmin"] < 260
    with Image.open(out["image"]) as marked:
        assert marked.size == (400, 400)
        red = np.asarray(marked.convert("RGB"))[box["ymin"] + 1, box["xmin"] + 20]
        assert tuple(red) == (230, 25, 75)  # the box is drawn


def test_no_face_is_found_where_there_is_none(tmp_path):
    out = faces.detect_faces(_street(tmp_path / "street.png"),
                             _context(tmp_path, "object-detection", HAAR_FACES))
    assert out["objects"] == [] and Path(out["image"]).is_file()


@pytest.mark.parametrize(("text", "offered"), [
    ("Find the faces in team.jpg", True),
    ("How many people are in party.png?", True),
    ("Is there a child in this photo?", True),
    ("Find the cars in street.png", False),
    ("Detect the objects in kitchen.jpg and draw boxes", False),
    ("Find all the cars and pedestrians in intersection.png", False),
])
def test_the_face_detector_is_offered_only_for_faces_or_people(text, offered):
    ranked = rank_candidates("object-detection", load_catalog(), LITE_BACKEND, Query(text=text))
    assert [c.model for c in ranked] == ([HAAR_FACES] if offered else [])
    why = explain_unavailable("object-detection", load_catalog(), LITE_BACKEND)
    assert f"{HAAR_FACES} is offered only for requests about face" in why


# whole runs, offline and with no LLM


def test_read_aloud_then_transcribe_offline_with_no_llm(compiled, workspace):
    context = Context(backend="lite", workspace=str(workspace))
    out = run(compiled, context, f'Read "{SENTENCE}" aloud, then transcribe the audio.')

    assert out["planner"].startswith("offline") and out["status"] == "completed"
    assert [(st.task, st.dep) for st in out["plan"]] == [
        ("text-to-speech", []), ("automatic-speech-recognition", [0])]
    spoken, heard = out["results"][0], out["results"][1]
    assert (spoken.model, heard.model) == (ESPEAK, POCKETSPHINX)
    assert spoken.outputs["audio"]["path"].endswith(".wav")
    assert _recall(SENTENCE, heard.outputs["text"]) >= 0.8, heard.outputs["text"]
    # the response gives the words back and says where the engines fall short
    assert heard.outputs["text"] in out["response"]
    where = workspace.resolve() / spoken.outputs["audio"]["path"]  # absolute (issue 25)
    assert f"1. Speech saved to {where} (" in out["response"]
    assert "Note: eSpeak NG is a formant synthesiser" in out["response"]
    assert "Note: PocketSphinx is a small, older US-English recogniser" in out["response"]


def test_faces_are_found_offline_and_cars_are_not_asked_of_a_face_detector(
        compiled, workspace):
    context = Context(backend="lite", workspace=str(workspace))
    group = _drawn_face(workspace / "group.png")
    out = run(compiled, context, "Find the faces in group.png.", files=[str(group)])
    result = out["results"][0]
    assert result.status == "done" and result.model == HAAR_FACES, result.error
    assert [o["label"] for o in result.outputs["objects"]] == ["face"]
    assert out["response"].startswith("Found a face; the annotated image is at ")
    assert "Note: A Haar cascade finds frontal faces only" in out["response"]

    street = _street(workspace / "street.png")
    out = run(compiled, context, "Find the cars in street.png.", thread="cars",
              files=[str(street)])
    assert out["results"][0].status != "done"
    assert out["selections"][0].model is None
    assert f"{HAAR_FACES} is offered only for requests about face" in \
        out["selections"][0].reason


def test_a_long_recording_is_cut_at_its_pauses_before_decoding():
    """Past 20 s PocketSphinx decodes piece by piece, cut where its voice activity detector
    hears a pause; a short recording stays whole."""
    samples, rate = speech.speak(SENTENCE)
    pause = np.zeros(rate, dtype=np.float32)
    long = np.concatenate([samples, pause] * 10)  # about 26 s
    assert len(long) / rate > 20

    def pcm(audio: np.ndarray) -> bytes:
        return (resample(audio, rate, 16000) * 32767).astype("<i2").tobytes()

    pieces = speech._utterances(pcm(long))
    assert 5 <= len(pieces) <= 12, len(pieces)
    assert all(0 < len(p) < 16000 * 2 * 5 for p in pieces)  # each a sentence, not minutes
    assert speech._utterances(pcm(samples)) == [pcm(samples)]
