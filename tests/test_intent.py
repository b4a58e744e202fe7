"""Selection by intent: model cards are compared with what the request asks of a subtask
("is it positive or negative?"), not with the text to classify, and a classifier of
another kind (a language detector for a sentiment question) is no candidate.

Real parts throughout: the shipped catalog, the lite engines and their cards, MiniLM
embeddings, the graph. The local backend's models are "cached" by saying its tools can
run them (they are not run).
"""

from __future__ import annotations

import json
import time

import pytest

from hugginggpt.graph.state import Subtask
from hugginggpt.nodes.intent import card_kind, cue_words, intent_clause, read_intent
from hugginggpt.nodes.ranking import Query, rank_candidates
from hugginggpt.nodes.select import signature
from hugginggpt.tools.experts.availability import model_cards
from hugginggpt.tools.experts.catalog import load_catalog
from hugginggpt.tools.experts.lite import LINGUA, VADER
from hugginggpt.tools.experts.lite.languages import confidences
from hugginggpt.tools.experts.registry import Tool
from hugginggpt.tools.experts.tasks import get_task_type
from tests.conftest import run

REVIEW = "The food was cold and the waiter was rude."
SENTIMENT_REQUEST = f"Is this review positive or negative? '{REVIEW}'"
DUTCH = "Dit is een mooie dag"
LANGUAGE_REQUEST = f"Which language is '{DUTCH}'?"
DUTCH_LONG = "Ik heb gisteren een heel goed boek gelezen over de geschiedenis van Nederland."
"""A longer Dutch text."""
SENTIMENT_LABELS = {"POSITIVE", "NEGATIVE", "NEUTRAL"}
DISTILBERT = "distilbert/distilbert-base-uncased-finetuned-sst-2-english"
CARDIFF = "cardiffnlp/twitter-roberta-base-sentiment-latest"
MULTILINGUAL = "lxyuan/distilbert-base-multilingual-cased-sentiments-student"
EMOTION = "test-org/emotion-english"


def _classify(text: str, task: str = "text-classification", i: int = 0) -> dict:
    arg = "text" if task == "text-classification" else "audio"
    return {"id": i, "task": task, "dep": [], "args": {arg: text}}


def _ranked(request: str, text: str, backend: str, catalog=None,
            task: str = "text-classification") -> list:
    """Rank as the select node does: the intent from the request, the language from the
    text (only text arguments are texts)."""
    catalog = catalog or load_catalog()
    task_type = get_task_type(task)
    assert task_type is not None
    texts = [text] if task == "text-classification" else []
    intent = read_intent(request, task, texts, task_type.description,
                         model_cards(task, catalog))
    return rank_candidates(task, catalog, backend, Query(
        text=intent.clause, language="en" if task == "text-classification" else None,
        intent=intent.kind, text_languages=tuple(confidences(" ".join(texts)))))


@pytest.fixture
def local_cached(monkeypatch: pytest.MonkeyPatch) -> None:
    """The local backend's tools say they can run every catalog model (as if cached)."""
    can_run = Tool.can_run
    monkeypatch.setattr(Tool, "can_run",
                        lambda self, model: self.backend == "local" or can_run(self, model))


# The kinds the shipped cards offer, and the words that ask for them


def test_the_shipped_cards_say_what_kind_of_classifier_they_are():
    catalog = load_catalog()
    kinds = {c.id: card_kind(c) for c in model_cards("text-classification", catalog)}
    assert kinds[VADER] == kinds[DISTILBERT] == kinds[CARDIFF] == "sentiment"
    assert kinds[LINGUA] == "language"  # its card "says nothing about sentiment"
    assert kinds["llm/expert"] == "sentiment"  # "no topics or languages"
    audio = {c.id: card_kind(c) for c in model_cards("audio-classification", catalog)}
    assert audio == {"superb/wav2vec2-base-superb-ks": "keyword",
                     "MIT/ast-finetuned-audioset-10-10-0.4593": "sound"}
    assert {card_kind(c) for c in model_cards("image-classification", catalog)} == {None}
    cues = cue_words(model_cards("text-classification", catalog))
    assert set(cues) == {"sentiment", "language"}  # no card offers emotion or keywords
    assert "neutral" in cues["sentiment"]  # from the cards, not from the hand-written stems


@pytest.mark.parametrize(("request_text", "kind", "cue"), [
    (SENTIMENT_REQUEST, "sentiment", "review"),
    ("Tell me whether the tone of this message is neutral: 'See you at 5.'", "sentiment",
     "neutral"),
    ("Ce commentaire est-il positif ou négatif ? 'Le repas était froid.'", "sentiment",
     "positif"),
    ("¿Qué emoción transmite este mensaje? 'No puedo creer que por fin nos vamos'",
     "emotion", "emocion"),
    ("这条评论是正面的还是负面的？“快递很快，但是衣服的质量太差了。”", "sentiment", "正面"),
    (LANGUAGE_REQUEST, "language", "language"),
    ("I would like to know what language 'Dit is een mooie dag' is in", "language",
     "language"),
    ("How angry does the writer feel? 'They cancelled my flight again!'", "emotion",
     "angry"),  # no card does emotion, but sentiment is related
    ("How does the review in 'The food was cold.' feel?", "sentiment", "review"),
    ("What word best describes 'The food was cold.'?", None, None),  # keywords: audio
    ("In which position is the verb in 'The food was cold.'?", None, None),
    ("Classify 'The food was cold and the waiter was rude.'", None, None),
])
def test_the_request_words_name_the_kind_asked_for(request_text, kind, cue):
    text = request_text.split("'")[1] if "'" in request_text else (
        request_text.split("“")[1].rstrip("”") if "“" in request_text else "")
    intent = read_intent(request_text, "text-classification", [text],
                         "Classify a text (sentiment, topic, ...).",
                         model_cards("text-classification", load_catalog()))
    assert (intent.kind, intent.cue) == (kind, cue)
    assert text not in intent.clause and "this text" in intent.clause


def test_a_short_text_is_masked_only_as_a_whole_word():
    clause = intent_clause("Which language is hi in?", ["hi"], "Classify a text.")
    assert clause == "Which language is this text in?"


def test_the_clause_is_the_one_that_holds_the_subtask_text():
    request = f"Is '{REVIEW}' positive or negative? Which language is '{DUTCH}'?"
    description = "Classify a text (sentiment, topic, ...)."
    assert intent_clause(request, [REVIEW], description) == (
        "Is this text positive or negative?")
    assert intent_clause(request, [DUTCH], description) == "Which language is this text?"
    # an output of another step, in Spanish (MiniLM reads English): the clause with cues
    spanish = read_intent("Lee el texto de cartel.png y dime en qué idioma está escrito",
                          "text-classification", [], description,
                          model_cards("text-classification", load_catalog()))
    assert (spanish.clause, spanish.kind) == ("dime en qué idioma está escrito", "language")
    # two questions in one clause: the part around each text
    both = f"Is '{REVIEW}' positive or negative, and which language is '{DUTCH}'?"
    assert intent_clause(both, [REVIEW], description) == "Is this text positive or negative"
    assert intent_clause(both, [DUTCH], description) == "which language is this text?"
    # without its text in the request (an output of another step), the nearest clause
    clause = intent_clause("Read the photo, then tell me how the review feels",
                           ["<GENERATED>-0"], description)
    assert clause == "tell me how the review feels"


def test_a_long_text_after_a_colon_is_masked_but_a_question_after_it_stays():
    pasted = "Languages of Europe include Dutch, French and German. " * 40
    clause = intent_clause(f"Here is my review: {pasted}Is it positive or negative?",
                           ["not the text"], "Classify a text (sentiment, topic, ...).")
    assert clause == "Is it positive or negative?"


# Choices on the lite backend, on auto with local models, and on the catalog


def test_a_sentiment_question_gets_a_sentiment_model_on_lite_and_auto(local_cached):
    lite = _ranked(SENTIMENT_REQUEST, REVIEW, "lite")
    assert [c.model for c in lite] == [VADER]  # the language detector is not even a fallback
    assert lite[0].parts["intent"] == 2.0
    auto = _ranked(SENTIMENT_REQUEST, REVIEW, "auto")
    assert auto[0].model == DISTILBERT and auto[0].backend == "local"
    assert LINGUA not in {c.model for c in auto}
    assert {card_kind(c.card) for c in auto} == {"sentiment"}


def test_an_emotion_question_keeps_the_sentiment_model_but_not_the_language_detector():
    ranked = _ranked("How angry does the writer feel? 'They cancelled my flight again!'",
                     "They cancelled my flight again!", "lite")
    assert [(c.model, c.parts["intent"]) for c in ranked] == [(VADER, -1.0)]


def test_a_language_question_gets_the_language_detector_on_lite_and_auto(local_cached):
    assert [c.model for c in _ranked(LANGUAGE_REQUEST, DUTCH, "lite")] == [LINGUA]
    # local sentiment models come first in auto's order, but do not answer the question
    auto = _ranked(LANGUAGE_REQUEST, DUTCH, "auto")
    assert [(c.model, c.backend) for c in auto] == [(LINGUA, "lite")]


def test_an_emotion_question_gets_an_emotion_model_when_the_catalog_has_one(tmp_path):
    """The shipped catalog has no emotion classifier; one written beside its sentiment
    cards, with fewer downloads, wins emotion questions and loses sentiment ones."""
    shipped = [c.model_dump() for c in load_catalog().for_task("text-classification")]
    emotion = {"id": EMOTION, "task": "text-classification", "downloads": 500_000,
               "likes": 300, "languages": ["en"], "expected_latency_s": 0.1,
               "description": "Emotion of English text: anger, disgust, fear, joy, "
                              "neutral, sadness or surprise."}
    path = tmp_path / "catalog.json"
    path.write_text(json.dumps({"version": 1, "models": [*shipped, emotion]}))
    catalog = load_catalog(str(path))
    feel = _ranked("How angry does the writer feel? 'They cancelled my flight again!'",
                   "They cancelled my flight again!", "dry-run", catalog)
    assert feel[0].model == EMOTION and feel[0].parts["intent"] == 2.0
    assert {c.parts["intent"] for c in feel[1:]} == {-1.0}  # sentiment: a fallback
    review = _ranked(SENTIMENT_REQUEST, REVIEW, "dry-run", catalog)
    assert review[0].model == DISTILBERT
    assert next(c for c in review if c.model == EMOTION).parts["intent"] == -1.0


@pytest.mark.parametrize(("request_text", "first"), [
    ("What sound can be heard in clip.wav?", "MIT/ast-finetuned-audioset-10-10-0.4593"),
    ("Which command does the speaker say in clip.wav?", "superb/wav2vec2-base-superb-ks"),
])
def test_audio_classification_follows_the_question_too(request_text, first):
    ranked = _ranked(request_text, "clip.wav", "dry-run", task="audio-classification")
    assert [c.model for c in ranked] == [first]  # the other kind is no candidate


# Through the select node and the graph


def test_a_sentiment_and_a_language_question_get_two_models(compiled, make_context):
    request = f"Is '{REVIEW}' positive or negative? Which language is '{DUTCH_LONG}'?"
    plan = [_classify(REVIEW), _classify(DUTCH_LONG, i=1)]
    subtasks = [Subtask.model_validate(s) for s in plan]
    assert signature(subtasks[0], "sentiment") != signature(subtasks[1], "language")
    assert signature(subtasks[0]) == signature(subtasks[1])  # without the intent: one group
    out = run(compiled, make_context(plan=plan, backend="lite", offline=True), request=request)
    chosen = out["selections"]
    assert (chosen[0].model, chosen[1].model) == (VADER, LINGUA)
    assert not chosen[1].reason.startswith("same choice")
    assert "the request asks for language ('language')" in chosen[1].reason
    mood, language = out["results"][0], out["results"][1]
    assert mood.status == language.status == "done", (mood.error, language.error)
    assert mood.outputs["labels"][0]["label"] == "NEGATIVE"
    assert language.outputs["labels"][0]["label"] == "nl"


def test_the_sentiment_question_answers_with_a_sentiment_label(compiled, make_context):
    out = run(compiled, make_context(plan=[_classify(REVIEW)], backend="lite", offline=True),
              request=SENTIMENT_REQUEST)
    result = out["results"][0]
    assert result.status == "done" and result.model == VADER, result.error
    assert result.outputs["labels"][0]["label"] in SENTIMENT_LABELS


def test_no_model_of_the_kind_asked_for_says_what_the_others_do(compiled, make_context):
    out = run(compiled, make_context(plan=[_classify(DUTCH)], backend="dry-run",
                                     offline=True), request=LANGUAGE_REQUEST)
    selection = out["selections"][0]
    assert selection.model is None
    assert selection.reason.startswith(
        "no model can run text-classification with backend 'dry-run' (the request asks "
        "for language ('language'); the text-classification models that can run here ("
        f"{DISTILBERT}, {CARDIFF}, {MULTILINGUAL}) do sentiment; ")


def test_a_pasted_100_kb_text_changes_neither_the_choice_nor_the_time(
        compiled, make_context):
    pasted = ("Dutch, French and German are languages; I love and hate them all. " * 1600)
    assert len(pasted) > 100_000
    request = f"Is this review positive or negative? {pasted}"
    _ranked(SENTIMENT_REQUEST, REVIEW, "lite")  # warm-up: MiniLM loaded
    start = time.perf_counter()
    long = _ranked(request, pasted, "lite")
    elapsed = time.perf_counter() - start
    print(f"\nbenchmark: intent ranking of a {len(request) // 1000} KB request "
          f"took {elapsed:.3f} s")
    assert [c.model for c in long] == [c.model for c in _ranked(SENTIMENT_REQUEST, REVIEW,
                                                                 "lite")]
    # pasted without the planner quoting it exactly: the clauses read are bounded
    clause = intent_clause(f"{pasted} Is it positive or negative?", ["other"],
                           "Classify a text (sentiment, topic, ...).")
    assert len(clause) <= 240
    out = run(compiled, make_context(plan=[_classify(pasted[:3000])], backend="lite",
                                     offline=True, approval="plan"), request=request)
    assert out["selections"][0].model == VADER
