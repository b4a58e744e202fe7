"""Advice phrased for the interface that asked (issue 25): every ``hugginggpt run`` flag
a failure text names is said as a Python keyword, a served run's context key or the
operator's setting, from the settings' own declarations and the CLI's parser."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from hugginggpt.cli import _parser
from hugginggpt.graph.callers import flag_of, setting_of_flag
from hugginggpt.graph.context import Context
from hugginggpt.nodes.responding.advice import for_caller, setting_named

ROOT = Path(__file__).resolve().parents[1]
FLAG = re.compile(r"(?<![\w-])--[a-z][a-z-]*[a-z]")


def _run_options() -> list[str]:
    parser = _parser(["run", "x"])
    [sub] = [a for a in parser._actions if a.dest == "command"]
    run = sub.choices["run"]  # type: ignore[attr-defined]
    return [o for a in run._actions for o in a.option_strings if o.startswith("--")]


def test_a_settings_flag_is_the_parsers_own():
    """The flag named for a setting is an option of ``hugginggpt run``, and back."""
    options = _run_options()
    mapped = {o: setting_of_flag(o) for o in options}
    assert mapped["--subtask-timeout"] == "subtask_timeout_s"
    assert mapped["--download"] == "download" and mapped["--max-run-time"] == "max_run_s"
    for option, setting in mapped.items():
        if setting is not None:
            assert flag_of(setting) == option
    assert {"backend", "download", "max_loaded_models", "allow_private_urls"} <= \
        set(mapped.values())


def _failure_texts() -> list[tuple[str, str]]:
    """The string literals (not docstrings) of tools/, nodes/ and graph/ that name a flag."""
    found = []
    for folder in ("tools", "nodes", "graph"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            if path.name == "advice.py":
                continue
            tree = ast.parse(path.read_text(encoding="utf-8"))
            docs = {id(n.value) for n in ast.walk(tree) if isinstance(n, ast.Expr)}
            found += [(f"{path.relative_to(ROOT)}", n.value) for n in ast.walk(tree)
                      if isinstance(n, ast.Constant) and isinstance(n.value, str)
                      and id(n) not in docs and FLAG.search(n.value)]
    return found


@pytest.mark.parametrize("caller", ["served", "ui", "python"])
def test_no_flag_is_left_in_a_failure_text_for_another_interface(caller):
    texts = _failure_texts()
    assert len(texts) > 15  # the scan finds them
    for where, text in texts:
        said = for_caller(text, caller)
        if caller == "python":  # a shell command stays one (hugginggpt models ...)
            said = re.sub(r"hugginggpt models \w+[^,;)`]*", "", said)
        assert not FLAG.search(said), (where, text, said)
        assert for_caller(text, "cli") == text


def test_each_interface_names_its_own_control():
    text = "or run with --download ask|yes"
    assert for_caller(text, "python") == 'or run with download="ask" or download="yes"'
    assert "HUGGINGGPT_DOWNLOAD=ask" in for_caller(text, "served")  # the deployment's
    assert "operator" in for_caller(text, "served")
    assert setting_named("backend", "served") == '"backend" in the run\'s context'
    assert setting_named("approval", "ui", "plan") == "the Approval choice"
    limit = "(limit max_run_s=3 s; raise it with --max-run-time or HUGGINGGPT_MAX_RUN_S)"
    assert for_caller(limit, "served") == (
        "(limit max_run_s=3 s; raise it with HUGGINGGPT_MAX_RUN_S (ask the server's "
        "operator))")
    # a word after a switch, or one that is not among a setting's choices, stays the
    # sentence's
    assert for_caller("attach one with --file or name it", "ui") == \
        "attach one with the Images and audio box or name it"
    assert for_caller("try another --backend, or wait", "python") == \
        "try another backend=..., or wait"
    key = "needs a key: set OPENAI_API_KEY (export OPENAI_API_KEY=sk-...), or ..."
    assert for_caller(key, "served") == ("needs a key: set OPENAI_API_KEY (in the server's "
                                         "environment (ask its operator)), or ...")
    assert for_caller("which is not set: export MY_KEY=...", "ui") == (
        "which is not set: MY_KEY in the environment this UI runs in (ask whoever runs it)")
    assert for_caller(key, "python") == key


def test_a_served_runs_default_caller_is_served_and_a_caller_may_say_ui():
    from hugginggpt.graph.callers import ServedContext

    assert Context().caller == "python" and ServedContext().caller == "served"
    assert ServedContext(caller="ui").caller == "ui"
