"""The Benchmarks pages are the benchmarks' stored output, each figure under the stamp of
the run that printed it (command, commit, date): a page edited by hand, a figure
without its stamp, a stored result without its commit or a chart that does not match
fails the check (and ``mkdocs build --strict``, through ``scripts/docs_hooks.py``)."""

from __future__ import annotations

import json
import re
import shutil

import pytest

from scripts import benchmark_pages, plan_drawing
from scripts.benchmark_charts import chart
from scripts.benchmark_pages import BENCHMARKS, DOCS, ROOT, page, result_path, stale, write

SCHEDULING = """\
unit 0.25 s, median of 3 run(s); cells: wall s, wall/critical path
shape        critical s |  dataflow sync | dataflow async |      superstep |     sequential | dataflow <= 1.10x
fan-out 8         0.250 |  0.262   1.05x |  0.259   1.04x |  0.258   1.03x |  1.003   4.01x | ok
chain             1.000 |  1.030   1.03x |  1.020   1.02x |  1.010   1.01x |  1.002   1.00x | ok

target dataflow wall/critical path <= 1.10: meets it on every shape"""
RESULT = {"command": "python benchmarks/scheduling.py", "commit": "abc1234",
          "uncommitted": [], "date": "2026-12-04 16:40 UTC", "exit_code": 0,
          "seconds": 61.5, "machine": "2 CPUs, load average 1.00 when it started",
          "output": SCHEDULING}


def test_the_benchmark_pages_and_the_plan_drawing_are_their_stored_results():
    assert stale() == [], "run python scripts/benchmark_pages.py"
    assert plan_drawing.stale() == [], "run python scripts/plan_drawing.py"


def test_every_figure_on_a_benchmark_page_names_its_command_commit_and_date():
    """Each block of output (and each chart) on a committed page comes right after the
    stamp of its stored run; a page without a stored run shows no output at all."""
    for name in BENCHMARKS:
        text = (DOCS / "benchmarks" / f"{name}.md").read_text(encoding="utf-8")
        figures = text.count("```text")
        if not result_path(name).exists():
            assert figures == 0 and "Not yet run by the page generator" in text, name
            continue
        stored = json.loads(result_path(name).read_text(encoding="utf-8"))
        assert figures == 1, name
        stamp = text[:text.index("```text")].rsplit("!!! info", 1)[1]
        assert all(part in stamp for part in
                   (f"`{stored['command']}`", f"`{stored['commit']}`", stored["date"])), name
        assert stored["output"] in text, name


@pytest.fixture
def docs(tmp_path):
    """A copy of the docs with a stored result for the scheduling benchmark, its pages
    written from it."""
    copy = tmp_path / "docs"
    shutil.copytree(DOCS, copy)
    result_path("scheduling", copy).write_text(json.dumps(RESULT), encoding="utf-8")
    write(copy)
    assert stale(copy) == []
    return copy


def _edit(path, old, new):
    text = path.read_text(encoding="utf-8")
    assert old in text
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


def test_a_page_of_stored_output_shows_it_under_its_stamp_and_chart(docs):
    text = (docs / "benchmarks" / "scheduling.md").read_text(encoding="utf-8")
    assert re.search(r'!!! info "Run by the page generator on 2026-12-04 16:40 UTC"\n'
                     r"    `python benchmarks/scheduling.py` on commit `abc1234`", text)
    assert "![" in text and "(img/scheduling.svg)" in text and SCHEDULING in text
    svg = (docs / "benchmarks" / "img" / "scheduling.svg").read_text(encoding="utf-8")
    assert "python benchmarks/scheduling.py · commit abc1234 · 2026-12-04 16:40 UTC" in svg
    assert "4.01x" in svg and "target 1.10x" in svg
    overview = (docs / "benchmarks.md").read_text(encoding="utf-8")
    assert ("| [Scheduling](benchmarks/scheduling.md) | `python benchmarks/scheduling.py` "
            "| `abc1234` | 2026-12-04 16:40 UTC | 0 |") in overview


def test_a_figure_without_its_stamp_fails_the_check(docs):
    page_path = docs / "benchmarks" / "scheduling.md"
    text = page_path.read_text(encoding="utf-8")
    stamp = re.search(r"!!! info .*?\n\n", text, re.DOTALL)
    assert stamp
    page_path.write_text(text.replace(stamp.group(), ""), encoding="utf-8")
    assert stale(docs) == ["benchmarks/scheduling.md"]


def test_a_figure_edited_by_hand_fails_the_check(docs):
    _edit(docs / "benchmarks" / "scheduling.md", "1.05x", "1.01x")
    assert stale(docs) == ["benchmarks/scheduling.md"]


def test_figures_pasted_on_a_page_without_a_run_fail_the_check(docs):
    _edit(docs / "benchmarks" / "startup.md", "## The latest run\n",
          "## The latest run\n\n```text\ncold 1.23 s\n```\n")
    assert stale(docs) == ["benchmarks/startup.md"]


def test_a_stored_result_without_its_commit_fails_the_check(docs):
    result = dict(RESULT)
    del result["commit"]
    result_path("scheduling", docs).write_text(json.dumps(result), encoding="utf-8")
    assert stale(docs) == ["benchmarks/results/scheduling.json"]
    with pytest.raises(ValueError, match="lacks its stamp's commit"):
        page("scheduling", docs)


def test_a_result_stored_again_makes_the_page_stale_until_written(docs):
    result_path("scheduling", docs).write_text(
        json.dumps({**RESULT, "output": SCHEDULING.replace("4.01x", "3.99x")}),
        encoding="utf-8")
    assert stale(docs) == ["benchmarks/scheduling.md", "benchmarks/img/scheduling.svg"]
    write(docs)
    assert stale(docs) == []


def test_a_chart_edited_by_hand_or_an_overview_row_fails_the_check(docs):
    _edit(docs / "benchmarks" / "img" / "scheduling.svg", "4.01x", "2.00x")
    _edit(docs / "benchmarks.md", "`abc1234`", "`0000000`")
    assert stale(docs) == ["benchmarks.md", "benchmarks/img/scheduling.svg"]


def test_a_chart_whose_figures_are_missing_says_so():
    with pytest.raises(ValueError, match=r"benchmarks/scheduling\.py has none of the figures"):
        chart("scheduling", {**RESULT, "output": "a format the chart does not know"})


def test_the_stamp_is_the_checkout_s_commit():
    stamped = benchmark_pages.stamp("python benchmarks/x.py")
    head = benchmark_pages._git("rev-parse", "--short", "HEAD").strip()
    assert stamped["commit"] == head and stamped["command"] == "python benchmarks/x.py"
    assert re.fullmatch(r"\d{4}-\d\d-\d\d \d\d:\d\d UTC", stamped["date"])
    assert all(not path.startswith("docs/") for path in stamped["uncommitted"])
    assert ROOT.joinpath("benchmarks", "scheduling.py").exists()


def test_every_benchmark_has_a_page_in_the_nav():
    nav = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    assert all(f"benchmarks/{name}.md" in nav for name in BENCHMARKS)
    scripts = {path.stem for path in (ROOT / "benchmarks").glob("*.py")}
    assert set(BENCHMARKS) == scripts - {"__init__"}
