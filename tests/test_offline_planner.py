"""The built-in offline planner: reading requests, adapting examples, refusing clearly."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hugginggpt.graph.context import Context
from hugginggpt.nodes.planning.bank import BankExample, PlanBank, load_bank
from hugginggpt.nodes.planning.offline import CannotPlanOffline, adapt, offline_plan
from hugginggpt.nodes.planning.reading import read_request
from tests.conftest import run

CAPTION_TRANSLATE = BankExample(
    "b-caption", "Describe picture.png and translate the description into French",
    [{"id": 0, "task": "image-to-text", "dep": [], "args": {"image": "picture.png"}},
     {"id": 1, "task": "translation", "dep": [0],
      "args": {"text": "<GENERATED>-0", "tgt_lang": "fr"}}])
QUOTED = BankExample(
    "b-quote", 'Translate "hello world" into Italian',
    [{"id": 0, "task": "translation", "dep": [], "args": {"text": "hello world", "tgt_lang": "it"}}])
TOPIC = BankExample(
    "b-topic", "Is 'the match ended in a draw' about sport, weather or music?",
    [{"id": 0, "task": "zero-shot-classification", "dep": [],
      "args": {"text": "the match ended in a draw", "labels": "sport, weather, music"}}])
SMALL_BANK = PlanBank([CAPTION_TRANSLATE, QUOTED, TOPIC])


def test_read_request_finds_files_quotes_languages_labels_questions():
    facts = read_request('Caption photo.jpg, then read "call me at noon" aloud in German',
                         ["/data/extra.wav"])
    assert facts.files == {"audio": ["/data/extra.wav"], "image": ["photo.jpg"]}
    assert facts.quotes == ["call me at noon"] and facts.target_language == "de"
    topic = read_request("Classify this headline as sports, politics or science: "
                         "'The striker scored twice'")
    assert topic.labels == "sports, politics, science" and topic.body == "The striker scored twice"
    question = read_request("What is in holiday.png? Is there a dog?")
    assert question.question == "What is in holiday.png?"
    url = read_request("Transcribe https://example.com/talk.wav then summarise it")
    assert url.files == {"audio": ["https://example.com/talk.wav"]}
    colon = read_request("Summarize the following: the committee met and agreed to wait.")
    assert colon.body == "the committee met and agreed to wait."


def test_adapt_binds_files_by_kind_and_parameters():
    facts = read_request("Caption holiday.jpg and put the caption into Spanish")
    plan = adapt(CAPTION_TRANSLATE, facts)
    assert plan[0]["args"] == {"image": "holiday.jpg"}
    assert plan[1]["args"] == {"text": "<GENERATED>-0", "tgt_lang": "es"}
    quoted = adapt(QUOTED, read_request('Please translate "see you tomorrow" to German'))
    assert quoted[0]["args"] == {"text": "see you tomorrow", "tgt_lang": "de"}


def test_adapt_refuses_what_the_request_does_not_give():
    with pytest.raises(CannotPlanOffline, match="needs an image"):
        adapt(CAPTION_TRANSLATE, read_request("Caption my holiday picture in French"))
    with pytest.raises(CannotPlanOffline, match="candidate labels"):
        adapt(TOPIC, read_request("What is 'the band played all night' about?"))


def test_offline_plan_reads_the_request_clause_by_clause():
    found = offline_plan("Caption photo.jpg and translate the caption into German.", [],
                         SMALL_BANK, max_subtasks=10)
    assert found.describe() == "offline: read from the request"
    assert found.items == [
        {"id": 0, "task": "image-to-text", "dep": [], "args": {"image": "photo.jpg"}},
        {"id": 1, "task": "translation", "dep": [0],
         "args": {"text": "<GENERATED>-0", "tgt_lang": "de"}}]


def test_a_clause_no_cue_covers_takes_the_task_of_the_nearest_one_step_example():
    found = offline_plan('Italian for "good night", please', [], SMALL_BANK, max_subtasks=10)
    assert found.describe().startswith("offline: read from the request (clauses matched to "
                                       "bank examples b-quote")
    assert found.items[0]["task"] == "translation"
    # a short text's source language only where lingua is sure of it
    assert found.items[0]["args"] == {"text": "good night", "tgt_lang": "it", "src_lang": "en"}


def test_offline_plan_says_when_it_cannot():
    nothing = offline_plan("What is the boiling point of water on Mars?", [], SMALL_BANK,
                           max_subtasks=10)
    assert nothing.items == [] and "nothing in it needs an expert model" in nothing.describe()
    with pytest.raises(CannotPlanOffline, match="no example of the bank is similar enough"):
        offline_plan('Mumble grumble "xq zv"', [], SMALL_BANK, max_subtasks=10)
    with pytest.raises(CannotPlanOffline, match="image-to-text in 'Caption the picture' needs "
                                                "an image: attach one"):
        offline_plan("Caption the picture and translate the caption into German.", [],
                     SMALL_BANK, max_subtasks=10)


@pytest.fixture
def small_bank_file(tmp_path: Path) -> str:
    path = tmp_path / "bank.jsonl"
    path.write_text("\n".join(json.dumps({"id": e.id, "request": e.request, "plan": e.plan})
                              for e in (CAPTION_TRANSLATE, QUOTED, TOPIC)))
    load_bank.cache_clear()
    return str(path)


def test_without_an_llm_the_graph_plans_offline(compiled, workspace, small_bank_file):
    context = Context(backend="lite", workspace=str(workspace), plan_bank=small_bank_file)
    out = run(compiled, context, "Is 'the goalkeeper saved a penalty' about sport, "
                                 "politics or cooking?")
    assert out["planner"] == "offline: read from the request"
    assert out["selector"] == "ranking only (no selector LLM)"
    assert out["responder"] == "template (no LLM configured)"
    assert out["status"] == "completed"
    labels = out["results"][0].outputs["labels"]
    assert labels[0]["label"] == "sport"


def test_offline_failure_aborts_with_how_to_configure_an_llm(compiled, workspace,
                                                             small_bank_file):
    context = Context(workspace=str(workspace), plan_bank=small_bank_file)
    out = run(compiled, context, 'Mumble grumble "xq zv"')
    assert out["status"] == "aborted" and out["planner"] == "offline"
    assert "cannot plan this request offline" in out["abort_reason"]
    assert "OPENAI_API_KEY" in out["abort_reason"]


def test_llm_planner_is_shown_the_nearest_examples(compiled, make_context, llm_server,
                                                   small_bank_file):
    llm_server.script("planner", {"tool_args": {"subtasks": QUOTED.plan}})
    run(compiled, make_context(backend="dry-run", plan_bank=small_bank_file, few_shot=1),
        'Translate "good night" into Italian')
    system, user = (m["content"] for m in llm_server.calls("planner")[0]["messages"])
    assert "Examples of requests and their plans" in user  # after the cacheable system prompt
    assert QUOTED.request in user and TOPIC.request not in user  # the nearest only
    assert QUOTED.request not in system
