"""The lite backend: each engine on real inputs the tests make themselves (text rendered
into images, reviews, articles), its registration and model card, selection in ``lite``
mode, and a whole run through the graph: OCR of an attached image, then the sentiment of
the text it read."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from PIL import Image, ImageDraw, ImageFont

from hugginggpt.nodes.ranking import Query, rank_candidates
from hugginggpt.tools.experts import ToolExecutionError, load_catalog, registered_tools
from hugginggpt.tools.experts.lite import (
    ESPEAK,
    HAAR_FACES,
    LINGUA,
    LITE_BACKEND,
    MINILM,
    MINILM_ZERO_SHOT,
    OCR_LOOKUP,
    POCKETSPHINX,
    RAPIDOCR,
    SNOWNLP,
    TEXTRANK,
    VADER,
    VADER_FR,
    classifiers,
    engines,
)
from hugginggpt.tools.experts.lite import tools as lite_tools
from hugginggpt.tools.experts.tasks import get_task_type
from tests.conftest import benchmark, run, wait_until_inside

REVIEW = [
    "The soup was cold and bland.",
    "Our waiter was rude to us.",
    "A terrible evening, never again.",
]
RECEIPT = [
    ("ACME HARDWARE STORE", ""),
    ("Invoice date: 12 March 2024", ""),
    ("Hammer", "9.99"),
    ("Nails", "3.50"),
    ("TOTAL", "13.49 EUR"),
]
ARTICLE = """\
The city council met on Monday to discuss the plan for a new public park. The park would be
built on the site of the old railway depot near the river. Residents asked the council for
more trees, benches and a safe playground in the park.

Funding for the park comes from a state grant for green spaces. The grant covers trees,
paths and the playground, but not the cost of cleaning the old depot site. The council will
ask local companies to help pay for the cleaning.

Council members voted unanimously to accept the grant for the park. Construction of the
park should begin in the autumn. The mayor said the park would open to the public next
spring. A local bakery promised free bread at the opening.
"""


def _render(path: Path, rows: list[tuple[str, str]], width: int = 760) -> Path:
    """Black text on white, a row every 60 px; a row's second part sits at the right."""
    font = ImageFont.load_default(size=32)
    image = Image.new("RGB", (width, 40 + 60 * len(rows)), "white")
    draw = ImageDraw.Draw(image)
    for i, (left, right) in enumerate(rows):
        draw.text((30, 20 + 60 * i), left, fill="black", font=font)
        if right:
            draw.text((width - 250, 20 + 60 * i), right, fill="black", font=font)
    image.save(path)
    return path


@pytest.fixture(scope="module")
def images(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("lite-images")
    blank = folder / "blank.png"
    Image.new("RGB", (400, 200), "white").save(blank)
    return {
        "review": _render(folder / "review.png", [(line, "") for line in REVIEW]),
        "receipt": _render(folder / "receipt.png", RECEIPT),
        "blank": blank,
    }


def _words(text: str) -> list[str]:
    return [w.strip(".,!:").lower() for w in text.split()]


def _squashed(text: str) -> str:
    """Lowercase, without whitespace: PP-OCR sometimes drops the space between words in
    capitals or before a unit ("13.49EUR"), which the card says."""
    return "".join(text.split()).lower()


# OCR


def test_ocr_reads_rendered_text_in_reading_order(images):
    text = lite_tools.image_to_text(images["receipt"])
    lines = text.splitlines()
    assert len(lines) == len(RECEIPT)
    for line, (left, right) in zip(lines, RECEIPT, strict=True):
        assert _squashed(line) == _squashed(left + right)
    # the two boxes of a receipt row come back as one line, left part first
    assert lines[2:4] == ["Hammer 9.99", "Nails 3.50"]
    assert _words(lines[1]) == _words(RECEIPT[1][0])


def test_ocr_rows_group_boxes_by_height_then_left_to_right():
    def box(x: float, y: float, w: float = 50, h: float = 30) -> list[list[float]]:
        return [[x, y], [x + w, y], [x + w, y + h], [x, y + h]]

    found = [
        (box(300, 102), "second-right", 0.9),
        (box(10, 10), "first", 0.9),
        (box(10, 100), "second-left", 0.9),
        (box(200, 12), "first-right", 0.9),
    ]
    assert lite_tools._rows(found) == ["first first-right", "second-left second-right"]


def test_ocr_of_an_image_without_text_fails_instead_of_returning_nothing(images):
    with pytest.raises(ToolExecutionError, match="no text.*cannot describe"):
        lite_tools.image_to_text(images["blank"])


def test_ocr_refuses_what_is_not_a_local_image(tmp_path):
    with pytest.raises(ToolExecutionError, match="not a local file"):
        lite_tools.image_to_text(Path("https://example.com/photo.png"))
    fake = tmp_path / "fake.png"
    fake.write_text("not an image")
    with pytest.raises(ToolExecutionError, match="not a readable image"):
        lite_tools.image_to_text(fake)


def test_document_question_answering_finds_the_line_that_answers(images):
    answer = lite_tools.document_question_answering(images["receipt"], "What is the total?")
    assert _squashed(answer) == "total13.49eur"
    with pytest.raises(ToolExecutionError, match="no line of the document relates"):
        lite_tools.document_question_answering(images["receipt"], "Who won the world cup?")


# Text engines


def test_vader_labels_clear_sentiment():
    positive = classifiers.sentiment("I love this phone, the camera is fantastic!")
    negative = classifiers.sentiment(" ".join(REVIEW))
    neutral = classifiers.sentiment("The meeting is at ten in room four.")
    assert [positive[0]["label"], negative[0]["label"], neutral[0]["label"]] == [
        "POSITIVE", "NEGATIVE", "NEUTRAL"]
    for labels in (positive, negative, neutral):
        assert {d["label"] for d in labels} == {"POSITIVE", "NEGATIVE", "NEUTRAL"}
        scores = [d["score"] for d in labels]
        assert scores == sorted(scores, reverse=True)
        assert abs(sum(scores) - 1) < 1e-3 and min(scores) >= 0
    assert positive[0]["score"] > 0.8


def test_summary_is_shorter_and_made_of_the_texts_sentences_in_order():
    summary = lite_tools.summarize(ARTICLE)  # hard-wrapped: sentences run across lines
    flat = " ".join(ARTICLE.split())
    sentences = [s.strip() + "." for s in summary.split(".") if s.strip()]
    assert 0 < len(summary) < len(flat) / 2
    assert len(sentences) == 3, summary  # a quarter of the article's 10 sentences, rounded
    positions = [flat.find(s) for s in sentences]
    assert -1 not in positions, summary
    assert positions == sorted(positions)
    assert all(flat[p - 2] == "." for p in positions if p), "starts mid-sentence"


def test_summary_of_a_short_text_is_its_first_sentence_and_empty_text_fails():
    assert lite_tools.summarize("Short text. Only two sentences.") == "Short text."
    with pytest.raises(ToolExecutionError, match="empty"):
        lite_tools.summarize("  \n ")


def test_zero_shot_ranks_the_label_the_text_is_about():
    labels = lite_tools.zero_shot(
        "Messi scored twice as Barcelona beat Madrid in a thrilling football match.",
        "sports, finance, cooking")
    assert [d["label"] for d in labels][0] == "sports"
    assert {d["label"] for d in labels} == {"sports", "finance", "cooking"}
    assert labels[0]["score"] > labels[1]["score"] + 0.05
    cooking = lite_tools.zero_shot("Whisk the eggs with sugar, fold in the flour and bake it.",
                             " sports,, finance , cooking, sports ")
    assert [d["label"] for d in cooking][0] == "cooking" and len(cooking) == 3
    with pytest.raises(ToolExecutionError, match="no candidate labels"):
        lite_tools.zero_shot("anything", " , ")


def test_lingua_tells_languages_apart_and_reports_how_sure_it_is():
    french = classifiers.detect_language("Bonjour, je voudrais réserver une table pour deux ce soir.")
    english = classifiers.detect_language("Hello, I would like to book a table for two tonight.")
    assert french[0]["label"] == "fr" and english[0]["label"] == "en"
    assert french[0]["score"] > 0.9
    dutch = classifiers.detect_language("Dit is een mooie dag om te fietsen")  # langdetect: af
    assert dutch[0]["label"] == "nl", dutch
    chinese = classifiers.detect_language("这本书非常有意思")  # langdetect: ko
    assert chinese[0]["label"] == "zh", chinese
    hola = classifiers.detect_language("Hola")  # too short to tell: said so, not 100%
    assert hola[0]["score"] < 0.6 and sum(d["score"] for d in hola) <= 1.0001, hola
    short = "pasta al forno"
    assert all(classifiers.detect_language(short) == classifiers.detect_language(short) for _ in range(5))
    with pytest.raises(ToolExecutionError, match="cannot tell the language"):
        classifiers.detect_language("12345 !!! 678")


def test_text_that_is_too_long_is_refused():
    with pytest.raises(ToolExecutionError, match="more than"):
        classifiers.sentiment("good " * (engines.MAX_TEXT_CHARS // 5 + 1))


# Loading, registration, selection


def test_load_once_runs_the_loader_once_when_threads_race():
    calls: list[int] = []
    start = threading.Barrier(8)

    @engines.load_once
    def slow() -> object:
        calls.append(1)  # the loader finishes once every other thread has asked too
        wait_until_inside([t for t in threads if t is not threading.current_thread()],
                          slow.__code__)
        return object()

    got: list[object] = []

    def worker() -> None:
        start.wait()
        got.append(slow())

    threads = [threading.Thread(target=worker) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(calls) == 1 and len(got) == 8 and len({id(g) for g in got}) == 1
    assert engines.vader() is engines.vader() and engines.ocr_engine() is engines.ocr_engine()



def test_the_models_benchmark_fails_an_engine_loaded_again(tmp_path):
    """benchmarks/models.py on VADER: one load then lookups passes its verdict, and the
    engine dropped before a warm request (loaded again) fails it."""
    bench = benchmark("models")
    engine = bench.Engine("VADER", "text-classification", VADER, LITE_BACKEND,
                          {"text": "A wonderful, lovely day."},
                          lambda o: bench.top_label(o) == "POSITIVE", "vader")
    bench.drop(engine)
    with bench.Management().patched() as management:
        row = bench.measure(engine, management, tmp_path, 3, {})
        forced = bench.reload_forced(row, management, tmp_path)
    assert (row.first.loads, row.warm_loads) == (1, 0) and row.ok, row
    assert forced.warm_loads == 1 and not forced.ok

EXPECTED = {
    "image-to-text": [RAPIDOCR],
    "document-question-answering": [OCR_LOOKUP],
    "text-classification": [VADER, VADER_FR, SNOWNLP, LINGUA],
    "summarization": [TEXTRANK],
    "zero-shot-classification": [MINILM_ZERO_SHOT],
    "sentence-similarity": [MINILM],
    "feature-extraction": [MINILM],
    "text-to-speech": [ESPEAK],
    "automatic-speech-recognition": [POCKETSPHINX],
    "object-detection": [HAAR_FACES],
}
QUERIES = {"object-detection": Query(text="Find the faces in team.jpg"),
           "text-classification": Query(text="Which language is this?", intent="language")}
"""The face detector is offered only to a request about faces or people; the language
detector only to a question about languages."""


def test_every_lite_engine_is_labelled_and_carries_a_card():
    tools = [t for t in registered_tools() if t.backend == LITE_BACKEND]
    served = {(t.task, m) for t in tools for m in t.models or ()}
    assert served == {(task, m) for task, models in EXPECTED.items() for m in models}
    for t in tools:
        (model,) = t.models or ()
        assert model.startswith("lite/") or model == MINILM
        (card,) = t.cards
        assert (card.id, card.task) == (model, t.task)
        assert card.description and card.license != "unknown" and card.languages
        assert card.downloads == 0 and card.likes == 0 and card.size_mb
        assert t.available is None and not t.simulated
    # lite engines are not Hugging Face models: the catalog does not claim them
    catalog = load_catalog()
    assert all(catalog.get(task, m) is None
               for task, models in EXPECTED.items() for m in models if m != MINILM)


@pytest.mark.parametrize("task", sorted(EXPECTED))
def test_selection_in_lite_mode_picks_the_lite_engines(task):
    ranked = rank_candidates(task, load_catalog(), LITE_BACKEND, QUERIES.get(task))
    expected = [LINGUA] if task == "text-classification" else EXPECTED[task]
    assert [c.model for c in ranked] == expected
    assert {c.backend for c in ranked} == {LITE_BACKEND}
    assert all(c.card is not None and c.card.description for c in ranked)


@pytest.mark.parametrize(("request_text", "intent", "first", "offered"), [
    ("Is this review positive or negative?", "sentiment", VADER, {VADER, VADER_FR, SNOWNLP}),
    ("Which language is this letter written in?", "language", LINGUA, {LINGUA}),
    # words that ask for no kind: the sentiment engines, never the language detector,
    # whose answer (a language's name) would pass for what was asked
    ("What do you make of this letter?", None, VADER, {VADER, VADER_FR, SNOWNLP}),
])
def test_the_cards_steer_text_classification_to_the_engine_that_fits(
        request_text, intent, first, offered):
    task = get_task_type("text-classification")
    assert task is not None
    query = Query(text=f"{task.description} | request: {request_text}", language="en",
                  intent=intent)
    ranked = rank_candidates(task.name, load_catalog(), LITE_BACKEND, query)
    assert [c.model for c in ranked][0] == first
    assert {c.model for c in ranked} == offered


def test_keywords_are_not_offered_as_named_entities():
    assert rank_candidates("token-classification", load_catalog(), LITE_BACKEND) == []


# A whole run


def test_ocr_then_sentiment_through_the_graph(compiled, make_context, llm_server, images):
    llm_server.script("planner", {"tool_args": {"subtasks": [
        {"id": 0, "task": "image-to-text", "dep": [-1], "args": {"image": "review.png"}},
        {"id": 1, "task": "text-classification", "dep": [0],
         "args": {"text": "<GENERATED>-0"}},
    ]}})
    out = run(compiled, make_context(backend="lite"),
              request="How does the review in this photo feel?",
              files=[str(images["review"])])

    ocr, mood = out["results"][0], out["results"][1]
    assert ocr.status == "done" and mood.status == "done", (ocr.error, mood.error)
    assert (ocr.backend, ocr.model) == ("lite", RAPIDOCR)
    assert (mood.backend, mood.model) == ("lite", VADER)
    assert _words(ocr.outputs["text"]) == _words(" ".join(REVIEW))
    assert mood.outputs["labels"][0]["label"] == "NEGATIVE"

    # vader and lingua both classify text: "review" asks for sentiment, so lingua is not
    # even a fallback (it would answer "en"); the text is not known at selection, so the
    # French and Chinese sentiment engines are (at execution they cannot read it)
    selection = out["selections"][1]
    assert [c.model for c in selection.candidates] == [VADER, SNOWNLP, VADER_FR]
    assert "the request asks for sentiment ('review')" in selection.reason
    digest = llm_server.calls("responder")[0]["messages"][-1]["content"]
    assert RAPIDOCR in digest and VADER in digest and "NEGATIVE" in digest


def test_torch_threads_wait_passively_unless_the_user_says_otherwise(tmp_path):
    """Spinning OpenMP threads made every torch call 10-60x slower while another job used
    the CPUs: the backends load torch with passive waiting, and keep a user's choice."""
    import os
    import subprocess
    import sys

    script = ("import os, hugginggpt.tools.experts.lite.engines as e; e.minilm(); "
              "import torch; print(os.environ.get('OMP_WAIT_POLICY'))")
    env = {k: v for k, v in os.environ.items() if k != "OMP_WAIT_POLICY"}
    run = [sys.executable, "-c", script]
    assert subprocess.run(run, env=env, cwd=tmp_path, capture_output=True, text=True,
                          timeout=300).stdout.strip() == "PASSIVE"
    assert subprocess.run(run, env={**env, "OMP_WAIT_POLICY": "ACTIVE"}, cwd=tmp_path,
                          capture_output=True, text=True,
                          timeout=300).stdout.strip() == "ACTIVE"


def test_a_summary_keeps_the_lead_sentence_besides_the_central_ones():
    text = ("A gas leak closed the north bridge early on Tuesday morning. Traffic on the "
            "ring road was heavy all day. Traffic on the ring road moved slowly after noon. "
            "Drivers on the ring road waited for an hour in the traffic. The ring road "
            "traffic eased in the evening. Buses on the ring road ran late all day. The "
            "city said the ring road would be clear by Wednesday. Cyclists avoided the ring "
            "road traffic.")
    summary = lite_tools.summarize(text)
    assert summary.startswith("A gas leak closed the north bridge")
    assert summary.count(".") == 3  # the lead and the central quarter of 8 sentences
    titled = "Works committee minutes. " + text  # a heading is no lead
    assert not lite_tools.summarize(titled).startswith("Works")
