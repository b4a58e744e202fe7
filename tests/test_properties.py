"""Property-based tests of the plan validator and the argument resolver.

Plans: generated valid DAGs (random task types, dependencies only on earlier subtasks,
``<GENERATED>-k`` only where subtask k produces the kind the argument needs, several of
them combined with text in text arguments) always pass
:func:`hugginggpt.nodes.planning.validation.validate_plan`; the same plans with one random corruption are
always rejected, with a problem that names what is wrong.

Paths: generated file arguments (``..``, absolute paths, links in and out of the
workspace, unicode look-alikes, NUL bytes) never resolve to a file outside the workspace
unless it is an attached one, and a refusal is always an :class:`ArgumentError`.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hugginggpt.nodes.execution.arguments import _resolve_file, resolve_args
from hugginggpt.nodes.execution.jobs import Job
from hugginggpt.nodes.planning.validation import validate_plan
from hugginggpt.tools.experts import ArgumentError, ArtifactStore
from hugginggpt.tools.experts.tasks import TaskType, get_task_type, task_types

SETTINGS = settings(max_examples=200, deadline=None,
                    suppress_health_check=[HealthCheck.function_scoped_fixture])
TASKS = task_types()
DATA_KINDS = ("text", "image", "audio", "video", "table")
SUFFIXES = {"image": [".png", ".jpg", ".webp"], "audio": [".wav", ".mp3", ".flac"],
            "video": [".mp4", ".webm"], "table": [".csv", ".xlsx"]}
_words = st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs", "Cc")),
                 max_size=30).filter(lambda s: "<GENERATED>" not in s)


def _text_literal() -> st.SearchStrategy[str]:
    """Text that reads as text: words with a space, or a word without a media suffix."""
    return st.one_of(
        st.builds(lambda a, b: f"{a} {b}", _words, _words),
        st.sampled_from(["hello", "Bonjour à tous", "report.txt", "3.14", "", "日本語の文"]),
    )


def _file_literal(kind: str) -> st.SearchStrategy[str]:
    name = st.text(alphabet="abcdefghij_-0123456789", min_size=1, max_size=8)
    suffix = st.sampled_from(SUFFIXES[kind])
    path = st.builds(lambda n, s: n + s, name, suffix)
    return st.one_of(path, st.builds(lambda p: f"https://files.example/{p}", path),
                     st.builds(lambda p: f"inputs/{p}", path))


def _task_name(task: TaskType) -> st.SearchStrategy[str]:
    """The task's name as a planner may write it: exact, an alias, other case or spacing."""
    names = [task.name, *task.aliases]
    return st.sampled_from(names).flatmap(lambda n: st.sampled_from(
        [n, n.upper(), n.replace("-", " "), n.replace("-", "_").title()]))


@st.composite
def valid_plans(draw: st.DrawFn, min_size: int = 1, max_size: int = 8) -> list[dict[str, Any]]:
    size = draw(st.integers(min_size, max_size))
    ids = sorted(draw(st.sets(st.integers(0, 50), min_size=size, max_size=size)))
    plan: list[dict[str, Any]] = []
    for position, sid in enumerate(ids):
        task = draw(st.sampled_from(TASKS))
        earlier = plan[:position]
        deps: set[int] = set()
        args: dict[str, str] = {}
        for arg in task.args:
            if not arg.required and draw(st.booleans()):
                continue
            if arg.is_data:
                sources = [p["id"] for p in earlier
                           if get_task_type(p["task"]).output_for(str(arg.kind)) is not None]
                if sources and draw(st.booleans()):
                    source = draw(st.sampled_from(sources))
                    deps.add(source)
                    args[arg.name] = f"<GENERATED>-{source}"
                elif arg.kind == "text" and (texts := [
                        p["id"] for p in earlier
                        if get_task_type(p["task"]).output_for("text") is not None]) \
                        and draw(st.booleans()):  # several outputs combined with text
                    combined = draw(st.lists(st.sampled_from(texts), min_size=1, max_size=3))
                    deps.update(combined)
                    args[arg.name] = draw(_words) + " " + " and ".join(
                        f"<GENERATED>-{k}" for k in combined)
                elif arg.kind == "text":
                    args[arg.name] = draw(_text_literal())
                else:
                    args[arg.name] = draw(_file_literal(str(arg.kind)))
            else:
                args[arg.name] = draw(st.sampled_from(["fr", "de", "positive, negative", "en"]))
        if earlier and draw(st.booleans()):  # a dependency without a reference is fine
            deps.add(draw(st.sampled_from([p["id"] for p in earlier])))
        plan.append({"id": sid, "task": draw(_task_name(task)),
                     "dep": sorted(deps) if deps or draw(st.booleans()) else [-1],
                     "args": args})
    return plan


@SETTINGS
@given(valid_plans())
def test_generated_valid_dags_always_pass(plan):
    subtasks, problems = validate_plan(plan, max_subtasks=8)
    assert problems == []
    assert [s.id for s in subtasks] == [p["id"] for p in plan]
    for item, subtask in zip(plan, subtasks, strict=True):
        assert subtask.task == get_task_type(item["task"]).name  # normalised
        assert subtask.dep == [d for d in item["dep"] if d != -1]


# ----------------------------------------------------------------------------------------
# One corruption at a time; each says which words the problem must contain.

Corruption = tuple[list[dict[str, Any]], str]


def _copy(plan: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{**p, "dep": [d for d in p["dep"] if d != -1], "args": dict(p["args"])}
            for p in plan]


def _type(item: dict[str, Any]) -> TaskType:
    found = get_task_type(item["task"])
    assert found is not None
    return found


CORRUPTIONS = ["cycle", "self-dep", "dangling-dep", "forward-dep", "duplicate-id",
               "unknown-task", "missing-arg", "unknown-arg", "bad-reference",
               "wrong-kind-reference", "parameter-reference", "embedded-reference",
               "embedded-bad-reference", "embedded-no-text-form", "embedded-in-parameter",
               "wrong-literal", "non-string-arg", "nul-byte", "negative-id", "too-many"]


@st.composite
def corrupted_plans(draw: st.DrawFn, kind: str) -> tuple[list[dict[str, Any]], str]:
    """A valid plan with one corruption of ``kind``, and what the problem must say."""
    two = kind in ("cycle", "duplicate-id")
    plan = _copy(draw(valid_plans(min_size=2 if two else 1, max_size=7)))
    n = len(plan)
    ids = [p["id"] for p in plan]
    fresh = max(ids) + 1  # the id of an appended subtask
    i = draw(st.integers(0, n - 1))
    item = plan[i]
    task = _type(item)
    if kind == "cycle":
        j, k = sorted(draw(st.lists(st.integers(0, n - 1), min_size=2, max_size=2,
                                    unique=True)))
        plan[j]["dep"].append(plan[k]["id"])
        plan[k]["dep"].append(plan[j]["id"])
        return plan, "the dependencies form a cycle"
    if kind == "self-dep":
        item["dep"].append(item["id"])
        return plan, f"cycle: {item['id']} -> {item['id']}"
    if kind == "dangling-dep":
        missing = max(ids) + draw(st.integers(1, 1000))
        item["dep"].append(missing)
        return plan, f"depends on subtask {missing}, which does not exist"
    if kind == "unknown-task":
        name = draw(st.text(min_size=1, max_size=20).filter(
            lambda t: t.strip() and get_task_type(t) is None and "\x00" not in t))
        item["task"] = name
        return plan, "unknown task type"
    if kind == "missing-arg":
        required = [a.name for a in task.args if a.required]
        name = draw(st.sampled_from(required))
        item["args"].pop(name, None)
        return plan, f"missing required argument {name!r}"
    if kind == "bad-reference":
        data = [a for a in task.args if a.is_data]
        arg = draw(st.sampled_from(data))
        target = draw(st.integers(0, 1000).filter(lambda t: t not in item["dep"]))
        item["args"][arg.name] = f"<GENERATED>-{target}"
        return plan, f"uses <GENERATED>-{target} but {target} is not in its dep list"
    if kind == "unknown-arg":
        name = draw(st.text(min_size=1, max_size=12).filter(lambda t: task.arg(t) is None))
        item["args"][name] = "x"
        return plan, "unknown argument"
    if kind == "non-string-arg":
        name = draw(st.sampled_from([a.name for a in task.args]))
        item["args"][name] = draw(st.sampled_from([None, {"path": "/etc/passwd"}, [[1]],
                                                   True, [None]]))
        return plan, f"args.{name}: Input should be a valid string"
    if kind == "nul-byte":
        name = draw(st.sampled_from([a.name for a in task.args]))
        item["args"][name] = draw(_words) + "\x00" + draw(_words)
        return plan, f"argument {name!r} contains a NUL byte"
    if kind == "negative-id":
        item["id"] = draw(st.integers(-1000, -1))
        return plan, "greater than or equal to 0"
    if kind == "too-many":
        extra = draw(st.integers(9 - n, 30))
        plan += [{"id": 100 + e, "task": "summarization", "args": {"text": "x"}}
                 for e in range(extra)]
        return plan, "at most 8 are allowed"
    if kind == "embedded-reference":  # in a file argument: a file is no part of a text
        target = draw(st.sampled_from([t for t in TASKS if any(a.is_data and a.kind != "text"
                                                               for a in t.args)]))
        arg = draw(st.sampled_from([a for a in target.args
                                    if a.is_data and a.kind != "text"]))
        plan.append({"id": fresh, "task": target.name, "dep": [item["id"]],
                     "args": {arg.name: f"{draw(_words)} <GENERATED>-{item['id']} and more"}})
        return plan, f"reference to {'an' if arg.kind[0] in 'aeiou' else 'a'} {arg.kind} " \
                     "must be the whole value"
    if kind == "embedded-bad-reference":  # in a text argument, not among the dependencies
        target = draw(st.integers(0, 1000))
        plan.append({"id": fresh, "task": "summarization", "dep": [],
                     "args": {"text": f"{draw(_words)} <GENERATED>-{target} and more"}})
        return plan, f"embeds <GENERATED>-{target} but {target} is not in its dep list []"
    if kind == "embedded-no-text-form":
        target = draw(st.sampled_from([t for t in TASKS if t.output_for("text") is None]))
        del plan[6:]  # room for two more subtasks (the last one is nobody's dependency)
        plan.append({"id": fresh, "task": target.name, "dep": [],
                     "args": {a.name: draw(_file_literal(str(a.kind))) if a.kind != "text"
                              else "x" for a in target.args if a.required}})
        plan.append({"id": fresh + 1, "task": "summarization", "dep": [fresh],
                     "args": {"text": f"Describe {draw(_words)} <GENERATED>-{fresh}"}})
        return plan, f"embeds <GENERATED>-{fresh}, but subtask {fresh} ({target.name})"
    if kind == "embedded-in-parameter":
        target = draw(st.sampled_from([t for t in TASKS if any(not a.is_data for a in t.args)]))
        arg = draw(st.sampled_from([a for a in target.args if not a.is_data]))
        plan.append({"id": fresh, "task": target.name, "dep": [item["id"]],
                     "args": {arg.name: f"fr <GENERATED>-{item['id']}"}})
        return plan, f"argument {arg.name!r} is a parameter and cannot contain <GENERATED>-"
    if kind == "wrong-literal":
        data = [a for a in task.args if a.is_data]
        arg = draw(st.sampled_from(data))
        if arg.kind == "text":  # a text file (a .csv) is a text; any other file is not
            kinds = [k for k in SUFFIXES if k != "table"]
            item["args"][arg.name] = draw(_file_literal(draw(st.sampled_from(kinds))))
        else:
            item["args"][arg.name] = draw(st.sampled_from(
                ["notes.txt", "a photo of a cat", "hello"] +
                [f"x{s}" for k, ss in SUFFIXES.items() if k != arg.kind for s in ss]))
        return plan, f"argument {arg.name!r} needs {arg.kind}, but"
    if kind == "duplicate-id":
        i = draw(st.integers(1, n - 1))
        j = draw(st.integers(0, i - 1))
        plan[i]["id"] = plan[j]["id"]
        return plan, f"subtask id {plan[j]['id']} is used twice"
    if kind == "forward-dep":  # on a subtask listed later, which needs nothing: no cycle
        plan.append({"id": fresh, "task": "summarization", "dep": [], "args": {"text": "x"}})
        item["dep"].append(fresh)
        return plan, f"depends on subtask {fresh}, which comes after it"
    if kind == "wrong-kind-reference":
        pairs = [(t, a) for t in TASKS for a in t.args
                 if a.is_data and task.output_for(str(a.kind)) is None]
        target, arg = draw(st.sampled_from(pairs))
        plan.append({"id": fresh, "task": target.name, "dep": [item["id"]],
                     "args": {arg.name: f"<GENERATED>-{item['id']}"}})
        return plan, f"argument {arg.name!r} needs {arg.kind}, but subtask {item['id']}"
    assert kind == "parameter-reference", kind
    target = draw(st.sampled_from([t for t in TASKS if any(not a.is_data for a in t.args)]))
    arg = draw(st.sampled_from([a for a in target.args if not a.is_data]))
    plan.append({"id": fresh, "task": target.name, "dep": [item["id"]],
                 "args": {arg.name: f"<GENERATED>-{item['id']}"}})
    return plan, f"argument {arg.name!r} is a parameter and cannot be <GENERATED>-"


@pytest.mark.parametrize("kind", CORRUPTIONS)
@settings(SETTINGS, max_examples=40)
@given(data=st.data())
def test_one_corruption_is_always_rejected_with_a_reason_that_names_it(kind, data):
    plan, expected = data.draw(corrupted_plans(kind))
    subtasks, problems = validate_plan(plan, max_subtasks=8)
    assert problems, f"{kind} was not noticed"
    assert all(isinstance(p, str) and p.strip() for p in problems)
    assert any(expected in p for p in problems), (kind, expected, problems)


# ----------------------------------------------------------------------------------------
# Paths

@dataclass(frozen=True)
class Layout:
    root: Path
    workspace: Path
    outside: Path
    attached: tuple[str, ...]
    """What an example may attach: a regular file, and a link to a file it may not read."""


@pytest.fixture(scope="module")
def layout(tmp_path_factory: pytest.TempPathFactory) -> Layout:
    root = tmp_path_factory.mktemp("paths").resolve()
    ws, out = root / "workspace", root / "outside"
    (ws / "sub").mkdir(parents=True)
    out.mkdir()
    (ws / "a.png").write_bytes(b"a")
    (ws / "sub" / "b.png").write_bytes(b"b")
    (ws / "ünï.png").write_bytes(b"u")
    (out / "secret.png").write_bytes(b"secret")
    (out / "att.png").write_bytes(b"attached")
    os.symlink(ws / "a.png", ws / "in_link")
    os.symlink(out / "secret.png", ws / "out_link")
    os.symlink("../outside", ws / "dir_link")
    os.symlink("/dev/null", ws / "dev_link")
    os.symlink(out / "secret.png", out / "att_link")
    os.symlink(out / "att.png", ws / "to_attached")
    os.mkfifo(ws / "pipe")
    (ws.parent / "workspace-evil").mkdir()
    (ws.parent / "workspace-evil" / "a.png").write_bytes(b"evil")
    return Layout(root, ws, out, (str(out / "att.png"), str(out / "att_link")))


SEGMENTS = ["..", ".", "", "a.png", "sub", "b.png", "ünï.png", "in_link", "out_link",
            "dir_link", "dev_link", "to_attached", "pipe", "outside", "secret.png",
            "att.png", "att_link", "workspace", "workspace-evil", "\uff0e\uff0e", "~",
            "\u202e", "\x00", "..\\..", "%2e%2e", "/"]


@st.composite
def path_values(draw: st.DrawFn, layout: Layout) -> str:
    parts = draw(st.lists(st.sampled_from(SEGMENTS) | st.text(max_size=4), max_size=7))
    prefix = draw(st.sampled_from(["", "/", f"{layout.workspace}/", f"{layout.outside}/",
                                   f"{layout.root}/", "/etc/", "/dev/", "./", "../"]))
    return prefix + "/".join(parts)


def _job(layout: Layout, files: list[str], **fields: Any) -> Job:
    return Job(**({"id": 1, "task": "image-classification", "dep": [], "args": {},
                   "candidates": [], "no_model_reason": "", "files": files,
                   "workspace": str(layout.workspace), "thread_id": "t", "board": "",
                   "timeout_s": 1.0, "retries": 0, "backoff_s": 0.0, "latency_scale": 0.0,
                   "max_models": 1} | fields))


def _assert_safe(path: Path, layout: Layout, files: list[str]) -> None:
    """A regular file, links followed, inside the workspace or attached as itself (an
    attached link counts only through its target)."""
    attached = {Path(f) for f in files if not os.path.islink(f)}
    assert path == Path(os.path.realpath(path))
    assert path.is_file() and not path.is_symlink()
    assert path.is_relative_to(layout.workspace) or path in attached, (path, files)
    assert path.read_bytes() not in (b"secret", b"evil")


@SETTINGS
@given(data=st.data())
def test_resolved_paths_never_leave_the_workspace_unless_attached(layout, data):
    value = data.draw(path_values(layout))
    files = data.draw(st.lists(st.sampled_from(layout.attached), unique=True, max_size=2))
    store = ArtifactStore(layout.workspace, "t")
    try:
        path = _resolve_file(value, _job(layout, files), store)
    except ArgumentError as exc:
        assert str(exc).strip()
        return
    _assert_safe(path, layout, files)


@SETTINGS
@given(data=st.data())
def test_resolve_args_gives_tools_only_safe_paths(layout, data):
    value = data.draw(path_values(layout))
    files = data.draw(st.lists(st.sampled_from(layout.attached), unique=True, max_size=2))
    job = _job(layout, files, task="visual-question-answering",
               args={"image": value, "question": value})
    try:
        args = resolve_args(job, {}, ArtifactStore(layout.workspace, "t"))
    except ArgumentError as exc:  # refusing is safe; it must say what was refused
        assert "'image'" in str(exc) or "file" in str(exc), str(exc)
        return
    _assert_safe(args["image"], layout, files)
    assert args["question"] == value  # text stays text, never a file


@SETTINGS
@given(data=st.data())
def test_artifact_refs_resolve_only_inside_the_store(layout, data):
    store = ArtifactStore(layout.workspace, "t")
    store.folder.mkdir(parents=True, exist_ok=True)
    (store.folder / "kept.png").write_bytes(b"k")
    value = data.draw(st.one_of(
        path_values(layout),
        st.builds(lambda v: f"artifacts/t/{v}", path_values(layout)),
        st.just("artifacts/t/kept.png")))
    ref = {"artifact_id": "x", "kind": "image", "path": value}
    try:
        path = store.resolve(ref)
    except ArgumentError as exc:
        assert "artifact" in str(exc)
        return
    assert path == Path(os.path.realpath(path)) and path.is_file()
    assert path.is_relative_to(store.folder)
