"""Every Python block of the README and the documentation runs (pytest-examples), in a fresh folder with
the tests' offline environment; a block that shows what it prints (``#>`` lines after a
``print``) prints exactly that. Or its fence marks it not runnable, with the reason (```` ```python test="skip"
reason="..." ````, taken off the fence when the site is built).

``pytest tests/test_docs_examples.py --update-examples`` rewrites the ``#>`` lines from
what the blocks print."""

from __future__ import annotations

import pytest

from scripts.reference_pages import DOCS, ROOT

pytest_examples = pytest.importorskip(
    "pytest_examples", reason="pytest-examples is not installed (pip install -e '.[docs]', "
    "part of dev)")
CodeExample, EvalExample, find_examples = (pytest_examples.CodeExample,
                                           pytest_examples.EvalExample,
                                           pytest_examples.find_examples)


@pytest.mark.parametrize("example", list(find_examples(ROOT / "README.md", DOCS)), ids=str)
def test_the_python_blocks_run(example: CodeExample, eval_example: EvalExample, tmp_path,
                               monkeypatch):
    settings = example.prefix_settings()
    if settings.get("test") == "skip":
        assert settings.get("reason"), "a block marked not runnable says why"
        pytest.skip(f"not runnable: {settings['reason']}")
    monkeypatch.chdir(tmp_path)
    eval_example.set_config(line_length=88)
    if eval_example.update_examples:
        eval_example.run_print_update(example)
    elif "#>" in example.source:
        eval_example.run_print_check(example)
    else:
        eval_example.run(example)
