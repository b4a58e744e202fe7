"""Settings are checked where they enter (a flag, a ``HUGGINGGPT_*`` variable, a saved
settings file, a keyword of ``hugginggpt.run``, a ``Context``): a bad one is refused
before anything runs, naming the setting, its value and what it may be."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import hugginggpt
from hugginggpt.cli import main
from hugginggpt.graph.context import Context, SettingsError
from hugginggpt.tools.experts.registry import register_tool

PLAN = [{"id": 0, "task": "summarization", "dep": [], "args": {"text": "A long text."}}]


def _nothing_ran(workspace: Path) -> None:
    assert not (workspace / "threads").exists()
    assert not (workspace / "checkpoints.sqlite").exists()
    assert not (workspace / "artifacts").exists()


@pytest.mark.parametrize(("flags", "said"), [
    (["--backend", "nonsense"],
     ["--backend 'nonsense'", "auto, hybrid", "dry-run, hf-inference, lite, llm, local",
      "lite,hf-inference"]),
    (["--backend", "lite,nonsense"], ["no backend named 'nonsense'"]),
    (["--subtask-timeout", "-1"],
     ["--subtask-timeout -1.0", "subtask_timeout_s", "a number, greater than 0"]),
    (["--max-subtasks", "0"], ["--max-subtasks 0", "max_subtasks", "whole number, at least 1"]),
    (["--max-run-time", "nan"], ["--max-run-time nan", "greater than 0"]),
    (["--llm-base-url", "localhost:8000/v1"],
     ["--llm-base-url 'localhost:8000/v1'", "an http:// or https:// URL"]),
    (["--hf-endpoint", "m=ftp://host/x"],
     ["--hf-endpoint 'ftp://host/x'", "hf_endpoints['m']", "http:// or https://"]),
])
def test_a_bad_flag_is_refused_before_anything_runs(capsys, workspace, flags, said):
    code = main(["run", "Summarize: a text", *flags, "--workspace", str(workspace)])
    _, err = capsys.readouterr()
    assert code == 2, err
    assert err.startswith("hugginggpt: ") and "Traceback" not in err
    for text in said:
        assert text in err
    _nothing_ran(workspace)


@pytest.mark.parametrize(("name", "value", "said"), [
    ("HUGGINGGPT_APPROVAL", "sometimes",
     ["HUGGINGGPT_APPROVAL = 'sometimes'", "approval", "one of never, plan, risky"]),
    ("HUGGINGGPT_MAX_SUBTASKS", "ten",
     ["HUGGINGGPT_MAX_SUBTASKS = 'ten'", "max_subtasks", "a whole number, at least 1"]),
    ("HUGGINGGPT_SUBTASK_TIMEOUT", "-5", ["HUGGINGGPT_SUBTASK_TIMEOUT = '-5'", "greater than 0"]),
    ("HUGGINGGPT_BACKEND", "gpu", ["HUGGINGGPT_BACKEND = 'gpu'", "no backend named 'gpu'"]),
    ("HUGGINGGPT_PLANNER", "smart", ["HUGGINGGPT_PLANNER = 'smart'", "one of auto, llm, offline"]),
    ("HUGGINGGPT_HF_ENDPOINTS", "{m: x}", ["HUGGINGGPT_HF_ENDPOINTS = '{m: x}'", "not valid JSON"]),
    ("HUGGINGGPT_LLM_ENDPOINTS", '{"model": "m"}',
     ["HUGGINGGPT_LLM_ENDPOINTS", "llm_endpoints", "a list (a JSON array)"]),
    ("HUGGINGGPT_DRY_RUN_FAULTS", '[0.5]', ["HUGGINGGPT_DRY_RUN_FAULTS = [0.5]",
                                            "a mapping (a JSON object)"]),
    ("HUGGINGGPT_MAX_LOADED_MODELS", "3.5", ["HUGGINGGPT_MAX_LOADED_MODELS = '3.5'",
                                             "a whole number"]),
    ("HUGGINGGPT_LLM_ROUTING", "random", ["llm_routing (HUGGINGGPT_LLM_ROUTING) must be one of "
                                          "['peak-ewma', 'least-busy', 'lowest-latency', 'round-robin', "
                                          "'strongest'], not 'random'"]),
])
def test_a_bad_environment_variable_is_refused_with_its_name(
        capsys, monkeypatch, workspace, name, value, said):
    monkeypatch.setenv(name, value)
    simulated = [] if name == "HUGGINGGPT_BACKEND" else ["--dry-run"]  # it sets the backend
    code = main(["run", "Summarize: a text", *simulated, "--workspace", str(workspace)])
    _, err = capsys.readouterr()
    assert code == 2, err
    assert "Traceback" not in err
    for text in said:
        assert text in err
    _nothing_ran(workspace)


def test_a_flag_wins_over_a_bad_environment_variable_only_for_its_setting(
        capsys, monkeypatch, workspace):
    monkeypatch.setenv("HUGGINGGPT_APPROVAL", "sometimes")
    code = main(["run", "Summarize: a text", "--dry-run", "--approval", "plan",
                 "--plan", _plan_file(workspace), "--json", "--workspace", str(workspace)])
    out, err = capsys.readouterr()
    assert code != 2, err
    assert json.loads(out)["status"] == "waiting"  # the flag's policy, not the variable's


def _plan_file(workspace: Path) -> str:
    path = workspace.parent / "plan.json"
    path.write_text(json.dumps(PLAN))
    return str(path)


def test_a_bad_value_from_the_environment_stops_every_command(capsys, monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HUGGINGGPT_MAX_FILE_MB", "lots")
    code = main(["trace", "--thread", "t"])  # reads the default workspace
    _, err = capsys.readouterr()
    assert code == 2 and "HUGGINGGPT_MAX_FILE_MB = 'lots'" in err and "Traceback" not in err


def test_a_bad_saved_settings_file_is_refused_naming_the_file(capsys, workspace):
    code = main(["run", "Summarize: a text", "--dry-run", "--plan", _plan_file(workspace),
                 "--approval", "plan", "--json", "--thread", "t1",
                 "--workspace", str(workspace)])
    capsys.readouterr()
    assert code != 2
    saved = workspace / "threads" / "t1.json"
    data = json.loads(saved.read_text())
    data["context"]["approval"] = "sometimes"
    saved.write_text(json.dumps(data))
    code = main(["resume", "--thread", "t1", "--approve", "--workspace", str(workspace)])
    _, err = capsys.readouterr()
    assert code == 2 and "Traceback" not in err
    assert f"the saved settings of thread 't1' ({saved})" in err
    assert "approval = 'sometimes' is not valid: expected one of never, plan, risky" in err


@pytest.mark.parametrize(("settings", "said"), [
    ({"approval": "sometimes"}, "approval = 'sometimes' is not valid: expected one of never, "
                                "plan, risky"),
    ({"max_subtasks": 0}, "max_subtasks = 0 is not valid: expected a whole number, at least 1"),
    ({"subtask_timeout_s": -1}, "subtask_timeout_s = -1 is not valid"),
    ({"backend": "nonsense"}, "no backend named 'nonsense'"),
    ({"hf_endpoints": {"m": 5}}, "hf_endpoints['m'] = 5 is not valid"),
    ({"plan": "not a list"}, "plan = 'not a list' is not valid"),
    ({"few_shot": -1}, "few_shot = -1 is not valid: expected a whole number, at least 0"),
])
def test_python_refuses_a_bad_setting_before_anything_runs(tmp_path, settings, said):
    workspace = tmp_path / "ws"
    with pytest.raises(SettingsError) as caught:
        hugginggpt.run("Summarize: a text", workspace=str(workspace), **settings)
    assert said in str(caught.value)
    assert [p.setting for p in caught.value.problems] == list(settings)
    assert not workspace.exists()
    with pytest.raises(hugginggpt.SettingsError):
        Context(**settings)


def test_python_names_the_environment_variable_of_a_bad_default(monkeypatch, tmp_path):
    monkeypatch.setenv("HUGGINGGPT_MAX_SUBTASKS", "ten")
    with pytest.raises(SettingsError, match="HUGGINGGPT_MAX_SUBTASKS = 'ten' is not a valid "
                                            "max_subtasks"):
        hugginggpt.run("Summarize: a text", workspace=str(tmp_path / "ws"))
    # a value given for the run wins over the environment, and is checked itself
    assert Context(max_subtasks=3).max_subtasks == 3


def test_good_values_are_read_from_text_and_replace_checks_again(monkeypatch):
    monkeypatch.setenv("HUGGINGGPT_MAX_SUBTASKS", "7")
    monkeypatch.setenv("HUGGINGGPT_SUBTASK_TIMEOUT", "2.5")
    monkeypatch.setenv("HUGGINGGPT_HF_ENDPOINTS", '{"m": "http://127.0.0.1:9/"}')
    context = Context(backend="lite,hf-inference")
    assert (context.max_subtasks, context.subtask_timeout_s) == (7, 2.5)
    assert context.hf_endpoints == {"m": "http://127.0.0.1:9/"}
    assert Context(max_run_s=float("inf")).max_run_s == float("inf")  # no limit
    with pytest.raises(SettingsError, match="approval = 'x'"):
        context.replace(approval="x")


def test_a_plugin_backend_is_valid_once_registered(test_tools):
    with pytest.raises(SettingsError, match="no backend named 'mine'"):
        Context(backend="mine")

    def summarize(text: str) -> dict:
        """Summarize."""
        return {"text": text[:10]}

    test_tools.append(register_tool(summarize, "summarization", backend="mine",
                                    models=["my/model"]))
    assert Context(backend="mine").backend == "mine"
    assert Context(backend="mine,lite").backend == "mine,lite"


def test_every_setting_has_its_variable_and_the_documented_names_still_work(monkeypatch):
    from hugginggpt.graph.context import env_names

    assert env_names("few_shot") == ("HUGGINGGPT_FEW_SHOT",)
    assert env_names("llm_timeout_s") == ("HUGGINGGPT_LLM_TIMEOUT",)
    assert env_names("llm_base_url") == ("HUGGINGGPT_LLM_BASE_URL", "OPENAI_BASE_URL")
    monkeypatch.setenv("HUGGINGGPT_FEW_SHOT", " 2 ")  # read as env() reads: stripped
    monkeypatch.setenv("HUGGINGGPT_LLM_TIMEOUT", "7")
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    monkeypatch.setenv("HUGGINGGPT_LLM", "  ")  # blank: not set
    monkeypatch.setenv("LLM_TIMEOUT_S", "1")  # not a variable of ours
    context = Context()
    assert (context.few_shot, context.llm_timeout_s, context.llm) == (2, 7.0, None)
    assert context.llm_base_url == "http://127.0.0.1:9/v1"
    assert Context(llm_timeout_s=3).llm_timeout_s == 3  # by its name, the run's value wins


def test_the_served_schema_names_the_settings_not_their_variables():
    # the LangGraph server keeps only the keys of a run's context that this schema names
    from hugginggpt.graph.callers import ServedContext

    assert set(ServedContext.model_json_schema()["properties"]) == set(Context.model_fields)
