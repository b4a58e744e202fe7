"""The answer without a responder LLM, in words: one sentence per task type on outputs
shaped as each backend returns them, rounded numbers, clipped texts, failures with what
to do, small talk; and whole runs offline whose final answer is checked."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import soundfile

from hugginggpt.graph.context import Context
from hugginggpt.graph.state import (
    Attempt,
    Candidate,
    Failure,
    Selection,
    State,
    Subtask,
    SubtaskResult,
)
from hugginggpt.nodes.respond import template_response
from hugginggpt.nodes.responding.answer import details, template_answer
from hugginggpt.tools.artifacts import ArtifactStore
from hugginggpt.tools.audio import write_wav
from hugginggpt.tools.errors import Fix, setting
from hugginggpt.tools.experts.outputs import normalize_outputs
from hugginggpt.tools.experts.tasks import get_task_type, task_types
from hugginggpt.tools.text import MAX_MESSAGE
from tests.conftest import run


def _ref(kind: str, name: str, **extra: Any) -> dict[str, Any]:
    return {"artifact_id": name.split(".")[0], "kind": kind,
            "path": f"artifacts/t1/{name}", "bytes": 4213, **extra}


IMAGE = _ref("image", "3f2a9c1e0b7d4a51.png")
NOTICE = "TOTAL 23.48\nVAT 3.91\nThank you"

# (task, outputs as the backend returns them once normalised, args, model, backend,
#  request, the answer)
CASES: list[tuple[str, dict[str, Any], dict[str, str], str, str, str, str]] = [
    ("text-classification",
     {"labels": [{"label": "NEGATIVE", "score": 0.8934}, {"label": "NEUTRAL", "score": 0.0566},
                 {"label": "POSITIVE", "score": 0.05}]},
     {"text": "The food was cold."}, "lite/vader-sentiment", "lite",
     "Is this review positive or negative? The food was cold.", "The review is negative (89%)."),
    ("zero-shot-classification",
     {"labels": [{"label": "sports", "score": 0.4312}, {"label": "politics", "score": 0.2104},
                 {"label": "cooking", "score": 0.0876}]},
     {"text": "The striker scored twice", "labels": "sports, politics, cooking"},
     "lite/minilm-zero-shot", "lite", "",
     "The best fit is sports (similarity 0.43); then politics (0.21) and cooking (0.09)."),
    ("token-classification",
     {"entities": [{"entity": "PER", "word": "Marie Curie", "score": 0.998, "start": 0,
                    "end": 11},
                   {"entity": "LOC", "word": "Paris", "score": 0.9971, "start": 21, "end": 26},
                   {"entity": "PER", "word": "Marie Curie", "score": 0.99, "start": 40,
                    "end": 51}]},
     {"text": "Marie Curie lived in Paris."}, "dslim/bert-base-NER", "local", "",
     "Entities: Marie Curie (person) and Paris (location)."),
    ("summarization", {"text": "Solar power grew fastest."}, {"text": "..."},
     "lite/summa-textrank", "lite", "", "Summary: Solar power grew fastest."),
    ("translation", {"text": "Bonjour le monde."}, {"text": "Hello world.", "tgt_lang": "fr"},
     "Helsinki-NLP/opus-mt-en-fr", "local", "", "In French: Bonjour le monde."),
    ("question-answering", {"text": "children under twelve"},
     {"question": "Who gets in free?", "text": "Entry is free for children under twelve."},
     "distilbert/distilbert-base-cased-distilled-squad", "local", "",
     "Answer: children under twelve"),
    ("text-generation", {"text": "Once upon a time there was a fox."}, {"text": "Once"},
     "openai-community/gpt2", "local", "", "Generated text: Once upon a time there was a fox."),
    ("text2text-generation", {"text": "The meeting moved to Friday."}, {"text": "..."},
     "google/flan-t5-small", "local", "", "Result: The meeting moved to Friday."),
    ("conversational", {"text": "I am fine, thanks!"}, {"text": "How are you?"},
     "llm", "llm", "", "Reply: I am fine, thanks!"),
    ("sentence-similarity", {"score": 0.49031},
     {"text": "A man plays a guitar.", "text2": "Someone eats lunch outside."},
     "sentence-transformers/all-MiniLM-L6-v2", "lite", "",
     "The two sentences are related but not the same (similarity 0.49)."),
    ("feature-extraction", {"embedding": _ref("vector", "9b1d.json", dims=384)},
     {"text": "hello"}, "sentence-transformers/all-MiniLM-L6-v2", "lite", "",
     "Computed the text's embedding (384 numbers), saved in artifacts/t1/9b1d.json."),
    ("fill-mask",
     {"text": "paris is the capital of france.",
      "labels": [{"label": "paris", "score": 0.912, "sequence": "paris is the capital."},
                 {"label": "lyon", "score": 0.031, "sequence": "lyon is the capital."}]},
     {"text": "[MASK] is the capital of france."}, "google-bert/bert-base-uncased", "local", "",
     "Filled in: paris is the capital of france. (the word: paris (91%); other guesses: "
     "lyon (3%))"),
    ("tabular-classification",
     {"labels": [{"row": 0, "label": "yes", "score": 0.87}, {"row": 1, "label": "no",
                                                            "score": 0.64},
                 {"row": 2, "label": "yes", "score": 0.9}]},
     {"table": "data.csv"}, "julien-c/wine-quality", "local", "",
     "Classified 3 rows: 2 yes, 1 no (row 1: yes 87%, row 2: no 64%, row 3: yes 90%)."),
    ("table-question-answering", {"text": "42"}, {"table": "t.csv", "question": "How many?"},
     "google/tapas-base-finetuned-wtq", "local", "", "Answer from the table: 42"),
    ("image-classification",
     {"labels": [{"label": "tabby, tabby cat", "score": 0.8712},
                 {"label": "tiger cat", "score": 0.0621}]},
     {"image": "cat.png"}, "google/vit-base-patch16-224", "local", "",
     "The image is classified as tabby (87%)."),
    ("object-detection",
     {"image": IMAGE, "objects": [
         {"label": "dog", "score": 0.9712, "box": {"xmin": 1, "ymin": 2, "xmax": 30, "ymax": 40}},
         {"label": "dog", "score": 0.9104, "box": {"xmin": 50, "ymin": 2, "xmax": 80, "ymax": 40}},
         {"label": "frisbee", "score": 0.8843,
          "box": {"xmin": 9, "ymin": 9, "xmax": 12, "ymax": 12}}]},
     {"image": "park.png"}, "facebook/detr-resnet-50", "local", "",
     "Found 3 objects: 2 dogs (97%, 91%) and a frisbee (88%); the annotated image is at "
     "artifacts/t1/3f2a9c1e0b7d4a51.png."),
    ("image-segmentation",
     {"image": IMAGE, "segments": [{"label": "sky", "score": None, "area": 0.3512},
                                   {"label": "road", "score": 0.99, "area": 0.2049}]},
     {"image": "street.png"}, "nvidia/segformer-b0-finetuned-ade-512-512", "local", "",
     "Found 2 segments: sky (35% of the image) and road (20% of the image); the segment map "
     "is at artifacts/t1/3f2a9c1e0b7d4a51.png."),
    ("depth-estimation", {"image": IMAGE}, {"image": "room.png"}, "Intel/dpt-hybrid-midas",
     "local", "", "Depth map saved to artifacts/t1/3f2a9c1e0b7d4a51.png."),
    ("image-to-text", {"text": NOTICE}, {"image": "scan.png"}, "lite/rapidocr", "lite", "",
     "The image says:\nTOTAL 23.48\nVAT 3.91\nThank you"),
    ("zero-shot-image-classification",
     {"labels": [{"label": "a cat", "score": 0.9512}, {"label": "a dog", "score": 0.0488}]},
     {"image": "pet.png", "labels": "a cat, a dog"}, "openai/clip-vit-base-patch32", "local",
     "", "The image best fits a cat (95%); then a dog (5%)."),
    ("zero-shot-object-detection",
     {"image": IMAGE, "objects": [
         {"label": "red mug", "score": 0.41, "box": {"xmin": 1, "ymin": 2, "xmax": 30, "ymax": 40}},
         {"label": "red mug", "score": 0.2, "box": {"xmin": 50, "ymin": 2, "xmax": 60, "ymax": 9}},
         {"label": "car keys", "score": 0.1314, "box": {"xmin": 5, "ymin": 5, "xmax": 9,
                                                        "ymax": 8}}]},
     {"image": "kitchen.png", "labels": "red mug, car keys, kettle"},
     "google/owlvit-base-patch32", "local", "",
     "Found 2 red mugs (score 0.41, at x 1-30, y 2-40; score 0.20, at x 50-60, y 2-9) and car "
     "keys (score 0.13, at x 5-9, y 5-8); the boxes are drawn on "
     "artifacts/t1/3f2a9c1e0b7d4a51.png. No kettle was found."),
    ("image-text-to-text", {"text": "A red bicycle leans on a wall."}, {"image": "bike.png"},
     "HuggingFaceTB/SmolVLM-256M-Instruct", "local", "",
     "Description: A red bicycle leans on a wall."),
    ("image-to-image", {"image": IMAGE}, {"image": "a.png", "text": "make it snowy"},
     "timbrooks/instruct-pix2pix", "hf-inference", "",
     "Edited image saved to artifacts/t1/3f2a9c1e0b7d4a51.png."),
    ("text-to-image", {"image": IMAGE}, {"text": "a lighthouse at dusk"},
     "stabilityai/sd-turbo", "local", "", "Image saved to artifacts/t1/3f2a9c1e0b7d4a51.png."),
    ("text-to-video", {"video": _ref("video", "77aa.mp4")}, {"text": "waves"},
     "ali-vilab/text-to-video-ms-1.7b", "hf-inference", "",
     "Video saved to artifacts/t1/77aa.mp4."),
    ("visual-question-answering", {"text": "two"},
     {"image": "dogs.png", "question": "How many dogs?"}, "dandelin/vilt-b32-finetuned-vqa",
     "local", "", "Answer: two"),
    ("document-question-answering", {"text": "Entry is free for children under twelve."},
     {"image": "notice.png", "question": "Who gets free entry?"}, "lite/rapidocr-minilm",
     "lite", "", "From the document: Entry is free for children under twelve."),
    ("text-to-speech", {"audio": _ref("audio", "d56f.wav", seconds=3.204)},
     {"text": "Hello there."}, "facebook/mms-tts-eng", "local", "",
     "Speech saved to artifacts/t1/d56f.wav (3.2 s)."),
    ("automatic-speech-recognition", {"text": "the weather is nice today"},
     {"audio": "talk.wav"}, "openai/whisper-tiny", "local", "",
     "Transcript: the weather is nice today"),
    ("audio-to-audio", {"audio": _ref("audio", "e1e1.wav", seconds=2.46)},
     {"audio": "noisy.wav"}, "speechbrain/sepformer-wham", "hf-inference", "",
     "Processed audio saved to artifacts/t1/e1e1.wav (2.5 s)."),
    ("audio-classification",
     {"labels": [{"label": "dog_bark", "score": 0.8012}, {"label": "siren", "score": 0.1201}]},
     {"audio": "yard.wav"}, "MIT/ast-finetuned-audioset-10-10-0.4593", "local", "",
     "The recording is classified as dog bark (80%); then siren (12%)."),
]


def _answer(task: str, outputs: dict[str, Any], args: dict[str, str] | None = None,
            model: str = "org/model", backend: str = "local", request: str = "") -> str:
    """The answer for one done subtask, without notes."""
    plan = [Subtask(id=0, task=task, args=args or {})]
    results = {0: SubtaskResult(id=0, task=task, status="done", model=model, backend=backend,
                                outputs=outputs)}
    return template_answer(plan, results, request, [])


def test_every_task_type_has_its_case():
    assert {case[0] for case in CASES} == {t.name for t in task_types()}
    assert all(t.say is not None and t.noun for t in task_types())  # each says its own


@pytest.mark.parametrize(("task", "outputs", "args", "model", "backend", "request_", "said"),
                         CASES, ids=[case[0] for case in CASES])
def test_the_answer_for_each_task_type(task, outputs, args, model, backend, request_, said):
    task_type = get_task_type(task)
    assert task_type is not None and set(outputs) == {o.name for o in task_type.outputs}
    answer = _answer(task, outputs, args, model, backend, request_)
    assert answer.split("\nNote: ")[0] == said


@pytest.mark.parametrize(("labels", "model", "backend", "said"), [
    ([{"label": "fr", "score": 0.9999957}], "lite/lingua", "lite",
     "The text is in French (100%)."),
    ([{"label": "zh-cn", "score": 0.857}, {"label": "ko", "score": 0.142}], "lite/lingua",
     "lite", "The text is in Chinese (86%); then Korean (14%)."),
    ([{"label": "joy", "score": 0.9132}, {"label": "surprise", "score": 0.05}],
     "j-hartmann/emotion-english-distilroberta-base", "local", "The text expresses joy (91%)."),
    ([{"label": "sports", "score": 0.7211}, {"label": "politics", "score": 0.2013},
      {"label": "business", "score": 0.0503}], "org/topics", "local",
     "The text is classified as sports (72%); then politics (20%)."),
    ([{"label": "POSITIVE", "score": 0.004}], "org/m", "local", "The text is positive (<1%)."),
])
def test_labels_are_told_as_languages_emotions_and_classes(labels, model, backend, said):
    assert _answer("text-classification", {"labels": labels}, model=model,
                   backend=backend) == said


def test_a_recognised_language_is_named_and_scores_that_are_not_probabilities_stay_numbers():
    spoken = _answer("audio-classification", {"labels": [{"label": "en: English",
                                                          "score": 0.93}]})
    assert spoken == "The speech is in English (93%)."
    by_llm = _answer("zero-shot-classification", {"labels": [
        {"label": "sports", "score": 0.93}, {"label": "politics", "score": 0.05}]},
        model="llm", backend="llm")
    assert by_llm == "The best fit is sports (93%); then politics (5%)."
    faces = _answer("object-detection", {"image": IMAGE, "objects": [
        {"label": "face", "score": 0.833, "box": {}}, {"label": "face", "score": 0.75, "box": {}}]},
        model="lite/opencv-haar-faces", backend="lite")
    first, note = faces.split("\nNote: ")
    assert first == "Found 2 faces; the annotated image is at artifacts/t1/3f2a9c1e0b7d4a51.png."
    assert note.startswith("A Haar cascade finds frontal faces only")  # the card's limits
    assert _answer("object-detection", {"image": IMAGE, "objects": []}) == \
        "No objects were found; the annotated image is at artifacts/t1/3f2a9c1e0b7d4a51.png."
    assert _answer("object-detection", {"image": IMAGE, "objects": [
        {"label": "person", "score": 0.5}, {"label": "person", "score": 0.6}]}) == \
        "Found 2 people (50%, 60%); the annotated image is at artifacts/t1/3f2a9c1e0b7d4a51.png."


def test_empty_outputs_are_said_plainly():
    assert _answer("automatic-speech-recognition", {"text": ""}) == \
        "No speech was recognised in the recording."
    assert _answer("token-classification", {"entities": []}) == "No named entities were found."
    assert _answer("zero-shot-object-detection", {"image": IMAGE, "objects": []},
                   {"image": "kitchen.png", "labels": "red mug, kettle"}) == (
        "No red mug or kettle was found in the image: nothing in it matched well enough. The "
        "image is at artifacts/t1/3f2a9c1e0b7d4a51.png.")
    assert _answer("sentence-similarity", {"score": 0.912},
                   {"text": "<GENERATED>-0", "text2": "<GENERATED>-1"}) == \
        "The two texts mean nearly the same (similarity 0.91)."
    assert _answer("image-to-text", {"text": "a dog running on the beach"},
                   model="Salesforce/blip-image-captioning-base") == \
        "Caption: a dog running on the beach"


def test_long_texts_are_clipped_saying_where_the_whole_is():
    long = "The committee met again. " * 100  # 2500 characters, inline
    said = _answer("summarization", {"text": long})
    assert len(said) < 800 and said.startswith("Summary: The committee met again.")
    assert said.endswith("... (2499 characters in all; the whole output is in the run's results and in "
                         "the thread's trace)")
    stored = _ref("text", "5e5e.txt", preview="Chapter one. It was a dark night.")
    assert _answer("text-generation", {"text": stored}) == (
        "Generated text: Chapter one. It was a dark night. ... (the whole text is in "
        "artifacts/t1/5e5e.txt)")


def _failed(task: str, failure: Failure, status: str = "failed", **extra: Any
            ) -> SubtaskResult:
    """A result that did not finish; its one-line error is for logs, the answer reads
    the failure's fields."""
    return SubtaskResult(id=0, task=task, status=status, error="(for logs only)",
                         failure=failure, **extra)


def test_a_failure_says_why_shortened_and_what_to_do():
    timeout = _failed(
        "translation", Failure(reason="no result within 300s; the call was abandoned",
                               error_type="ToolTimeoutError",
                               tried=["Helsinki-NLP/opus-mt-en-fr"],
                               tried_types=["ToolTimeoutError"]),
        attempt_log=[Attempt(model="Helsinki-NLP/opus-mt-en-fr", backend="local", ok=False,
                             error="no result within 300s", error_type="ToolTimeoutError")])
    plan = [Subtask(id=0, task="translation", args={"text": "hi", "tgt_lang": "fr"})]
    assert template_answer(plan, {0: timeout}, "", []) == (
        "The translation failed: no result within 300s; the call was abandoned. To fix it, "
        "raise the time a model may take with --subtask-timeout (or "
        "HUGGINGGPT_SUBTASK_TIMEOUT), or try a faster model or another --backend.")

    no_text = _failed("image-to-text", Failure(
        reason="lite/rapidocr found no text in cat.png: it reads text and cannot describe "
               "what a picture shows", error_type="ToolExecutionError",
        tried=["lite/rapidocr", "org/b"], tried_types=["ToolExecutionError", "ToolOutputError"]))
    plan = [Subtask(id=0, task="image-to-text", args={"image": "cat.png"})]
    assert template_answer(plan, {0: no_text}, "", []) == (
        "Reading the image failed (after trying 2 models): lite/rapidocr found no text in "
        "cat.png: it reads text and cannot describe what a picture shows. To fix it, try "
        "another --backend, or another model (hugginggpt models list --task image-to-text).")

    no_model = ("no model can run text-to-speech with backend 'local' (no model of the "
                "catalog is in the cache)")
    fix = Fix(say="try another {}; local: facebook/mms-tts-eng is not cached (145 MB)",
              controls=[setting("backend")])
    plan = [Subtask(id=0, task="text-to-speech", args={"text": "hi"})]
    failed = {0: _failed("text-to-speech", Failure(reason=no_model, fix=fix))}
    said = template_answer(plan, failed, "", [])
    assert said == (f"Reading the text aloud failed: {no_model}. To fix it, try another "
                    "--backend; local: facebook/mms-tts-eng is not cached (145 MB).")  # its own
    # the fix is the failure's, said for who asked
    assert template_answer(plan, failed, "", [], caller="python").endswith(
        "To fix it, try another backend=...; local: facebook/mms-tts-eng is not cached "
        "(145 MB).")

    noisy = _failed("summarization", Failure(reason="x" * 1000, error_type="ToolExecutionError"))
    said = template_answer([Subtask(id=0, task="summarization", args={"text": "t"})],
                           {0: noisy}, "", [])
    # whole (issue 25): the user reads all of a long message; only a pathological one
    # (beyond MAX_MESSAGE characters) is cut
    assert "x" * 1000 in said and "truncated" not in said and "Traceback" not in said
    huge = _failed("summarization", Failure(reason="y" * (MAX_MESSAGE + 50),
                                            error_type="ToolExecutionError"))
    said = template_answer([Subtask(id=0, task="summarization", args={"text": "t"})],
                           {0: huge}, "", [])
    assert "y" * MAX_MESSAGE + " ...(truncated)" in said and "y" * (MAX_MESSAGE + 1) not in said


def test_several_steps_have_a_lead_and_a_skipped_one_names_the_step_it_waited_for():
    plan = [Subtask(id=0, task="image-to-text", args={"image": "scan.png"}),
            Subtask(id=1, task="text-classification", dep=[0],
                    args={"text": "<GENERATED>-0"}),
            Subtask(id=2, task="text-to-speech", dep=[1], args={"text": "<GENERATED>-1"}),
            Subtask(id=3, task="summarization", args={"text": "A long text."})]
    results = {
        0: _failed("image-to-text", Failure(reason="scan.png: no such file",
                                            error_type="ArgumentError")),
        1: _failed("text-classification", Failure(reason="scan.png: no such file",
                                                  dependency=0, dependency_ended="failed"),
                   status="skipped"),
        2: _failed("text-to-speech", Failure(reason="...", dependency=1,
                                             dependency_ended="skipped"), status="skipped"),
        3: SubtaskResult(id=3, task="summarization", status="done", model="m", backend="local",
                         outputs={"text": "A text."}),
    }
    assert template_answer(plan, results, "", ["A note."]) == (
        "I planned 4 steps; 1 finished, 1 failed and 2 were skipped:\n"
        "1. Reading the image failed: scan.png: no such file. To fix it, check the input it "
        "names.\n"
        "2. The classification was skipped because step 1 failed.\n"
        "3. Reading the text aloud was skipped because step 2 skipped.\n"
        "4. Summary: A text.\n\n(A note.)")


def _state(plan: list[Subtask], results: dict[int, SubtaskResult], request: str = "do it",
           **extra: Any) -> State:
    return State(request=request, plan=plan, results=results, **extra)


def test_the_answer_says_once_at_its_end_that_no_responder_llm_wrote_it():
    plan = [Subtask(id=0, task="image-to-text", args={"image": "scan.png"}),
            Subtask(id=1, task="text-to-speech", dep=[0], args={"text": "<GENERATED>-0"})]
    results = {0: SubtaskResult(id=0, task="image-to-text", status="done",
                                model="lite/rapidocr", backend="lite",
                                outputs={"text": NOTICE}),
               1: SubtaskResult(id=1, task="text-to-speech", status="done",
                                model="org/tts", backend="local",
                                outputs={"audio": _ref("audio", "a.wav", seconds=1.75)})}
    text = template_response(_state(plan, results, "Read scan.png aloud"))
    assert text == (
        "I ran 2 steps:\n1. The image says:\n   TOTAL 23.48\n   VAT 3.91\n   Thank you\n"
        "2. Speech saved to artifacts/t1/a.wav (1.8 s).\n\n"
        "(Written without a responder LLM; to have an LLM write the answer, set "
        "OPENAI_API_KEY or pass llm=MODEL.)")
    failed = template_response(_state(plan, results), "The LLM responder failed: "
                               "APIConnectionError: Connection error. (is the server "
                               "running, and is --llm-base-url right?)")
    assert failed.endswith("\n\n(The LLM responder failed: APIConnectionError: Connection "
                           "error. (is the server running, and is --llm-base-url right?); "
                           "this answer was written without a responder LLM.)")
    assert failed.count("responder") == 2


@pytest.mark.parametrize(("request_", "opening"), [
    ("hi", "Hello! "), ("Good morning!", "Hello! "), ("Thanks a lot, that helped.",
                                                        "You're welcome! "),
    ("What is the capital of Australia?", "I cannot answer that myself. "),
])
def test_small_talk_gets_a_reply_naming_what_an_llm_would_add(request_, opening):
    text = template_response(_state([], {}, request_), context=Context(caller="cli"))
    assert text.startswith(opening + "Without a language model configured I can run expert "
                           "models (caption or read a photo, translate")
    assert "but not chat or answer general questions; to add that, set OPENAI_API_KEY" in text
    assert "--llm MODEL --llm-base-url URL" in text and "\n" not in text
    python = template_response(_state([], {}, request_))  # a Python caller's keywords
    assert "llm=MODEL llm_base_url=URL" in python and "--" not in python


def test_details_show_candidates_and_scores_rounded():
    plan = [Subtask(id=0, task="text-classification", args={"text": "Great phone!"})]
    selections = {0: Selection(
        subtask_id=0, task="text-classification", model="lite/vader-sentiment",
        backend="lite", reason="top-ranked on lite (score 2.41 vs 2.20)",
        candidates=[Candidate(model="lite/vader-sentiment", backend="lite", score=2.4123456789),
                    Candidate(model="lite/lingua", backend="lite", score=2.2012345678)])}
    results = {0: SubtaskResult(id=0, task="text-classification", status="done",
                                model="lite/vader-sentiment", backend="lite", attempts=1,
                                latency_s=0.0812, outputs={"labels": [
                                    {"label": "POSITIVE", "score": 0.9412}]})}
    shown = details(plan, selections, results)
    assert "candidates: lite/vader-sentiment (lite) 2.41, lite/lingua (lite) 2.20" in shown
    assert "done by lite/vader-sentiment (lite) in 0.08 s, 1 attempt(s)" in shown
    answer = template_answer(plan, results, "", [])
    assert answer == "The text is positive (94%)."  # no scores of the ranking, no model
    assert "2.41" not in answer and "vader" not in answer


def test_an_audio_output_carries_its_length(tmp_path):
    store = ArtifactStore(tmp_path, "t")
    _, path = store.new_path(".wav")
    write_wav(path, [0.0] * 11025, 22050)
    task_type = get_task_type("text-to-speech")
    assert task_type is not None
    outputs = normalize_outputs(task_type, path, store)
    assert outputs["audio"]["seconds"] == 0.5
    assert _answer("text-to-speech", outputs) == \
        f"Speech saved to {outputs['audio']['path']} (0.5 s)."


# whole runs offline, through the graph


def test_a_sentiment_request_offline_is_answered_in_a_sentence(compiled, workspace):
    context = Context(backend="lite", planner="offline", workspace=str(workspace))
    out = run(compiled, context, "Is this review positive or negative: 'The food was cold "
                                 "and the waiter was rude.'")
    assert out["status"] == "completed", out.get("abort_reason")
    assert out["results"][0].model == "lite/vader-sentiment"
    top = out["results"][0].outputs["labels"][0]
    assert top["label"] == "NEGATIVE"
    # one cue word ("rude"): VADER's verdict is weak, and the answer says so
    assert out["response"] == (
        f"The review is negative ({round(top['score'] * 100)}%). "
        "Uncertain. Leaning negative: VADER's evidence is weak (compound -0.46, under 0.5; "
        "its percentage is not a probability).\n\n"
        "(Written without a responder LLM; to have an LLM write the answer, set "
        "OPENAI_API_KEY or pass llm=MODEL.)")


def test_a_tts_request_offline_says_where_the_speech_is_and_how_long(compiled, workspace):
    context = Context(backend="lite", planner="offline", workspace=str(workspace))
    out = run(compiled, context, 'Read "Good morning, the museum opens at nine." aloud.')
    assert out["status"] == "completed", out.get("abort_reason")
    audio = out["results"][0].outputs["audio"]
    info = soundfile.info(str(Path(workspace) / audio["path"]))
    seconds = info.frames / info.samplerate
    found = re.match(r"Speech saved to (/\S+\.wav) \((\d+\.\d) s\)\.\n", out["response"])
    assert found, out["response"]  # the absolute path: the answer names no workspace
    assert found.group(1) == str(workspace.resolve() / audio["path"]) and float(found.group(2)) == round(seconds, 1)
    assert "\nNote: eSpeak NG is a formant synthesiser" in out["response"]


def test_small_talk_offline_gets_a_reply(compiled, workspace):
    out = run(compiled, Context(backend="lite", planner="offline", workspace=str(workspace)),
              "Hi! How's it going?")
    assert out["status"] == "completed" and out["plan"] == []
    assert out["response"].startswith("Hello! Without a language model configured")


def test_a_failing_responder_llm_leaves_the_answer_in_words_saying_why(
        compiled, workspace, llm_server):
    llm_server.script("responder", {"status": 500})
    context = Context(llm="scripted-model", llm_base_url=llm_server.url, llm_max_retries=0,
                      backend="dry-run", workspace=str(workspace), dry_run_latency_scale=0.0,
                      plan=[{"id": 0, "task": "summarization", "dep": [],
                             "args": {"text": "A long story."}}])
    out = run(compiled, context)
    assert out["responder"] == "template (responder LLM failed)"
    first, *_, last = out["response"].split("\n")
    assert first.startswith("Summary: [dry-run: summarization by ")
    assert first.endswith("simulated text")
    assert last.startswith("(The LLM responder failed: ") and "HTTP 500" in last
    assert last.endswith("; this answer was written without a responder LLM.)")
    assert "(A dry run: the experts were simulated" in out["response"]


def test_small_talk_with_a_failing_responder_says_why():
    text = template_response(_state([], {}, "hi"), "The LLM responder failed: HTTP 500")
    assert text == "I could not answer this without the responder LLM. (The LLM responder " \
                   "failed: HTTP 500)"


def test_verbose_adds_the_candidates_and_scores_after_the_answer(capsys, tmp_path):
    from hugginggpt.cli import main

    plan = tmp_path / "plan.json"
    plan.write_text('[{"id": 0, "task": "summarization", "dep": [], "args": {"text": "A '
                    'long story about a cat."}}]')
    # --no-cache: the second run runs its subtask again, so its answer is the first's
    # (from the result cache it would say so)
    argv = ["run", "Summarise it", "--dry-run", "--plan", str(plan), "--latency-scale", "0",
            "--workspace", str(tmp_path / "ws"), "--no-cache"]
    assert main(argv) == 0
    plain = capsys.readouterr().out
    assert main([*argv, "--verbose"]) == 0
    verbose = capsys.readouterr().out
    assert plain.startswith("Summary: [dry-run: summarization by ") and "candidates" not in plain
    answer, details_ = verbose.split("\nDetails:\n")
    assert answer.strip() == plain.strip()
    assert details_.startswith("step 1: summarization(text='A long story about a cat.')")
    assert re.search(r"\n  candidates: \S+ \(dry-run\) -?\d+\.\d\d(, |\n)", details_), details_
