"""Questions asked the way people ask them, in the languages the offline planner reads,
through the real CLI and the lite engines: choices offered in the question ("good or
bad?", "swedish or norwegian?", "(refund, delivery or password)") say what is asked; the
texts may follow the question, or come before it ("<a review>. good or bad?"); a
question about faces may be in any of the languages."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from hugginggpt.cli import main
from hugginggpt.nodes.planning.bank import DEFAULT_BANK, load_bank
from hugginggpt.nodes.planning.offline import CannotPlanOffline, offline_plan
from hugginggpt.nodes.planning.reading import LANGUAGE_CHOICE, POLAR_CHOICE
from tests.test_lite_speech import _drawn_face


def _run(capsys: pytest.CaptureFixture[str], workspace: Path, request: str,
         *files: Path) -> dict[str, Any]:
    argv = ["run", request, "--backend", "lite", "--no-cache", "--json",
            "--workspace", str(workspace)]
    for path in files:
        argv += ["--file", str(path)]
    main(argv)
    out, err = capsys.readouterr()
    return json.loads(out)


@pytest.mark.parametrize(("words", "polar", "language"), [
    ("is it good or bad?", True, False),
    ("¿es buena o mala?", True, False),
    ("plutôt bon ou mauvais ?", True, False),
    ("eher gut oder schlecht?", True, False),
    ("is dit positief of negatief?", True, False),
    ("é boa ou ruim?", True, False),
    ("thumbs up or down?", True, False),
    ("was the customer happy or not?", True, False),
    ("is it swedish or norwegian?", False, True),
    ("espagnol ou portugais ?", False, True),
    ("is the translation good?", False, False),
    ("translate it into French", False, False),
    ("good and bad news", False, False),
])
def test_choices_offered_in_a_question_say_what_is_asked(words, polar, language):
    assert bool(POLAR_CHOICE.search(words)) is polar
    assert bool(LANGUAGE_CHOICE.search(words)) is language


def test_good_or_bad_in_french_is_a_sentiment_question_the_french_engine_answers(
        capsys, workspace):
    doc = _run(capsys, workspace, "cette critique est bonne ou mauvaise ? « Un accueil "
               "chaleureux et une chambre magnifique. »")
    assert [s["task"] for s in doc["plan"]] == ["text-classification"]
    assert doc["results"]["0"]["model"] == "lite/vader-sentiment-fr"
    assert doc["response"].startswith("The text is positive")


def test_good_or_bad_in_a_language_no_engine_reads_says_which_model_would(
        capsys, workspace):
    doc = _run(capsys, workspace, "essa avaliação é boa ou ruim? 'A entrega atrasou duas "
               "semanas e a caixa veio amassada.'")
    assert [s["task"] for s in doc["plan"]] == ["text-classification"]
    assert doc["status"] == "failed"
    answer = doc["response"]
    assert "this text is Portuguese" in answer and "reads English only" in answer
    assert "multilingual" in answer and "MB" in answer  # a model that reads it, its size
    assert "an LLM reads most languages" in answer and "--llm MODEL" in answer
    assert "neutral" not in answer and "(100%)" not in answer


def test_a_text_no_catalog_model_reads_gets_the_llm_as_its_fix_in_the_callers_terms(
        workspace):
    import hugginggpt

    result = hugginggpt.run("Is deze recensie goed of slecht? 'Het eten was koud en de "
                            "bediening traag.'", backend="lite", workspace=str(workspace),
                            cache=False)
    assert result.status == "failed"
    assert "no model in the catalog reads it. To fix it, an LLM reads most languages" \
        in result.response
    assert "llm=MODEL" in result.response and "--" not in result.response


def test_two_languages_offered_as_choices_ask_for_the_language(capsys, workspace):
    doc = _run(capsys, workspace, "is this swedish or norwegian? 'Jeg liker å gå på tur i "
               "skogen om høsten.'")
    assert doc["results"]["0"]["model"] == "lite/lingua"
    assert doc["response"].startswith("The text is in Norwegian")


def test_labels_in_brackets_are_the_choices_of_a_zero_shot_classification(
        capsys, workspace):
    doc = _run(capsys, workspace, "sort this message (refund, delivery or password): 'My "
               "parcel still has not arrived after ten days.'")
    assert [(s["task"], s["args"].get("labels")) for s in doc["plan"]] == [
        ("zero-shot-classification", "refund, delivery, password")]
    assert doc["response"].startswith("The best fit is delivery")


def test_the_two_texts_of_a_similarity_question_may_follow_it(capsys, workspace):
    doc = _run(capsys, workspace, "do these say the same thing? 'The meeting moved to "
               "Friday' and 'The meeting was rescheduled to Friday'")
    assert [(s["task"], sorted(s["args"])) for s in doc["plan"]] == [
        ("sentence-similarity", ["text", "text2"])]
    assert "mean nearly the same" in doc["response"]


@pytest.mark.parametrize("question", ["hay alguien en esta foto?",
                                      "gibt es Gesichter auf diesem Bild?",
                                      "tem alguém nesta foto?"])
def test_a_question_about_faces_in_another_language_runs_the_face_detector(
        capsys, workspace, tmp_path, question):
    photo = _drawn_face(tmp_path / "IMG_0107.png")
    doc = _run(capsys, workspace, question, photo)
    assert doc["results"]["0"]["model"] == "lite/opencv-haar-faces"
    assert doc["response"].startswith("Found a face")


@pytest.mark.parametrize(("request_", "text"), [
    ("the waiter ignored us for an hour and the soup was cold. good or bad review?",
     "the waiter ignored us for an hour and the soup was cold."),
    ("Wie geht es dir heute, mein Freund? Is that german or dutch?",
     "Wie geht es dir heute, mein Freund?"),
])
def test_a_text_told_before_its_question_is_the_text_asked_about(capsys, workspace,
                                                                 request_, text):
    doc = _run(capsys, workspace, request_)
    assert [(s["task"], s["args"]["text"]) for s in doc["plan"]] == [
        ("text-classification", text)]
    assert doc["status"] == "completed"


@pytest.mark.parametrize("request_", [
    "Meeting notes from monday are long. can you summarize this?",  # forgot to attach
    "I have a photo of my dog. can you make it look like a painting?",  # needs an image
])
def test_a_sentence_before_a_question_is_not_taken_for_a_text_it_cannot_be(request_):
    bank = load_bank(DEFAULT_BANK)
    with pytest.raises(CannotPlanOffline, match="needs a"):
        offline_plan(request_, [], bank, max_subtasks=10)


def test_an_earlier_steps_text_no_engine_reads_fails_saying_so_and_what_would(
        capsys, workspace, tmp_path):
    from PIL import Image, ImageDraw, ImageFont

    shot = tmp_path / "resena.png"
    image = Image.new("RGB", (900, 250), "white")
    draw = ImageDraw.Draw(image)
    for row, line in enumerate(["Resena: el servicio fue pesimo", "y la comida llego fria.",
                                "No volveremos nunca."]):
        draw.text((24, 30 + 60 * row), line, fill="black", font=ImageFont.load_default(32))
    image.save(shot)
    doc = _run(capsys, workspace, "what's the sentiment of the review in this screenshot?",
               shot)
    assert [s["task"] for s in doc["plan"]] == ["image-to-text", "text-classification"]
    answer = doc["response"]
    assert "no model can read the text: the text is Spanish; lite/vader-sentiment reads "\
        "English only" in answer
    assert "an LLM, which reads most languages" in answer and "shows each model's " \
        "languages" in answer
    assert "CannotRead" not in answer and "neutral" not in answer


def test_a_classification_that_names_nothing_to_classify_by_says_what_its_result_is(
        capsys, workspace):
    unasked = _run(capsys, workspace, "classify this ticket: 'I was charged twice for my "
                   "subscription'")
    assert unasked["selections"]["0"]["asked"] is None
    assert "That is its sentiment: the request does not say what to classify it by, so I " \
        "could not sort it by anything else" in unasked["response"]
    asked = _run(capsys, workspace, "is this review positive? 'Great phone, I love it'")
    assert asked["selections"]["0"]["asked"] == "sentiment"
    assert asked["response"].startswith("The review is positive")
    assert "That is its" not in asked["response"]


@pytest.mark.parametrize("request_", [
    "Also, list what the attached report spends on the budget, travel and rent.",
    "Describe the photo associated with the memo, the invoice or the receipt.",
])
def test_a_labels_word_inside_another_word_reads_no_labels(request_):
    """"als" (German "as") inside "Also", "as" inside "associated": no choices asked."""
    from hugginggpt.nodes.planning.reading import labels_in

    assert labels_in(request_) is None
