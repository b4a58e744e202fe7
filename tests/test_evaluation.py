"""The planning evaluation: readers, TaskBench-style metrics, the runner and its report.

Every expected number here is worked out by hand in the comment next to it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from hugginggpt.evaluation import (
    Counts,
    DatasetError,
    Nearest,
    PlanNode,
    Report,
    Sample,
    SampleRecord,
    canonical_task,
    evaluate,
    nearest_in,
    nearness_band,
    parse_sample,
    plan_shape,
    read_samples,
    score_plan,
)
from hugginggpt.nodes.planning.bank import BankExample, PlanBank
from hugginggpt.tools.experts.tasks import get_task_type

TASKBENCH = Path(__file__).resolve().parents[2] / "shared" / "data" / "taskbench-huggingface"


def node(id: int, task: str, *dep: int, **args: str) -> PlanNode:
    return PlanNode(id=id, task=task, dep=tuple(dep), args=tuple(args.items()))


def raw(*nodes: PlanNode) -> list[dict[str, Any]]:
    """The plan items a planner would return for these nodes."""
    return [
        {"id": n.id, "task": n.task, "dep": list(n.dep) or [-1], "args": dict(n.args)}
        for n in nodes
    ]


def sample(id: str, *gold: PlanNode) -> Sample:
    return Sample(id=id, request=f"request {id}", gold=list(gold))


def prf(counts: Counts) -> tuple[float | None, float | None, float | None]:
    return counts.precision, counts.recall, counts.f1


ASR = node(0, "automatic-speech-recognition", audio="talk.wav")
SUMMARY = node(1, "summarization", 0, text="<GENERATED>-0")
SPEECH = node(2, "text-to-speech", 1, text="<GENERATED>-1")
CHAIN = (ASR, SUMMARY, SPEECH)


def test_identical_plans_score_one_everywhere():
    score = score_plan(CHAIN, CHAIN)
    for counts in (score.node, score.edge, score.arg_name, score.arg_value):
        assert prf(counts) == (1.0, 1.0, 1.0)
    assert score.node == Counts(tp=3, fp=0, fn=0)
    assert score.edge == Counts(tp=2, fp=0, fn=0)


def test_ids_need_not_agree_references_compare_by_task():
    renumbered = (
        node(5, "automatic-speech-recognition", audio="talk.wav"),
        node(7, "summarization", 5, text="<GENERATED>-5"),
        node(9, "text-to-speech", 7, text="<GENERATED>-7"),
    )
    score = score_plan(CHAIN, renumbered)
    assert score.edge.f1 == 1.0 and score.arg_value.f1 == 1.0


def test_missing_node():
    gold = (
        node(0, "image-to-text", image="a.jpg"),
        node(1, "translation", 0, text="<GENERATED>-0", tgt_lang="fr"),
    )
    score = score_plan(gold, gold[:1])
    assert score.node == Counts(1, 0, 1)
    assert prf(score.node) == (1.0, 0.5, pytest.approx(2 / 3))
    assert score.edge == Counts(0, 0, 1)
    assert prf(score.edge) == (0.0, 0.0, 0.0)
    # names: gold (i2t, image) (tr, text) (tr, tgt_lang); predicted the first: 2*1/(2+0+2)
    assert score.arg_name == Counts(1, 0, 2) and score.arg_name.f1 == 0.5


def test_extra_node():
    gold = (node(0, "summarization", text="a long text"),)
    predicted = (*gold, node(1, "text-to-speech", 0, text="<GENERATED>-0"))
    score = score_plan(gold, predicted)
    assert prf(score.node) == (0.5, 1.0, pytest.approx(2 / 3))
    assert score.edge == Counts(0, 1, 0) and score.edge.f1 == 0.0
    assert score.arg_value == Counts(1, 1, 0)


def test_repeated_tools_are_counted_as_a_multiset():
    gold = (
        node(0, "translation", text="hello", tgt_lang="fr"),
        node(1, "translation", text="hello", tgt_lang="de"),
    )
    predicted = (node(0, "translation", text="hello", tgt_lang="fr"),)
    score = score_plan(gold, predicted)
    assert score.node == Counts(1, 0, 1)
    assert prf(score.node) == (1.0, 0.5, pytest.approx(2 / 3))
    # names: gold {(tr,text) x2, (tr,tgt_lang) x2}, predicted one of each
    assert score.arg_name == Counts(2, 0, 2)
    # values: gold {hello x2, fr, de}, predicted {hello, fr}
    assert score.arg_value == Counts(2, 0, 2)

    doubled = score_plan(predicted, gold)  # two predicted against one gold
    assert doubled.node == Counts(1, 1, 0) and doubled.node.precision == 0.5
    # TaskBench's per-sample sets would count the two translations once
    assert score_plan(gold, gold).node == Counts(2, 0, 0)


def test_edges_are_task_pairs_from_deps():
    predicted = (ASR, SUMMARY, node(2, "text-to-speech", 0, text="<GENERATED>-0"))
    score = score_plan(CHAIN, predicted)
    assert score.node.f1 == 1.0
    # gold (asr, sum) (sum, tts); predicted (asr, sum) (asr, tts)
    assert score.edge == Counts(1, 1, 1)
    assert prf(score.edge) == (0.5, 0.5, 0.5)


def test_argument_names_versus_values():
    gold = (node(0, "translation", text="Hello there", tgt_lang="fr"),)
    predicted = (node(0, "translation", text="  'hello there' ", tgt_lang="de"),)
    score = score_plan(gold, predicted)
    assert score.arg_name == Counts(2, 0, 0)
    # the text matches once stripped, unquoted and case-folded; the language does not
    assert score.arg_value == Counts(1, 1, 1) and score.arg_value.f1 == 0.5


def test_name_less_gold_arguments_are_scored_by_value():
    gold = (
        PlanNode(0, "image-to-text", (), ((None, "photo.jpg"),)),
        PlanNode(1, "translation", (0,), ((None, "<GENERATED>-0"),)),
    )
    predicted = (
        node(0, "image-to-text", image="photo.jpg"),
        node(1, "translation", 0, text="<GENERATED>-0", tgt_lang="fr"),
    )
    score = score_plan(gold, predicted)
    # names are kinds: gold (i2t, image) (tr, text); predicted adds (tr, text) for "fr"
    assert score.arg_name == Counts(2, 1, 0)
    # values: (i2t, photo.jpg) (tr, <node:image-to-text>) match; (tr, fr) is extra
    assert score.arg_value == Counts(2, 1, 0)


def test_nothing_on_either_side_is_not_scored():
    score = score_plan((ASR,), (ASR,))
    assert score.edge == Counts() and prf(score.edge) == (None, None, None)


def test_empty_prediction_counts_every_gold_item_as_missed():
    report = evaluate([sample("a", *CHAIN)], lambda s: [])
    record = report.records[0]
    assert record.valid and record.predicted == []
    assert record.score.node == Counts(0, 0, 3)
    assert record.score.edge == Counts(0, 0, 2)
    assert prf(report.overall.score.node) == (0.0, 0.0, 0.0)


def test_a_planner_that_raises_is_invalid_and_empty_not_dropped():
    def planner(s: Sample) -> list[dict[str, Any]]:
        if s.id == "bad":
            raise RuntimeError("model offline")
        return raw(*s.gold)

    report = evaluate([sample("good", *CHAIN), sample("bad", *CHAIN)], planner)
    bad = report.records[1]
    assert (bad.valid, bad.error, bad.predicted) == (False, "RuntimeError: model offline", [])
    assert bad.score.node == Counts(0, 0, 3)
    overall = report.overall
    assert (overall.samples, overall.invalid, overall.invalid_rate) == (2, 1, 0.5)
    assert prf(overall.score.node) == (1.0, 0.5, pytest.approx(2 / 3))


def test_only_exceptions_are_caught():
    def planner(s: Sample) -> list[dict[str, Any]]:
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        evaluate([sample("a", ASR)], planner)


def test_an_invalid_plan_is_scored_as_empty():
    predicted = [
        {"id": 0, "task": "teleportation", "args": {"text": "x"}},
        {"id": 1, "task": "summarization", "dep": [0], "args": {"text": "<GENERATED>-0"}},
    ]
    report = evaluate([sample("a", ASR, SUMMARY)], lambda s: predicted)
    record = report.records[0]
    assert not record.valid and record.error is None
    assert any("unknown task type 'teleportation'" in p for p in record.problems)
    assert record.predicted == ["teleportation", "summarization"]  # shown, not scored
    assert record.score.node == Counts(0, 0, 2)  # the valid summarization does not count
    assert report.invalid_rate == 1.0


def test_too_many_subtasks_is_invalid():
    report = evaluate([sample("a", *CHAIN)], lambda s: raw(*s.gold), max_subtasks=2)
    assert not report.records[0].valid
    assert "at most 2" in report.records[0].problems[0]


def test_an_unreadable_result_is_invalid():
    report = evaluate([sample("a", ASR)], lambda s: {"answer": "no"})  # type: ignore[arg-type,return-value]
    assert report.records[0].error is not None
    assert report.records[0].error.startswith("PlanParseError")


def test_micro_average_sums_counts_over_samples():
    big = (
        node(0, "summarization", text="a"),
        node(1, "translation", text="b"),
        node(2, "text-classification", text="c"),
    )
    small = node(0, "summarization", text="z")
    report = evaluate(
        [sample("small", small), sample("big", *big)],
        lambda s: raw(small) if s.id == "small" else [],
    )
    # recall 1/4 summed over the dataset; the mean of per-sample recalls would be 0.5
    assert report.overall.score.node == Counts(1, 0, 3)
    assert report.overall.score.node.recall == 0.25


TASKBENCH_LINES = [
    {
        "id": "chain",
        "user_request": "Transcribe example.wav, summarise it and read it aloud.",
        "type": "chain",
        "task_nodes": [
            {"task": "Automatic Speech Recognition", "arguments": ["example.wav"]},
            {"task": "Summarization", "arguments": ["<node-0>"]},
            {"task": "Text-to-Speech", "arguments": ["<node-1>"]},
        ],
        "task_links": [
            {"source": "Automatic Speech Recognition", "target": "Summarization"},
            {"source": "Summarization", "target": "Text-to-Speech"},
        ],
    },
    {
        "id": "dag",
        "user_request": "Caption example.jpg, classify it, and translate the caption.",
        "type": "dag",
        "task_nodes": [
            {"task": "Image-to-Text", "arguments": [{"name": "image", "value": "example.jpg"}]},
            {"task": "Image Classification", "arguments": {"image": "example.jpg"}},
            {"task": "Translation", "arguments": [{"text": "the caption"}]},
        ],
        "task_links": [{"source": "Image-to-Text", "target": "Translation"}],
    },
    {
        "id": "odd",
        "user_request": "Teleport me.",
        "type": "single",
        "task_nodes": [{"task": "Teleportation", "arguments": ["<node-0>", "me"]}],
        "task_links": [],
    },
]


@pytest.fixture
def taskbench_file(tmp_path: Path) -> Path:
    path = tmp_path / "data.json"
    path.write_text("\n".join(json.dumps(line) for line in TASKBENCH_LINES) + "\n\n")
    return path


def test_taskbench_lines_are_read(taskbench_file: Path):
    chain, dag, odd = read_samples(taskbench_file)
    assert chain.id == "chain" and chain.request.startswith("Transcribe")
    assert chain.gold == [
        PlanNode(0, "automatic-speech-recognition", (), ((None, "example.wav"),)),
        PlanNode(1, "summarization", (0,), ((None, "<GENERATED>-0"),)),
        PlanNode(2, "text-to-speech", (1,), ((None, "<GENERATED>-1"),)),
    ]
    assert [n.task for n in dag.gold] == ["image-to-text", "image-classification", "translation"]
    assert [n.args for n in dag.gold] == [
        (("image", "example.jpg"),),
        (("image", "example.jpg"),),
        (("text", "the caption"),),
    ]
    assert dag.gold[2].dep == (0,)  # from the task link alone
    # an unknown task is kept, lower-cased; a self-reference is dropped as TaskBench does
    assert odd.gold == [PlanNode(0, "teleportation", (), ((None, "me"),))]
    assert [plan_shape(s.gold) for s in (chain, dag, odd)] == ["chain", "dag", "single"]
    assert len(read_samples(taskbench_file, limit=2)) == 2


def test_taskbench_sample_scored_end_to_end(taskbench_file: Path):
    chain, _, odd = read_samples(taskbench_file)
    predicted = raw(
        node(0, "automatic-speech-recognition", audio="example.wav"),
        node(1, "summarization", 0, text="<GENERATED>-0"),
        node(2, "text-to-speech", 1, text="<GENERATED>-1"),
    )
    report = evaluate([chain, odd], lambda s: predicted if s.id == "chain" else [])
    good = report.records[0].score
    assert (good.node.f1, good.edge.f1, good.arg_name.f1, good.arg_value.f1) == (1, 1, 1, 1)
    assert report.records[1].score.node == Counts(0, 0, 1)  # nobody can predict it


def test_task_links_resolve_repeated_tools(tmp_path: Path):
    line = {
        "id": "r",
        "user_request": "translate twice",
        "task_nodes": [
            {"task": "Translation", "arguments": ["hello"]},
            {"task": "Translation", "arguments": ["bonjour"]},
        ],
        "task_links": [{"source": "Translation", "target": "Translation"}],
    }
    gold = parse_sample(line).gold
    assert [n.dep for n in gold] == [(), (0,)]
    assert plan_shape(gold) == "chain"


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ({"id": "x"}, "no request"),
        ({"id": "x", "request": "r"}, "no gold plan"),
        (
            {
                "id": "x",
                "user_request": "r",
                "task_nodes": [{"task": "Summarization", "arguments": ["<node-3>"]}],
            },
            "<node-3> does not exist",
        ),
        (
            {
                "id": "x",
                "user_request": "r",
                "task_nodes": [{"task": "Summarization", "arguments": ["t"]}],
                "task_links": [{"source": "Translation", "target": "Summarization"}],
            },
            "not among the task nodes",
        ),
        (
            {"id": "x", "request": "r", "plan": [{"id": "zero", "task": "summarization"}]},
            "subtask #0",
        ),
    ],
)
def test_bad_lines_raise_with_their_place(line: dict[str, Any], message: str):
    with pytest.raises(DatasetError, match=message):
        parse_sample(line, where="data.jsonl:3")


def test_not_json_names_the_line(tmp_path: Path):
    path = tmp_path / "d.jsonl"
    path.write_text('{"id": "a", "request": "r", "plan": []}\n{oops\n')
    with pytest.raises(DatasetError, match=r"d\.jsonl:2: not JSON"):
        read_samples(path)


def test_project_format_is_read(tmp_path: Path):
    path = tmp_path / "d.jsonl"
    lines = [
        {
            "id": 1,
            "request": "Transcribe talk.wav",
            "files": ["talk.wav"],
            "plan": [{"id": 0, "task": "ASR", "dep": [-1], "args": {"audio": "talk.wav"}}],
        },
        {
            "id": "2",
            "request": "Summarise then read",
            "plan": {
                "subtasks": [
                    raw(SUMMARY)[0] | {"id": 0, "dep": [-1], "args": {"text": "t"}},
                    raw(SPEECH)[0] | {"id": 1, "dep": [0], "args": {"text": "<GENERATED>-0"}},
                ]
            },
        },
    ]
    path.write_text("\n".join(json.dumps(line) for line in lines))
    first, second = read_samples(path)
    assert (first.id, first.files) == ("1", ["talk.wav"])
    assert first.gold == [PlanNode(0, "automatic-speech-recognition", (), (("audio", "talk.wav"),))]
    assert [(n.task, n.dep) for n in second.gold] == [
        ("summarization", ()),
        ("text-to-speech", (0,)),
    ]


def test_every_taskbench_tool_name_maps_to_a_task_type():
    tool_desc = TASKBENCH / "tool_desc.json"
    if not tool_desc.exists():
        pytest.skip("the shared TaskBench data is not checked out")
    names = [tool["id"] for tool in json.loads(tool_desc.read_text())["nodes"]]
    assert len(names) == 23
    unknown = [n for n in names if get_task_type(canonical_task(n)) is None]
    assert unknown == []
    assert canonical_task("Image Editing") == "image-to-image"
    assert canonical_task("Teleportation") == "teleportation"


@pytest.mark.parametrize(
    ("nodes", "shape"),
    [
        ((), "empty"),
        ((ASR,), "single"),
        (CHAIN, "chain"),
        ((ASR, SUMMARY, node(2, "text-to-speech", 0, text="<GENERATED>-0")), "dag"),  # fan-out
        (
            (
                node(0, "summarization", text="a"),
                node(1, "summarization", text="b"),
                node(2, "sentence-similarity", 0, 1, text="<GENERATED>-0", text2="<GENERATED>-1"),
            ),
            "dag",
        ),  # fan-in
        ((node(0, "summarization", text="a"), node(1, "translation", text="b")), "dag"),  # apart
    ],
)
def test_plan_shape(nodes: tuple[PlanNode, ...], shape: str):
    assert plan_shape(nodes) == shape


def shaped_report() -> Report:
    single = sample("single", node(0, "summarization", text="a text"))
    chain = sample("chain", *CHAIN)
    dag = sample("dag", ASR, SUMMARY, node(2, "text-to-speech", 0, text="<GENERATED>-0"))

    def planner(s: Sample) -> list[dict[str, Any]]:
        if s.id == "dag":
            raise TimeoutError("took too long")
        return raw(*s.gold[:1]) if s.id == "chain" else raw(*s.gold)

    return evaluate([single, chain, dag], planner)


def test_report_splits_by_shape_and_size():
    report = shaped_report()
    assert list(report.by_shape) == ["single", "chain", "dag"]
    single, chain, dag = report.by_shape.values()
    assert (single.samples, single.invalid, single.score.node.f1) == (1, 0, 1.0)
    assert single.score.edge.f1 is None
    assert chain.score.node == Counts(1, 0, 2) and chain.score.edge == Counts(0, 0, 2)
    assert (dag.invalid, dag.invalid_rate, dag.score.node) == (1, 1.0, Counts(0, 0, 3))
    assert list(report.by_size) == [1, 3]
    assert report.by_size[3].samples == 2 and report.by_size[3].score.node == Counts(1, 0, 5)
    assert report.overall.score.node == Counts(2, 0, 5)


def test_report_json_round_trip():
    report = shaped_report()
    data = json.loads(json.dumps(report.to_json()))
    assert data == report.to_json()
    assert Report.from_json(data) == report
    assert data["overall"]["node"] == {
        "tp": 2,
        "fp": 0,
        "fn": 5,
        "precision": 1.0,
        "recall": 2 / 7,
        "f1": 4 / 9,
    }
    assert set(data["by_size"]) == {"1", "3"}
    record = data["records"][2]
    assert record["id"] == "dag" and record["error"] == "TimeoutError: took too long"
    assert record["gold"] == ["automatic-speech-recognition", "summarization", "text-to-speech"]
    assert record["shape"] == "dag" and record["size"] == 3 and record["latency_s"] >= 0


def test_report_format_is_a_table():
    text = shaped_report().format()
    lines = text.splitlines()
    assert lines[0].startswith("Planning evaluation: 3 samples, 1 invalid (33.3%)")
    overall = next(line for line in lines if line.startswith("overall"))
    assert overall.split()[1:4] == ["3", "33.3%", "1.000"]
    assert any(line.startswith("shape single") for line in lines)
    assert any(line.startswith("size 3") for line in lines)
    assert "  dag: TimeoutError: took too long" in lines


def nearness_report() -> Report:
    """Four samples, planned right except "far", at known similarities ("unmeasured" has
    none); bands: far < 0.6, mid 0.6-0.7 (0.6 itself), close 0.7-0.8."""
    samples = [sample(name, node(0, "summarization", text=f"text {name}"))
               for name in ("far", "mid", "close", "unmeasured")]
    similarity = {"far": 0.31, "mid": 0.6, "close": 0.75}

    def planner(s: Sample) -> list[dict[str, Any]]:
        if s.id == "far":
            raise ValueError("nothing close")
        return raw(*s.gold)

    def nearness(s: Sample) -> Nearest | None:
        return Nearest(f"bank-{s.id}", similarity[s.id]) if s.id in similarity else None

    return evaluate(samples, planner, nearness=nearness)


def test_report_splits_by_nearness():
    report = nearness_report()
    assert [r.nearest for r in report.records] == [
        Nearest("bank-far", 0.31), Nearest("bank-mid", 0.6), Nearest("bank-close", 0.75), None]
    assert list(report.by_nearness) == ["<0.6", "0.6-0.7", "0.7-0.8"]  # lowest first, no ">=0.8"
    far, mid, close = report.by_nearness.values()
    assert (far.samples, far.invalid, far.score.node) == (1, 1, Counts(0, 0, 1))
    assert (mid.samples, mid.score.node.f1) == (1, 1.0)
    assert (close.samples, close.score.node.f1) == (1, 1.0)
    assert sum(g.samples for g in report.by_nearness.values()) == 3  # "unmeasured" left out


@pytest.mark.parametrize(("similarity", "band"), [
    (-0.2, "<0.6"), (0.5999, "<0.6"), (0.6, "0.6-0.7"), (0.7, "0.7-0.8"), (0.7999, "0.7-0.8"),
    (0.8, ">=0.8"), (1.0, ">=0.8"), (1.0000002, ">=0.8")])
def test_nearness_bands(similarity: float, band: str):
    assert nearness_band(similarity) == band


def test_nearness_in_json_and_text():
    report = nearness_report()
    data = json.loads(json.dumps(report.to_json()))
    assert Report.from_json(data) == report
    assert list(data["by_nearness"]) == ["<0.6", "0.6-0.7", "0.7-0.8"]
    assert data["by_nearness"]["<0.6"]["invalid"] == 1
    assert data["records"][2]["nearest"] == {"example": "bank-close", "similarity": 0.75}
    assert data["records"][3]["nearest"] is None
    lines = report.format().splitlines()
    assert lines[1] == ("Nearest bank example (cosine of request shapes, as the planner "
                        "retrieves): median 0.600, max 0.750 (close ~ bank-close)")
    rows = {line[:16].strip(): line.split()[2:] for line in lines if line.startswith("nearest ")}
    assert list(rows) == ["nearest <0.6", "nearest 0.6-0.7", "nearest 0.7-0.8"]
    assert rows["nearest <0.6"][:2] == ["1", "100.0%"]


def test_a_report_without_nearness_still_reads():
    record = nearness_report().records[0].to_json()
    del record["nearest"]  # a report written before nearness was measured
    assert SampleRecord.from_json(record).nearest is None
    assert "Nearest bank example" not in shaped_report().format()
    assert shaped_report().by_nearness == {}


def test_nearest_in_is_the_banks_own_search_on_request_shapes():
    bank = PlanBank([
        BankExample("bank-a", 'Translate "hello world" to Italian',
                    [{"id": 0, "task": "translation", "dep": [], "args": {}}]),
        BankExample("bank-b", "Caption holiday.jpg and read the caption aloud.", []),
        BankExample("bank-c", "Which planet is the largest?", []),
    ])
    nearest = nearest_in(bank)
    for request in ['Translate "good night, sleep well" to Italian',
                    "Caption the photo lake_view.png and read the caption aloud.",
                    "Tell me a joke"]:
        ((example, similarity),) = bank.nearest(request, k=1)
        assert nearest(Sample(id="s", request=request)) == Nearest(example.id, similarity)
    # quoted texts and file names are masked, as the planner compares requests
    same = nearest(Sample(id="s", request='Translate "good night, sleep well" to Italian'))
    assert same.example == "bank-a" and same.similarity == pytest.approx(1.0, abs=1e-5)
