"""Models that know their languages: offline sentiment requests in Spanish, French,
Portuguese and Chinese through the real CLI and the real engines (right, or honest about
what would read them), language identification, and selection by the language of the
actual text, not of the request's words."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from hugginggpt.cli import main
from hugginggpt.nodes.ranking import Query
from hugginggpt.nodes.reading import fits
from hugginggpt.nodes.responding import advice
from hugginggpt.tools.errors import Fix
from hugginggpt.tools.experts.availability import download_hint
from hugginggpt.tools.experts.catalog import load_catalog
from hugginggpt.tools.experts.lite import SNOWNLP, VADER, VADER_FR, languages
from hugginggpt.tools.experts.lite.languages import confidences, reads
from tests.test_soak import _soak_module

MULTILINGUAL = "lxyuan/distilbert-base-multilingual-cased-sentiments-student"
NAME_OF_A_LANGUAGE = re.compile(
    r"\b(is|in) (Spanish|Portuguese|French|Chinese|Catalan|Galician) \(\d+%\)\.")


def _run(capsys: pytest.CaptureFixture[str], workspace: Path, *argv: str) -> tuple[str, dict]:
    """The answer as printed, and the run as ``--json`` gives it (two runs of the CLI)."""
    main(["run", *argv, "--workspace", str(workspace)])
    shown = capsys.readouterr().out
    main(["run", *argv, "--workspace", str(workspace), "--json"])
    return shown, json.loads(capsys.readouterr().out)


def _sentiment(request: str, backend: str, capsys, workspace) -> tuple[str, dict]:
    argv = [request] + (["--backend", backend] if backend else [])
    return _run(capsys, workspace, *argv)


@pytest.mark.timeout(600)
@pytest.mark.parametrize("backend", ["lite", ""])
@pytest.mark.parametrize(("text", "model", "polarity"), [
    ("J'adore ce film, les acteurs sont formidables", VADER_FR, "positive"),
    ("Ce produit est horrible, je le déteste", VADER_FR, "negative"),
    ("我很喜欢这部电影，演员们都很棒", SNOWNLP, "positive"),
    ("质量太差了，非常失望", SNOWNLP, "negative"),
])
def test_french_and_chinese_sentiment_offline_is_right(capsys, workspace, backend, text,
                                                       model, polarity):
    shown, run = _sentiment(f'Is this review positive or negative: "{text}"', backend,
                            capsys, workspace)
    result = run["results"]["0"]
    assert (result["status"], result["model"]) == ("done", model), result
    assert shown.startswith(f"The review is {polarity} ("), shown
    assert "neutral (" not in shown.lower() and not NAME_OF_A_LANGUAGE.search(shown)


@pytest.mark.timeout(600)
@pytest.mark.parametrize("backend", ["lite", ""])
@pytest.mark.parametrize(("text", "language"), [
    ("Me encanta este restaurante, la comida es deliciosa y el servicio excelente",
     "Spanish"),
    ("Eu adoro este lugar, a comida é ótima e o atendimento é excelente", "Portuguese"),
])
def test_spanish_and_portuguese_sentiment_offline_say_what_would_read_them(
        capsys, workspace, backend, text, language):
    """No offline engine reads them: the step fails saying so, and names a model that
    does, its size and how to get it; never "neutral (100%)", never a language's name."""
    shown, run = _sentiment(f'Is this review positive or negative: "{text}"', backend,
                            capsys, workspace)
    selection = run["selections"]["0"]
    assert selection["model"] is None
    reason = selection["reason"]
    assert f"this text is {language}" in reason, reason
    assert f"{VADER} reads English only" in reason, reason
    said = (f"{MULTILINGUAL} reads it, 541 MB (hugginggpt models download {MULTILINGUAL}; "
            "or run with --download ask|yes)")
    fix = Fix.model_validate(selection["fix"])  # the fix, a field, said the CLI's way
    assert said in advice.said(fix, "cli"), selection
    assert f"To fix it, local: {said}" in shown, shown  # said by the answer
    assert run["results"]["0"]["status"] == "failed"
    assert "neutral (" not in shown.lower() and not NAME_OF_A_LANGUAGE.search(shown)
    assert shown.startswith("The classification failed: no model can read the text"), shown


@pytest.mark.timeout(300)
def test_the_dutch_sentence_is_dutch(capsys, workspace):
    shown, run = _run(capsys, workspace,
                      'Which language is this: "Dit is een mooie dag om te fietsen"',
                      "--backend", "lite")
    assert shown.startswith("The text is in Dutch ("), shown  # langdetect: Afrikaans (100%)
    assert run["results"]["0"]["outputs"]["labels"][0]["label"] == "nl"


@pytest.mark.timeout(300)
def test_an_english_request_quoting_a_french_text_selects_by_the_text(capsys, workspace):
    shown, run = _run(capsys, workspace,
                      'My friend wrote this about the film, is it positive or negative? '
                      '"Quel film magnifique, j\'ai adoré chaque minute"', "--backend", "lite")
    selection = run["selections"]["0"]
    assert selection["model"] == VADER_FR, selection
    assert VADER not in [c["model"] for c in selection["candidates"]]  # it reads English
    assert shown.startswith("The text is positive ("), shown


@pytest.mark.timeout(300)
def test_a_generated_text_goes_to_the_engine_that_reads_it(capsys, workspace, tmp_path):
    """The text to classify is a French summary, known only at execution: VADER, first
    at selection, is passed over for French VADER."""
    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps({"subtasks": [
        {"id": 0, "task": "summarization", "dep": [-1], "args": {"text": (
            "J'adore ce restaurant. Le repas était délicieux et le service excellent. "
            "Les serveurs sont formidables et très aimables.")}},
        {"id": 1, "task": "text-classification", "dep": [0],
         "args": {"text": "<GENERATED>-0"}},
    ]}))
    _, run = _run(capsys, workspace, "Summarise it; is it positive?", "--backend", "lite",
                  "--plan", str(plan))
    selected = [c["model"] for c in run["selections"]["1"]["candidates"]]
    assert selected[0] == VADER and VADER_FR in selected
    result = run["results"]["1"]
    assert (result["status"], result["model"]) == ("done", VADER_FR), result
    assert result["outputs"]["labels"][0]["label"] == "POSITIVE"
    skipped = result["attempt_log"][0]
    assert skipped["model"] == VADER and skipped["error_type"] == "CannotRead"
    assert "reads English only; the text is French" in skipped["error"]


def test_a_translation_is_never_advised_a_model_that_cannot_do_the_pair():
    """T5 lists en, fr, de and ro but translates from English only: for a Spanish text
    into English, the advice is the Spanish-to-English model."""
    catalog = load_catalog()
    spanish = tuple(confidences("Me encanta este restaurante, la comida es deliciosa"))
    query = Query(target_language="en", text_languages=spanish)
    hint = download_hint("translation", catalog, "auto", lambda card: fits(query, card))
    assert hint is not None and "Helsinki-NLP/opus-mt-es-en" in str(hint)
    assert "312 MB" in str(hint) and "t5" not in str(hint)
    english = Query(target_language="fr",
                    text_languages=tuple(confidences("The weather is lovely today")))
    hint = download_hint("translation", catalog, "auto", lambda card: fits(english, card))
    assert hint is not None and "google-t5/t5-base" in str(hint)  # English to French


def test_a_model_reads_a_text_unless_lingua_all_but_rules_its_languages_out():
    english = confidences("The food was cold and the waiter was rude.")
    assert reads(["en"], english) and not reads(["fr"], english)
    assert reads(["multilingual"], english) and reads([], english) and reads(["fr"], [])
    close = confidences("Me encanta este restaurante")  # Spanish or Portuguese: both kept
    assert reads(["es"], close) and not reads(["en"], close)


CLOSE_CALLS = {"Dit is een mooie dag om te fietsen": "nl",
               "Vi tager til stranden i morgen tidlig": "da",
               "Demà anirem a la platja amb els amics": "ca",
               "Besok kami akan pergi ke pantai bersama teman": "id"}
"""Texts lingua's quick pass is not sure of: each close look compares six languages, 19
in all."""


@pytest.mark.timeout(300)
def test_close_looks_keep_the_models_of_a_bounded_number_of_languages(monkeypatch):
    """A long-lived server that meets language after language does not keep every one's
    high-accuracy models (about 25 MB each): the least recently compared are unloaded,
    and reloaded, with the same answers, when a text needs them again."""
    heap_in_use = _soak_module().heap_in_use  # benchmarks/soak.py's measure
    if not heap_in_use():
        pytest.skip("needs glibc 2.33's mallinfo2")
    monkeypatch.setattr(languages, "KEPT_LANGUAGES", 6)
    languages.unload_close_looks()
    first, *others = CLOSE_CALLS
    assert languages.language_of(first) == CLOSE_CALLS[first]
    one_look = heap_in_use()
    for _ in range(2):
        for text in others:
            assert languages.language_of(text) == CLOSE_CALLS[text]
    assert len(languages._kept) <= 6
    grown = heap_in_use() - one_look
    assert grown < 60 * 2**20, f"{grown / 2**20:.0f} MB more after 13 more languages"
    languages.unload_close_looks()
    assert not languages._kept and heap_in_use() < one_look
