"""Answers benchmark: what a user reads, judged right, honest or wrong, before and after
issue 25, on the same labelled set in the same run.

Two trees of the code, with the same venv:

- ``before``: the commit before issue 25's work (``147235d`` by default, ``--before
  REV``), taken with ``git archive`` into a temporary folder;
- ``after``: this checkout.

Each tree is laid out as it installs (``scripts/installed_tree.py``'s layout, from that
tree's own ``pyproject.toml``) and put first on ``PYTHONPATH``, so the venv's editable
install is never what runs; the child checks that it imported its own tree. The tree
before has no ``eval --answers``, so both run the same small driver: each sample's
request through that tree's ``hugginggpt.run`` with its files, default settings,
checkpoints in memory, and the answer printed as JSON. The files are made once, by this
checkout's harness (:func:`hugginggpt.evaluation.answer_files.materialise`), so both
trees read the very same bytes, and both answers are judged here by this checkout's
judge (:func:`hugginggpt.evaluation.answers.judge`).

Children run offline with no key, as ``hugginggpt eval --answers`` does: no
``HUGGINGGPT_*`` setting but the cache folder, no LLM key or base URL, no Hugging Face
token, ``HF_HUB_OFFLINE=1``; each tree with its own cache folder and without the result
cache (``HUGGINGGPT_CACHE=0``). A sample whose run raises is wrong, with the error.

The verdict is PASS when, after, each held-out split (``held-out``, and ``fresh`` where
the set has it) has at most 1 wrong answer in 30 and
the whole set has more right answers than before; FAIL (exit code 1) otherwise. Run:
``python benchmarks/answers.py`` (``--limit N`` for the first N samples, ``--output
FILE`` for every answer and judgement as JSON).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))
from installed_tree import checkout, lay_out  # noqa: E402  (the layout the linters check, too)

from hugginggpt.cli.eval_answers import CLEARED, KEPT  # noqa: E402
from hugginggpt.evaluation.answer_files import materialise  # noqa: E402
from hugginggpt.evaluation.answer_report import (  # noqa: E402
    WRONG_TARGET,
    AnswerRecord,
    AnswerReport,
    record_of,
)
from hugginggpt.evaluation.answers import HELD_OUT, AnswerSample, read_answer_samples  # noqa: E402

BEFORE = "147235d"
DATASET = ROOT / "evals" / "answers.jsonl"

DRIVER = r"""
import json, os, sys, time
root = os.environ["BENCH_TREE"]
import hugginggpt
from hugginggpt.api import run
assert hugginggpt.__file__.startswith(root), hugginggpt.__file__
for item in json.loads(open(os.environ["BENCH_MANIFEST"], encoding="utf-8").read()):
    begin = time.perf_counter()
    out = {"id": item["id"], "answer": "", "status": "crashed", "error": item.get("error", "")}
    if not out["error"]:
        try:
            result = run(item["request"], files=item["files"], checkpoint_url="memory",
                         workspace=os.path.join(os.environ["BENCH_WORK"], item["id"]))
            out.update(answer=result.response, status=result.status)
        except Exception as exc:  # a crash is the answer the user got
            out["error"] = f"{type(exc).__name__}: {exc}"
    out["seconds"] = time.perf_counter() - begin
    print("ANSWER " + json.dumps(out), flush=True)
"""


def manifest(samples: list[AnswerSample], folder: Path) -> list[dict[str, Any]]:
    """Each sample's request and its files, made once for both trees (a spec that cannot
    be made is an error both trees report as the sample's answer)."""
    items = []
    for sample in samples:
        item: dict[str, Any] = {"id": sample.id, "request": sample.request, "files": []}
        try:
            item["files"] = [str(p) for p in materialise(sample.files, folder / sample.id)]
        except Exception as exc:  # noqa: BLE001  (reported as the sample's answer)
            item["error"] = f"the harness could not make the files: {exc}"
        items.append(item)
    return items


def answers(name: str, tree_source: Path, scratch: Path, manifest_path: Path,
            samples: list[AnswerSample]) -> AnswerReport:
    """The judged answers of one tree to every sample."""
    tree, work = scratch / name / "tree", scratch / name / "work"
    work.mkdir(parents=True)
    lay_out(tree, tree_source)
    environment = {k: v for k, v in os.environ.items()
                   if not ((k.startswith("HUGGINGGPT_") and k not in KEPT) or k in CLEARED
                           or k == "PYTHONPATH")}
    environment.update(PYTHONPATH=str(tree), HF_HUB_OFFLINE="1", HUGGINGGPT_CACHE="0",
                       HUGGINGGPT_CACHE_DIR=str(scratch / name / "cache"),
                       BENCH_TREE=str(tree), BENCH_MANIFEST=str(manifest_path),
                       BENCH_WORK=str(work))
    print(f"answering {len(samples)} requests with the {name} tree ...", file=sys.stderr)
    done = subprocess.run([sys.executable, "-c", DRIVER], cwd=work, env=environment,
                          capture_output=True, text=True, timeout=7200)
    got = {}
    for line in done.stdout.splitlines():
        if line.startswith("ANSWER "):
            item = json.loads(line[len("ANSWER "):])
            got[item["id"]] = item
    if done.returncode != 0:
        print(f"{name}: the driver stopped ({done.returncode}):\n{done.stderr[-2000:]}",
              file=sys.stderr)
    records = []
    for sample in samples:
        item = got.get(sample.id, {"answer": "", "status": "crashed", "seconds": 0.0,
                                   "error": "the driver stopped before this sample"})
        records.append(record_of(sample, item["answer"], item["status"], item["seconds"],
                                 item["error"]))
    return AnswerReport(records)


def table(before: AnswerReport, after: AnswerReport) -> str:
    rows = [f"{'':<10} {'before: right honest wrong':>27}   {'after: right honest wrong':>26}"]
    for name, records in after.halves().items():
        b = AnswerReport.counts(before.halves()[name])
        a = AnswerReport.counts(records)
        rows.append(f"{name:<10} {b['right']:>12} {b['honest']:>6} {b['wrong']:>5}"
                    f"   {a['right']:>12} {a['honest']:>6} {a['wrong']:>5}"
                    f"   ({a['total']} requests)")
    return "\n".join(rows)


def changes(before: AnswerReport, after: AnswerReport) -> list[str]:
    """The samples whose label moved, as ``id (split): before -> after``."""
    return [f"{b.sample.id} ({b.sample.split}, {b.sample.category}): "
            f"{b.judgement.label} -> {a.judgement.label}"
            for b, a in zip(before.records, after.records, strict=True)
            if b.judgement.label != a.judgement.label]


_MISSING = re.compile(r"ModuleNotFoundError: No module named '([\w.]+)'")
"""A tree whose dependencies the venv lacks (the tree before needs what was removed
since) cannot be compared: its runs raise."""


def verdict(before: AnswerReport, after: AnswerReport) -> list[str]:
    """What fails the targets (empty: PASS)."""
    failures = []
    for name in HELD_OUT:
        held = [r for r in after.records if r.sample.split == name]
        wrong = AnswerReport.counts(held)["wrong"]
        if name == "held-out" and not held:
            failures.append("held-out: no sample")
        elif wrong > WRONG_TARGET * len(held):
            failures.append(f"{name}: {wrong} of {len(held)} answers wrong after "
                            f"(at most {WRONG_TARGET * len(held):.2f} allowed: 1 in 30)")
    for name, report in (("before", before), ("after", after)):
        missing = Counter(m.group(1) for r in report.records
                          if (m := _MISSING.search(r.error or "")))
        if missing:
            failures.append(f"{name}: {missing.total()} runs could not import "
                            f"{', '.join(missing)}, which this venv lacks (pip install "
                            f"{' '.join(missing)}, then run again): no fair comparison")
    right_before = AnswerReport.counts(before.records)["right"]
    right_after = AnswerReport.counts(after.records)["right"]
    if right_after <= right_before:
        failures.append(f"right answers: {right_after} after, not more than {right_before} "
                        "before")
    return failures


def _records(report: AnswerReport) -> list[dict[str, Any]]:
    return [r.to_json() for r in report.records]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--before", default=BEFORE, help=f"the earlier commit ({BEFORE})")
    parser.add_argument("--dataset", default=str(DATASET))
    parser.add_argument("--limit", type=int, help="only the first N samples")
    parser.add_argument("--output", help="write every answer and judgement here (JSON)")
    args = parser.parse_args()
    samples = read_answer_samples(args.dataset, limit=args.limit)
    with tempfile.TemporaryDirectory(prefix="answers-bench-") as scratch_name:
        scratch = Path(scratch_name)
        items = manifest(samples, scratch / "files")
        manifest_path = scratch / "manifest.json"
        manifest_path.write_text(json.dumps(items, ensure_ascii=False), encoding="utf-8")
        old = checkout(args.before, scratch / "before-src")
        before = answers("before", old, scratch, manifest_path, samples)
        after = answers("after", ROOT, scratch, manifest_path, samples)
    if args.output:
        Path(args.output).write_text(json.dumps(
            {"before": _records(before), "after": _records(after)}, indent=2,
            ensure_ascii=False), encoding="utf-8")
    print(f"{Path(args.dataset).name}: {len(samples)} requests, judged right / honest / "
          f"wrong; before = {args.before}, after = this checkout\n")
    print(table(before, after))
    moved = changes(before, after)
    print(f"\nlabels that changed ({len(moved)}):" + "".join(f"\n  {m}" for m in moved))
    wrong_after = [r for r in after.records if r.judgement.label == "wrong"]
    print(f"\nwrong after ({len(wrong_after)}):" + "".join(
        f"\n  {_wrong_line(r)}" for r in wrong_after))
    failures = verdict(before, after)
    print(f"\nverdict: {'PASS' if not failures else 'FAIL'}: each held-out split wrong at "
          "most 1 in 30, "
          "more right answers than before" + "".join(f"\n  - {f}" for f in failures))
    return 1 if failures else 0


def _wrong_line(record: AnswerRecord) -> str:
    answer = " | ".join(ln.strip() for ln in (record.error or record.answer).splitlines()
                        if ln.strip())
    return (f"{record.sample.id} ({record.sample.split}, {record.sample.category}): "
            f"{answer[:160]!r}")


if __name__ == "__main__":
    sys.exit(main())
