"""The what-runs-where table and coverage counts of the documentation's page are the
code's: measured through the stubs (the mini-hub, the local LLM server, fresh caches) with
selection's own test of what can run, and compared with the page, which fails when it
differs."""

from __future__ import annotations

import pytest

from benchmarks.coverage import SETUPS, Found, Setup, report
from hugginggpt.tools.experts.catalog import load_catalog
from hugginggpt.tools.experts.local import LOCAL_LIBRARIES
from hugginggpt.tools.experts.registry import registered_tools
from scripts.what_runs_where import MEASURED, PAGES, ROOT, blocks, measure, replace


@pytest.fixture(scope="module")
def measured() -> list[Found]:
    return measure(MEASURED)


@pytest.mark.timeout(900)  # five fresh interpreters; slower while other jobs run
@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_the_pages_show_what_the_code_runs_where(measured, page):
    text = page.read_text(encoding="utf-8")
    assert replace(text, blocks(measured)) == text, (
        f"{page.relative_to(ROOT)} differs from the code: run python "
        "scripts/what_runs_where.py --write")


def test_the_set_ups_are_measured_not_listed(measured):
    by = {f.setup.name: f for f in measured}
    assert all(f.llm_configured == f.setup.llm for f in measured)
    # each set-up can do what the one before could
    assert (set(by["offline"].tasks) <= set(by["llm"].tasks) <= set(by["llm+hf"].tasks)
            <= set(by["downloads"].tasks))
    assert set(by["offline"].tasks) <= set(by["cached"].tasks)
    # nothing offline needs the network or a key
    assert not {b for f in (by["offline"], by["cached"]) for bs in f.backends.values()
                for b in bs} & {"hf-inference"}
    # a token makes hf-inference run what the catalog records providers for
    served = {c.task for c in load_catalog().cards() if c.providers}
    hf = {t for t, bs in by["llm+hf"].backends.items() if "hf-inference" in bs}
    assert served and hf == served
    # with the weights cached, local runs every task type it has a tool and a card it
    # can load for
    local_tools = {t.task for t in registered_tools() if t.backend == "local"}
    loadable = {c.task for c in load_catalog().cards() if c.library_name in LOCAL_LIBRARIES}
    cached_local = {t for t, bs in by["cached"].backends.items() if "local" in bs}
    assert cached_local == local_tools & loadable


def test_a_missed_target_fails_and_a_set_up_without_one_has_no_verdict():
    names = [f"task-{i}" for i in range(12)]
    short = Found(Setup("offline", "offline, no key", target=10), names=names,
                  backends={n: ["lite"] for n in names[:7]})
    met = Found(Setup("llm", "an LLM key only", target=10), names=names,
                backends={n: ["lite", "llm"] for n in names[:10]})
    free = Found(Setup("llm+hf", "an HF token"), names=names)
    hidden = Found(Setup("cached", "weights cached", counted=False), names=names)
    assert (short.verdict, met.verdict, free.verdict) == ("FAIL", "PASS", "-")
    text = report([short, met, free, hidden])
    assert "| offline, no key | 7 | >= 10 | FAIL | lite 7 |" in text
    assert "| an LLM key only | 10 | >= 10 | PASS | lite 10, llm 10 |" in text
    assert "weights cached" not in text and "(of 12)" in text
    assert [s.target for s in SETUPS] == [10, 16, None, 28]
