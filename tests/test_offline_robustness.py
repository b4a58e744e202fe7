"""The offline planner on real user requests (TaskBench's Hugging Face domain): every one
ends in a valid plan or a clear "cannot plan this offline", never an exception."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hugginggpt.nodes.planning.bank import load_bank
from hugginggpt.nodes.planning.offline import CannotPlanOffline, offline_plan
from hugginggpt.nodes.planning.validation import validate_plan

REQUESTS = (Path(__file__).resolve().parents[2] / "shared" / "data" / "taskbench-huggingface"
            / "user_requests.json")
STRIDE = 57
"""Every 57th request (about 130), spread over the file: the test embeds each request
several times, and it must finish within its timeout while another job keeps both
CPUs busy (every 19th, about 400, did not)."""


def test_taskbench_requests_get_a_valid_plan_or_a_clear_refusal():
    if not REQUESTS.is_file():
        pytest.skip(f"TaskBench requests not found at {REQUESTS} (they live in ../shared)")
    lines = REQUESTS.read_text(encoding="utf-8").splitlines()
    requests = [json.loads(line)["user_request"] for line in lines[::STRIDE]]
    bank = load_bank()
    planned = refused = 0
    for request in requests:
        try:
            found = offline_plan(request, [], bank, max_subtasks=10)
        except CannotPlanOffline as exc:
            assert str(exc).startswith("cannot plan this request offline")
            refused += 1
            continue
        _, problems = validate_plan(found.items, max_subtasks=10)
        assert problems == [], (request, found.items, problems)
        planned += 1
    assert planned + refused == len(requests) > 120
    print(f"{planned} planned, {refused} refused of {len(requests)} TaskBench requests")
    assert planned >= 0.9 * len(requests)  # most real requests are within the bank's reach
