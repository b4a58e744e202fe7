"""Inputs read as a person means them, through the real CLI and the lite engines: an
attached text file is the text a text task works on; a screenshot's words are read
before a text task works on them; a question about a photo or a receipt is planned as a
task that can run offline; the offline planner adds no step the request does not ask
for, and says what it understood when it is unsure."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from PIL import Image, ImageDraw, ImageFont

from hugginggpt.cli import main
from hugginggpt.nodes.planning.bank import BankExample, PlanBank, load_bank
from hugginggpt.nodes.planning.offline import (
    CannotPlanOffline,
    _from_whole_request,
    offline_plan,
    only_asked,
)
from hugginggpt.nodes.planning.validation import validate_plan
from tests.test_lite_speech import _drawn_face

NOTES = (
    "Minutes of the garden club, 4 May. The club will move its spring plant sale from the "
    "church hall to the library car park, because the hall roof is being repaired. "
    "Priya agreed to print forty posters for the sale by Thursday. The treasurer reported "
    "that the seed fund has three hundred and twenty pounds left. Members voted to buy two "
    "new wheelbarrows for the allotment. The next meeting is on the first Monday of June."
)


def _run(capsys: pytest.CaptureFixture[str], workspace: Path, request: str,
         *files: Path) -> dict[str, Any]:
    argv = ["run", request, "--backend", "lite", "--no-cache", "--json",
            "--workspace", str(workspace)]
    for path in files:
        argv += ["--file", str(path)]
    code = main(argv)
    out, err = capsys.readouterr()
    assert code == 0, err
    return json.loads(out)


def _render(path: Path, lines: list[str], width: int = 960) -> Path:
    image = Image.new("RGB", (width, 70 + 60 * len(lines)), "white")
    draw = ImageDraw.Draw(image)
    font = ImageFont.load_default(size=32)
    for row, line in enumerate(lines):
        draw.text((24, 30 + 60 * row), line, fill="black", font=font)
    image.save(path)
    return path


def _sentences_of(text: str) -> list[str]:
    return [s.strip() for s in text.split(". ") if s.strip()]


# attached text files


@pytest.mark.parametrize("name", ["notes.txt", "notes.md"])
def test_summarize_my_notes_summarises_the_attached_file(capsys, workspace, tmp_path, name):
    notes = tmp_path / name
    notes.write_text(("# Garden club\n\n" if name.endswith(".md") else "") + NOTES)
    doc = _run(capsys, workspace, "summarize my notes", notes)
    assert [s["task"] for s in doc["plan"]] == ["summarization"]
    summary = doc["results"]["0"]["outputs"]["text"]
    assert "summarize my notes" not in summary.lower()
    assert any(sentence.rstrip(".") in summary for sentence in _sentences_of(NOTES))
    assert summary in doc["response"]


def test_the_sentiment_of_an_attached_json_review_is_the_reviews(capsys, workspace, tmp_path):
    review = tmp_path / "review.json"
    review.write_text(json.dumps({"stars": 1, "text": "Terrible kettle. It leaked on the "
                                  "first day and the handle melted. Awful, never again."}))
    doc = _run(capsys, workspace, "is this review positive or negative?", review)
    (step,) = doc["plan"]
    assert step["task"] == "text-classification" and step["args"]["text"].endswith("review.json")
    assert doc["results"]["0"]["outputs"]["labels"][0]["label"] == "NEGATIVE"


def test_a_text_file_that_is_not_utf8_is_refused_with_what_to_do(capsys, workspace, tmp_path):
    notes = tmp_path / "notes.txt"
    notes.write_bytes("Réunion du club : la vente est déplacée.".encode("latin-1"))
    argv = ["run", "summarize my notes", "--backend", "lite", "--no-cache", "--json",
            "--file", str(notes), "--workspace", str(workspace)]
    main(argv)
    doc = json.loads(capsys.readouterr().out)
    error = doc["results"]["0"]["error"]
    assert "notes.txt' is not UTF-8 text" in error and "save it as UTF-8" in error
    assert "Traceback" not in doc["response"]


def test_a_plan_naming_a_text_file_works_on_its_text(capsys, workspace, tmp_path):
    """As an LLM planner writes it (the prompt says a text file may be a text argument):
    a CSV in a text argument is valid, and is read as text."""
    rows = tmp_path / "feedback.csv"
    rows.write_text("customer,comment\nann,The delivery was late and the box was broken\n")
    plan = [{"id": 0, "task": "text-classification", "dep": [], "args": {"text": "feedback.csv"}}]
    assert validate_plan(plan, max_subtasks=4)[1] == []
    plan_file = tmp_path / "plan.json"
    plan_file.write_text(json.dumps(plan))
    code = main(["run", "how do the customers feel?", "--backend", "lite", "--no-cache",
                 "--json", "--file", str(rows), "--plan", str(plan_file),
                 "--workspace", str(workspace)])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert json.loads(out)["results"]["0"]["outputs"]["labels"][0]["label"] == "NEGATIVE"


def test_a_text_file_named_by_the_llm_planner_is_read(capsys, workspace, tmp_path,
                                                      llm_server):
    notes = tmp_path / "notes.txt"
    notes.write_text(NOTES)
    llm_server.script("planner", {"tool_args": {"subtasks": [
        {"id": 0, "task": "summarization", "dep": [], "args": {"text": "notes.txt"}}]}})
    llm_server.script("responder", {"content": "Here is the summary."})
    code = main(["run", "summarize my notes", "--llm", "scripted", "--llm-base-url",
                 llm_server.url, "--backend", "lite", "--no-cache", "--json", "--file",
                 str(notes), "--workspace", str(workspace)])
    out, err = capsys.readouterr()
    assert code == 0, err
    summary = json.loads(out)["results"]["0"]["outputs"]["text"]
    assert any(sentence.rstrip(".") in summary for sentence in _sentences_of(NOTES))
    system = llm_server.calls("planner")[0]["messages"][0]["content"]
    assert "An attached text file" in system and "read first: an image-to-text" in system


# images


def test_a_screenshots_review_gets_its_sentiment_from_its_words(capsys, workspace, tmp_path):
    shot = _render(tmp_path / "Screenshot 2026-12-01 at 10.02.11.png",
                   ["Review: This blender is terrible.", "It broke after two days and",
                    "the support never answered. Awful."])
    doc = _run(capsys, workspace, "what's the sentiment of the review in this screenshot?",
               shot)
    assert [(s["task"], s["dep"]) for s in doc["plan"]] == [
        ("image-to-text", []), ("text-classification", [0])]
    assert doc["plan"][1]["args"]["text"] == "<GENERATED>-0"
    read = doc["results"]["0"]["outputs"]["text"].replace(" ", "").lower()
    assert "thisblenderisterrible" in read
    assert doc["results"]["1"]["outputs"]["labels"][0]["label"] == "NEGATIVE"
    assert "negative" in doc["response"] and "English" not in doc["response"]


def test_any_faces_in_a_photo_runs_the_face_detector(capsys, workspace, tmp_path):
    photo = _drawn_face(tmp_path / "IMG_0042.png")
    doc = _run(capsys, workspace, "any faces in this picture?", photo)
    assert [s["task"] for s in doc["plan"]] == ["object-detection"]
    assert doc["results"]["0"]["model"] == "lite/opencv-haar-faces"
    assert doc["response"].startswith("Found a face")
    assert "instead of visual-question-answering" in doc["planner"]


def test_how_much_did_i_pay_reads_the_total_off_a_receipt(capsys, workspace, tmp_path):
    receipt = _render(tmp_path / "IMG_0043.png", [
        "CORNER GROCERY", "Bread        2.50", "Milk         1.20", "Apples       3.30",
        "TOTAL        7.00"], width=600)
    doc = _run(capsys, workspace, "how much did I pay?", receipt)
    assert [s["task"] for s in doc["plan"]] == ["document-question-answering"]
    assert "TOTAL" in doc["response"] and "7.00" in doc["response"]


def test_a_question_no_runnable_task_answers_keeps_its_task_and_says_what_would(
        capsys, workspace, tmp_path):
    photo = _drawn_face(tmp_path / "IMG_0044.png")
    code = main(["run", "what colour is the wall?", "--backend", "lite", "--no-cache",
                 "--json", "--file", str(photo), "--workspace", str(workspace)])
    doc = json.loads(capsys.readouterr().out)
    assert code != 0 or doc["status"] != "completed"
    assert [s["task"] for s in doc["plan"]] == ["visual-question-answering"]
    assert "no model can run visual-question-answering" in doc["results"]["0"]["error"]


# the offline planner adds nothing and does not guess


def test_an_adapted_example_keeps_only_the_steps_asked_for():
    items = [{"id": 0, "task": "summarization", "dep": [], "args": {"text": "notes.txt"}},
             {"id": 1, "task": "text-to-speech", "dep": [0], "args": {"text": "<GENERATED>-0"}},
             {"id": 2, "task": "feature-extraction", "dep": [0],
              "args": {"text": "<GENERATED>-0"}}]
    assert only_asked(items, {"summarization"}) == items[:1]
    chain = [{"id": 0, "task": "image-to-text", "dep": [], "args": {"image": "a.png"}},
             {"id": 1, "task": "feature-extraction", "dep": [0],
              "args": {"text": "<GENERATED>-0"}},
             {"id": 2, "task": "translation", "dep": [0],
              "args": {"text": "<GENERATED>-0", "tgt_lang": "fr"}}]
    assert only_asked(chain, {"translation"}) == [chain[0], {**chain[2], "id": 1}]


def test_a_bank_example_adds_no_step_to_what_the_request_asks():
    bank = PlanBank([BankExample("x-1", 'Sum up "a long story" and read the summary aloud', [
        {"id": 0, "task": "summarization", "dep": [], "args": {"text": "a long story"}},
        {"id": 1, "task": "text-to-speech", "dep": [0], "args": {"text": "<GENERATED>-0"}}])])
    # the whole-request path, as the planner takes it when no clause reads as a plan
    found = _from_whole_request("give me the gist, please", ["minutes.txt"], bank, [],
                                max_subtasks=4, min_similarity=0.0, candidates=1)
    assert found.items == [{"id": 0, "task": "summarization", "dep": [],
                            "args": {"text": "minutes.txt"}}]
    with pytest.raises(CannotPlanOffline, match="more than the request says"):
        _from_whole_request("hmm, minutes.txt", [], bank, [], max_subtasks=4,
                            min_similarity=0.0, candidates=1)


def test_without_a_text_the_planner_says_what_it_read_instead_of_guessing():
    with pytest.raises(CannotPlanOffline) as refused:
        offline_plan("summarize my notes", [], load_bank(), max_subtasks=4)
    said = str(refused.value)
    assert "I read it as asking for summarization" in said
    assert "attach a text file" in said and "rephrase" in said


def test_a_text_file_is_read_within_the_text_limit(tmp_path):
    from hugginggpt.nodes.execution.arguments import file_text
    from hugginggpt.tools.errors import ArgumentError

    notes = tmp_path / "notes.md"
    notes.write_bytes("\ufeffBonjour à tous.".encode())
    assert file_text("notes.md", notes) == "Bonjour à tous."  # the byte-order mark dropped
    with pytest.raises(ArgumentError, match="holds 15 characters, over the limit of 10"):
        file_text("notes.md", notes, max_chars=10)
    with pytest.raises(ArgumentError, match="bytes, more text than a text argument holds"):
        file_text("notes.md", notes, max_chars=3)
    notes.write_text("  \n")
    with pytest.raises(ArgumentError, match="is empty"):
        file_text("notes.md", notes)


def test_an_llm_planners_image_question_that_cannot_run_is_moved_too(
        capsys, workspace, tmp_path, llm_server):
    photo = _drawn_face(tmp_path / "IMG_0044.png")
    llm_server.script("planner", {"tool_args": {"subtasks": [
        {"id": 0, "task": "visual-question-answering", "dep": [],
         "args": {"image": "IMG_0044.png", "question": "is anyone in this picture?"}}]}})
    llm_server.script("responder", {"content": "Yes: one face."})
    main(["run", "is anyone in this picture?", "--llm", "scripted", "--llm-base-url",
          llm_server.url, "--backend", "lite", "--no-cache", "--json", "--file", str(photo),
          "--workspace", str(workspace), "--no-stream-execution"])
    doc = json.loads(capsys.readouterr().out)
    assert [s["task"] for s in doc["plan"]] == ["object-detection"]
    assert doc["results"]["0"]["model"] == "lite/opencv-haar-faces"
    assert "object-detection instead of visual-question-answering" in doc["planner"]
