"""Confidence carried and shown, through the real CLI and the real lite engines: eSpeak NG
speaks, PocketSphinx transcribes, VADER judges. A clear sentence's transcript is not
marked uncertain; a garbled recording's is, and so is the sentiment computed from it,
in the answer and in ``--json``; a recording with next to nothing recognised is not
passed on at all. VADER's weak or mixed verdicts are uncertain, a clear one is not."""

from __future__ import annotations

import asyncio
import base64
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from PIL import Image, ImageDraw, ImageFont

from hugginggpt.cli import main
from hugginggpt.tools.audio import write_wav
from hugginggpt.tools.experts.confidence import THRESHOLDS, from_labels, from_vader
from hugginggpt.tools.experts.lite import speech
from tests.test_served import DevServer, server  # noqa: F401  (a pytest fixture)

ASK = "Transcribe the recording and tell me whether it sounds positive or negative."


def _cli(capsys: pytest.CaptureFixture[str], workspace: Path, request: str,
         *extra: str, code: int = 0) -> tuple[dict, str]:
    """One run of ``hugginggpt run`` on the lite engines: its ``--json`` document, then
    the same run's printed answer (served from the result cache the first run filled).
    ``code``: the exit code expected (3: some steps did not finish)."""
    argv = ["run", request, "--backend", "lite", "--workspace", str(workspace), *extra]
    assert main([*argv, "--json"]) == code
    document = json.loads(capsys.readouterr().out)
    assert main(argv) == code
    return document, capsys.readouterr().out


def _recording(workspace: Path, name: str, samples: np.ndarray, rate: int) -> str:
    path = workspace / name
    write_wav(path, samples.astype(np.float32), rate)
    return str(path)


def test_a_clear_sentences_transcript_is_not_marked_uncertain(capsys, workspace):
    samples, rate = speech.speak("I am a very avid reader and I love books.")
    wav = _recording(workspace, "clear.wav", samples, rate)
    document, printed = _cli(capsys, workspace, ASK, "--file", wav)

    heard, judged = document["results"]["0"], document["results"]["1"]
    assert heard["task"] == "automatic-speech-recognition" and heard["status"] == "done"
    assert heard["confidence"]["score"] >= THRESHOLDS["word posterior"].uncertain
    assert heard["confidence"]["uncertain"] is None
    assert judged["confidence"] is None or not judged["confidence"]["inherited"]
    assert "may be wrong" not in printed and "uncertain result" not in printed


def test_a_garbled_transcript_and_the_sentiment_computed_from_it_are_uncertain(
        capsys, workspace):
    # French read by eSpeak: PocketSphinx knows only US English and hears nonsense
    samples, rate = speech.speak(
        "Le chat est assis sur le tapis et il fait beau aujourd'hui.", "fr")
    wav = _recording(workspace, "french.wav", samples, rate)
    document, printed = _cli(capsys, workspace, ASK, "--file", wav)

    heard, judged = document["results"]["0"], document["results"]["1"]
    assert heard["status"] == judged["status"] == "done"
    assert heard["confidence"]["score"] < THRESHOLDS["word posterior"].uncertain
    assert "PocketSphinx was unsure" in heard["confidence"]["uncertain"]
    assert not heard["confidence"]["unusable"]
    assert judged["confidence"]["inherited"] == [0]
    assert "computed from an uncertain automatic-speech-recognition result" in \
        judged["confidence"]["uncertain"]
    for answer in (printed, document["response"]):
        assert "The transcript may be wrong: PocketSphinx was unsure (confidence" in answer
        assert "Computed from the uncertain result of step 1 (the transcription)" in answer \
            or "computed from the uncertain result of step 1 (the transcription)" in answer


def test_a_recording_with_next_to_nothing_recognised_is_not_passed_on(capsys, workspace):
    rate = 22_050
    seconds = np.arange(3 * rate) / rate
    tone = 0.3 * np.sin(2 * np.pi * (200 + 300 * seconds) * seconds)  # a rising whistle
    wav = _recording(workspace, "whistle.wav", tone, rate)
    document, printed = _cli(capsys, workspace, ASK, "--file", wav, code=3)

    heard, judged = document["results"]["0"], document["results"]["1"]
    assert heard["confidence"]["unusable"], heard
    assert judged["status"] == "skipped" and "unusable" in judged["error"]
    assert document["status"] == "partial"
    assert "was skipped because the result of step 1 is too unsure to use" in printed
    assert "words per second of sound" in printed


def test_vader_says_when_its_verdict_is_weak_or_mixed_and_not_when_it_is_clear(
        capsys, workspace):
    mixed, _ = _cli(capsys, workspace, 'Is this review positive or negative? "The food '
                    'was great but the service was awful."')
    weak, _ = _cli(capsys, workspace, 'Is this review positive or negative? "The food '
                   'was good."')
    clear, printed = _cli(capsys, workspace, 'Is this review positive or negative? "This '
                          'is the worst phone I have ever owned. It broke in a week and '
                          'support ignored me."')

    assert "leaning negative" in mixed["results"]["0"]["confidence"]["uncertain"]
    assert "positive and negative words" in mixed["response"]
    assert "Leaning positive: VADER's evidence is weak" in weak["response"]
    assert clear["results"]["0"]["confidence"]["uncertain"] is None
    assert "The review is negative" in printed and "Uncertain" not in printed


def test_a_misread_line_of_ocr_makes_the_text_and_what_follows_uncertain(
        capsys, workspace):
    font = ImageFont.load_default(size=32)
    lines = ["The soup was cold and bland.", "Our waiter was rude to us.",
             "ACME HARDWARE STORE", "Invoice date: 12 March 2024", "TOTAL 13.49 EUR"]
    page = Image.new("RGB", (760, 40 + 60 * len(lines)), "white")
    for i, line in enumerate(lines):
        ImageDraw.Draw(page).text((30, 20 + 60 * i), line, fill="black", font=font)
    noise = np.random.default_rng(0).normal(0, 120, (page.height, page.width, 3))
    noisy = np.clip(np.asarray(page, dtype=float) + noise, 0, 255).astype("uint8")
    Image.fromarray(noisy).save(workspace / "noisy.png")
    document, printed = _cli(
        capsys, workspace, "Read the text in this image and tell me whether it is positive "
        "or negative.", "--file", str(workspace / "noisy.png"))

    read, judged = document["results"]["0"], document["results"]["1"]
    assert read["task"] == "image-to-text"
    assert read["confidence"]["score"] < THRESHOLDS["line score"].uncertain
    assert "RapidOCR was unsure of the line" in printed
    assert judged["confidence"]["inherited"] == [0]
    assert "computed from the uncertain result of step 1 (reading the image)" in printed


def test_a_document_look_up_between_two_equal_lines_is_uncertain(capsys, workspace):
    rows = [("ACME HARDWARE STORE", ""), ("Invoice date: 12 March 2024", ""),
            ("Hammer", "9.99"), ("Nails", "3.50"), ("TOTAL", "13.49 EUR")]
    font = ImageFont.load_default(size=32)
    page = Image.new("RGB", (760, 40 + 60 * len(rows)), "white")
    for i, (left, right) in enumerate(rows):
        ImageDraw.Draw(page).text((30, 20 + 60 * i), left, fill="black", font=font)
        ImageDraw.Draw(page).text((510, 20 + 60 * i), right, fill="black", font=font)
    page.save(workspace / "receipt.png")
    document, printed = _cli(capsys, workspace, "What is the price on this receipt?",
                             "--file", str(workspace / "receipt.png"))

    looked = document["results"]["0"]
    assert looked["task"] == "document-question-answering" and looked["status"] == "done"
    assert looked["confidence"]["score"] < THRESHOLDS["look-up margin"].uncertain
    assert "Uncertain. Two lines fit the question almost equally" in printed


def test_a_responder_llm_is_told_which_results_are_uncertain(capsys, workspace, llm_server):
    samples, rate = speech.speak(
        "Le chat est assis sur le tapis et il fait beau aujourd'hui.", "fr")
    wav = _recording(workspace, "french.wav", samples, rate)
    llm_server.script("responder", {"content": "The recording was hard to make out."})
    assert main(["run", ASK, "--file", wav, "--backend", "lite", "--planner", "offline",
                 "--llm", "scripted", "--llm-base-url", llm_server.url, "--json",
                 "--workspace", str(workspace)]) == 0
    assert json.loads(capsys.readouterr().out)["response"] == \
        "The recording was hard to make out."
    [call] = llm_server.calls("responder")
    system, user = (m["content"] for m in call["messages"][:2])
    assert 'When a subtask has an "uncertain" line' in system
    assert "uncertain: the transcript may be wrong: PocketSphinx was unsure" in user
    assert "uncertain: " in user.split("Subtask 1:")[1]
    assert "computed from an uncertain automatic-speech-recognition result" in user


def test_a_served_run_carries_the_doubt_too(server: DevServer):  # noqa: F811
    from langgraph_sdk import get_client

    samples, rate = speech.speak(
        "Le chat est assis sur le tapis et il fait beau aujourd'hui.", "fr")
    wav = server.folder / "french.wav"
    write_wav(wav, samples, rate)
    message = {"type": "human", "content": [
        {"type": "text", "text": ASK},
        {"type": "audio", "base64": base64.b64encode(wav.read_bytes()).decode(),
         "mime_type": "audio/wav", "extras": {"filename": "french.wav"}}]}

    async def go() -> dict[str, Any]:
        client = get_client(url=server.url)
        thread = await client.threads.create()
        return await client.runs.wait(thread["thread_id"], "hugginggpt",
                                      input={"messages": [message]},
                                      context={"backend": "lite"})

    out = asyncio.run(go())
    assert out["status"] == "completed", out.get("response")
    heard, judged = out["results"]["0"], out["results"]["1"]
    assert "PocketSphinx was unsure" in heard["confidence"]["uncertain"]
    assert judged["confidence"]["inherited"] == [0]
    assert "The transcript may be wrong" in out["response"]
    assert "computed from the uncertain result of step 1" in out["response"]


def test_the_thresholds_judge_the_engines_own_outputs():
    assert from_vader({"compound": 0.0, "pos": 0.0, "neg": 0.0, "neu": 1.0}).uncertain
    cancelled = from_vader({"compound": 0.02, "pos": 0.21, "neg": 0.19, "neu": 0.6})
    assert cancelled.uncertain == ("VADER's positive and negative words cancel out "
                                   "(proportions: 0.21 positive, 0.19 negative), so it "
                                   "cannot tell which way the text leans")
    assert from_vader({"compound": -0.76, "pos": 0.1, "neg": 0.36, "neu": 0.54}).uncertain \
        is None
    sure = from_labels("text-classification", [{"label": "a", "score": 0.9},
                                               {"label": "b", "score": 0.1}])
    close = from_labels("image-classification", [{"label": "a", "score": 0.52},
                                                 {"label": "b", "score": 0.44}])
    assert sure is not None and sure.uncertain is None
    assert close is not None and "close" in (close.uncertain or "")
    # entities and multi-label scores say nothing about one answer's confidence
    assert from_labels("token-classification", [{"label": "PER", "score": 0.3}]) is None
    assert from_labels("sentence-similarity", 0.56) is None
    assert from_labels("text-classification", [{"label": "a", "score": 0.9},
                                               {"label": "b", "score": 0.8}]) is None


def test_the_trace_and_the_ui_rows_show_the_doubt_too(capsys, workspace):
    from hugginggpt.ui.view import rows_of

    document, _ = _cli(capsys, workspace, 'Is this review positive or negative? "The food '
                       'was good."', "--thread", "doubt-1")
    assert main(["trace", "--thread", "doubt-1", "--workspace", str(workspace)]) == 0
    trace = capsys.readouterr().out
    assert "uncertain: leaning positive: VADER's evidence is weak" in trace
    rows = rows_of(document["plan"], {int(k): v for k, v in document["results"].items()})
    assert rows[0].state == "done"
    assert rows[0].note.startswith("uncertain: leaning positive")
