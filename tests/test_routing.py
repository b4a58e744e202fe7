"""Routing across several LLM endpoints: real HTTP to several local OpenAI-compatible
servers with their own latency, speed and failures; the configuration file; the policy
on its own."""

from __future__ import annotations

import itertools
import socket
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from hugginggpt.graph.context import Context
from hugginggpt.nodes.demand import tier_needed
from hugginggpt.tools.llm.config import (
    STRATEGIES,
    ConfigError,
    Endpoint,
    RoutingConfig,
    load_config,
    parse_config,
    routing_config,
)
from hugginggpt.tools.llm.router import DECAY_S, LATENCY_WINDOW, ROUTER, Router
from tests.conftest import benchmark, run
from tests.llm_server import ScriptedLLMServer

PLAN = {"subtasks": [
    {"id": 0, "task": "summarization", "dep": [], "args": {"text": "Some long text."}},
    {"id": 1, "task": "translation", "dep": [0], "args": {"text": "<GENERATED>-0",
                                                          "tgt_lang": "fr"}},
]}
TWO_STEPS = "Summarize this text and then translate the summary into French"


@pytest.fixture
def servers() -> Iterator[Callable[..., ScriptedLLMServer]]:
    """Start local OpenAI-compatible servers with the given character."""
    started: list[ScriptedLLMServer] = []

    def start(**character: Any) -> ScriptedLLMServer:
        server = ScriptedLLMServer(**character).start()
        server.defaults["planner"] = {"tool_args": PLAN, "tokens": 20}
        server.defaults["responder"] = {"content": "Done: a summary, in French.", "tokens": 8}
        started.append(server)
        return server

    yield start
    for server in started:
        server.stop()


@pytest.fixture
def ties_in_order(monkeypatch: pytest.MonkeyPatch) -> None:
    """Equally busy endpoints are taken in the configuration's order (in production
    ties are broken at random), so a test can say which one is tried first."""
    monkeypatch.setattr(ROUTER, "tie_break", itertools.count().__next__)


def _toml(path: Path, endpoints: list[dict[str, Any]], **routing: Any) -> str:
    def value(v: Any) -> str:
        if isinstance(v, str):
            return f'"{v}"'
        if isinstance(v, bool):
            return "true" if v else "false"
        if isinstance(v, list):
            return "[" + ", ".join(value(x) for x in v) + "]"
        return str(v)

    lines = ["[routing]", *(f"{k} = {value(v)}" for k, v in routing.items())]
    for endpoint in endpoints:
        lines += ["", "[[endpoints]]", *(f"{k} = {value(v)}" for k, v in endpoint.items())]
    path.write_text("\n".join(lines) + "\n")
    return str(path)


def _served(out: dict[str, Any], role: str) -> list[str]:
    return [c.endpoint for c in out["llm_calls"] if c.role == role and c.ok]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


# ------------------------------------------------------------------ real servers

def test_planning_goes_to_the_capable_endpoint_and_easy_calls_to_any(
        compiled, make_context, servers, tmp_path):
    fast = servers(ttft_s=0.0, tokens_per_s=400)
    strong = servers(ttft_s=0.15, tokens_per_s=60)
    config = _toml(tmp_path / "llms.toml", [
        {"name": "strong", "model": "big", "base_url": strong.url, "tier": "large",
         "cost_per_1m_input": 5.0, "cost_per_1m_output": 15.0},
        {"name": "fast", "model": "small", "base_url": fast.url, "tier": "small"},
    ])
    for n in range(3):
        out = run(compiled, make_context(llm_config=config, backend="dry-run"), TWO_STEPS,
                  thread=f"r{n}")
        assert out["status"] == "completed"
        assert _served(out, "planner") == ["strong"]
        assert _served(out, "responder")[0] in ("fast", "strong")
    assert len(strong.calls("planner")) == 3 and not fast.calls("planner")
    planner = next(c for c in out["llm_calls"] if c.role == "planner")
    assert (planner.tier, planner.need) == (3, 3)
    # streamed, so the first token was timed; priced from the configuration
    assert planner.ttft_s is not None and 0.1 < planner.ttft_s <= planner.latency_s
    assert planner.cost == pytest.approx((10 * 5.0 + 20 * 15.0) / 1e6)
    # the responder's first calls go to either (ties are broken at random): run until
    # fast has answered one, so both have a latency per token to compare
    for n in range(3, 20):
        if fast.calls("responder"):
            break
        run(compiled, make_context(llm_config=config, backend="dry-run"), TWO_STEPS,
            thread=f"r{n}")
    health = ROUTER.health()  # the latency per token that lowest-latency ranks on
    assert health["fast"]["per_token_s"] < health["strong"]["per_token_s"]
    assert health["fast"]["peak_s"] < health["strong"]["peak_s"]


def test_the_default_strategy_moves_calls_off_an_endpoint_that_is_slower(
        compiled, make_context, servers, tmp_path, ties_in_order, monkeypatch):
    monkeypatch.setattr(ROUTER, "clock", lambda: 0.0)  # no decay, however slow the runs
    slow = servers(ttft_s=0.3, tokens_per_s=100)
    fast = servers(ttft_s=0.0, tokens_per_s=400)
    config = _toml(tmp_path / "llms.toml", [  # slow listed first: ties go to it
        {"name": "slow", "model": "m", "base_url": slow.url, "tier": "large"},
        {"name": "fast", "model": "m", "base_url": fast.url, "tier": "large"},
    ])
    served = []
    for n in range(4):  # one call at a time: least-busy would always take slow
        out = run(compiled, make_context(llm_config=config, backend="dry-run"), TWO_STEPS,
                  thread=f"r{n}")
        assert out["status"] == "completed"
        served.append(_served(out, "planner") + _served(out, "responder"))
    # nothing measured: the configuration's order; then fast, not measured yet, is tried
    assert served[0] == ["slow", "fast"]
    assert served[1:] == [["fast", "fast"]] * 3  # measured faster per token: kept


def test_a_single_step_request_still_plans_on_a_medium_model_not_a_small_one():
    assert tier_needed("planner", request="Summarize this text") == 2
    assert tier_needed("planner", request=TWO_STEPS) == 3
    assert tier_needed("planner", request="caption it", files=["a.png", "b.wav"]) == 3
    assert tier_needed("planner", request="Summarize this text", attempt=2) == 3
    assert tier_needed("selector") == 1
    assert tier_needed("responder", plan_size=2) == 1
    assert tier_needed("responder", plan_size=5) == 2
    assert tier_needed("responder", plan_size=1, failures=1) == 2


def test_a_dead_endpoint_is_skipped_and_no_run_fails(
        compiled, make_context, servers, tmp_path, ties_in_order):
    live = servers(ttft_s=0.05, tokens_per_s=200)
    dead_url = f"http://127.0.0.1:{_free_port()}/v1"  # nothing listens there
    config = _toml(tmp_path / "llms.toml", [
        # listed first, so it is tried first until it is taken out
        {"name": "dead", "model": "m", "base_url": dead_url, "tier": "large"},
        {"name": "live", "model": "m", "base_url": live.url, "tier": "large"},
    ], failure_threshold=2, cooldown_s=600)
    outs = [run(compiled, make_context(llm_config=config, backend="dry-run"), TWO_STEPS,
                thread=f"d{n}") for n in range(4)]
    assert all(o["status"] == "completed" for o in outs)
    assert all(o["responder"].startswith("llm: live") for o in outs)
    tried_dead = [c for o in outs for c in o["llm_calls"] if c.endpoint == "dead"]
    # refused once: taken out at once (the breaker), whatever the failure threshold
    assert len(tried_dead) == 1 and not any(c.ok for c in tried_dead)
    assert "Connection" in tried_dead[0].error
    fallback = next(c for c in outs[0]["llm_calls"] if c.endpoint == "live")
    assert fallback.attempt == 2
    assert ROUTER.health()["dead"]["state"] == "out"


def test_a_slow_endpoint_times_out_and_the_call_falls_back(
        compiled, make_context, servers, tmp_path, ties_in_order):
    stuck = servers(ttft_s=3.0)
    live = servers()
    config = _toml(tmp_path / "llms.toml", [
        {"name": "stuck", "model": "m", "base_url": stuck.url, "tier": "large",
         "timeout_s": 0.5},
        {"name": "live", "model": "m", "base_url": live.url, "tier": "large"},
    ])
    started = time.monotonic()
    out = run(compiled, make_context(llm_config=config, backend="dry-run"), TWO_STEPS)
    assert out["status"] == "completed" and _served(out, "planner") == ["live"]
    timed_out = [c for c in out["llm_calls"] if c.endpoint == "stuck"]
    assert timed_out and "Timeout" in timed_out[0].error
    assert time.monotonic() - started < 5


def test_a_recovering_endpoint_comes_back(
        compiled, make_context, servers, tmp_path, ties_in_order):
    primary = servers()
    backup = servers(ttft_s=0.05, tokens_per_s=200)
    primary.down = True
    config = _toml(tmp_path / "llms.toml", [
        {"name": "primary", "model": "m", "base_url": primary.url, "tier": "large"},
        {"name": "backup", "model": "m", "base_url": backup.url, "tier": "large"},
    ], failure_threshold=1, cooldown_s=0.3)
    context = make_context(llm_config=config, backend="dry-run")

    first = run(compiled, context, TWO_STEPS, thread="a")
    assert first["status"] == "completed" and _served(first, "planner") == ["backup"]
    assert ROUTER.health()["primary"]["state"] == "out"

    primary.down = False
    time.sleep(0.4)  # the cooldown passes; the next routing decision starts a probe
    second = run(compiled, context, TWO_STEPS, thread="b")
    assert second["status"] == "completed"
    deadline = time.monotonic() + 5
    while ROUTER.health()["primary"]["state"] != "up" and time.monotonic() < deadline:
        time.sleep(0.05)
    assert ROUTER.health()["primary"]["state"] == "up"
    assert primary.calls("other"), "the probe reached the endpoint"

    third = run(compiled, context, TWO_STEPS, thread="c")
    assert _served(third, "planner") == ["primary"]


def test_a_flaky_endpoint_never_fails_a_run(
        compiled, make_context, servers, tmp_path, ties_in_order):
    flaky = servers(failure_rate=0.6, seed=3)
    steady = servers(ttft_s=0.02)
    config = _toml(tmp_path / "llms.toml", [
        {"name": "flaky", "model": "m", "base_url": flaky.url, "tier": "large"},
        {"name": "steady", "model": "m", "base_url": steady.url, "tier": "large"},
    ], failure_threshold=2, cooldown_s=0.2)
    outs = [run(compiled, make_context(llm_config=config, backend="dry-run"), TWO_STEPS,
                thread=f"f{n}") for n in range(8)]
    assert all(o["status"] == "completed" and o["responder"].startswith("llm:") for o in outs)
    calls = [c for o in outs for c in o["llm_calls"]]
    assert any(not c.ok for c in calls if c.endpoint == "flaky"), "faults were injected"
    assert ROUTER.health()["flaky"]["failures"] >= 1


def test_every_endpoint_failing_is_explained(compiled, make_context, servers, tmp_path):
    a, b = servers(), servers()
    a.down = b.down = True
    config = _toml(tmp_path / "llms.toml", [
        {"name": "a", "model": "m", "base_url": a.url},
        {"name": "b", "model": "m", "base_url": b.url},
    ])
    # planner="llm": with auto the offline planner would stand in (issue 14)
    out = run(compiled, make_context(llm_config=config, backend="dry-run", planner="llm"),
              TWO_STEPS)
    assert out["status"] == "aborted"
    assert "all 2 endpoints failed (4 attempts)" in out["abort_reason"]
    assert "a: " in out["abort_reason"] and "b: " in out["abort_reason"]
    assert out["abort_reason"].count("503 - endpoint down") == 4
    assert sorted(c.endpoint for c in out["llm_calls"]) == ["a", "a", "b", "b"]


def test_roles_may_be_restricted_to_some_endpoints(compiled, make_context, servers, tmp_path):
    planner_only, rest = servers(), servers()
    config = _toml(tmp_path / "llms.toml", [
        {"name": "p", "model": "m", "base_url": planner_only.url, "roles": ["planner"]},
        {"name": "r", "model": "m", "base_url": rest.url, "tier": "small",
         "roles": ["selector", "responder"]},
    ])
    out = run(compiled, make_context(llm_config=config, backend="dry-run"), "Summarize this")
    assert out["status"] == "completed"
    # the planner needed medium; only a large endpoint may plan, so it planned
    assert _served(out, "planner") == ["p"] and _served(out, "responder") == ["r"]


def test_the_strategy_can_be_overridden_per_run(compiled, make_context, servers, tmp_path):
    fast, strong = servers(), servers(ttft_s=0.05)
    config = _toml(tmp_path / "llms.toml", [
        {"name": "fast", "model": "m", "base_url": fast.url, "tier": "small"},
        {"name": "strong", "model": "m", "base_url": strong.url, "tier": "large"},
    ])
    out = run(compiled, make_context(llm_config=config, llm_routing="strongest",
                                     backend="dry-run"), TWO_STEPS)
    assert {c.endpoint for c in out["llm_calls"]} == {"strong"}


# ------------------------------------------------------------------ configuration

def test_toml_and_yaml_and_environment_configurations_agree(tmp_path, monkeypatch):
    endpoints = [
        {"name": "fast", "model": "qwen", "base_url": "http://127.0.0.1:1/v1", "tier": "small",
         "api_key_env": "FAST_KEY", "timeout_s": 4},
        {"name": "hf", "model": "hf:meta-llama/Llama-3.1-8B-Instruct", "tier": 3,
         "roles": ["planner"]},
    ]
    toml_path = _toml(tmp_path / "llms.toml", endpoints, strategy="least-busy", cooldown_s=5)
    yaml_path = tmp_path / "llms.yaml"
    yaml_path.write_text(
        "routing: {strategy: least-busy, cooldown_s: 5}\nendpoints:\n"
        "  - {name: fast, model: qwen, base_url: 'http://127.0.0.1:1/v1', tier: small,"
        " api_key_env: FAST_KEY, timeout_s: 4}\n"
        "  - {name: hf, model: 'hf:meta-llama/Llama-3.1-8B-Instruct', tier: 3,"
        " roles: [planner]}\n")
    from_toml, from_yaml = load_config(toml_path), load_config(yaml_path)
    assert from_toml == from_yaml
    assert [e.tier for e in from_toml.endpoints] == [1, 3]
    assert from_toml.for_role("selector") == [from_toml.endpoints[0]]

    import json

    monkeypatch.setenv("HUGGINGGPT_LLM_ENDPOINTS", json.dumps(endpoints))
    monkeypatch.setenv("HUGGINGGPT_LLM_ROUTING", "round-robin")
    from_env = routing_config(Context())
    assert from_env is not None
    assert from_env.endpoints == from_toml.endpoints and from_env.strategy == "round-robin"


def test_an_unknown_strategy_is_refused(monkeypatch):
    monkeypatch.setenv("HUGGINGGPT_LLM", "m")
    monkeypatch.setenv("HUGGINGGPT_LLM_ROUTING", "random")
    with pytest.raises(ConfigError, match=r"must be one of \[.*'round-robin'"):
        routing_config(Context())


def test_a_single_llm_is_still_the_simple_default(monkeypatch):
    monkeypatch.setenv("HUGGINGGPT_LLM", "gpt-4o-mini")
    config = routing_config(Context())
    assert config is not None and len(config.endpoints) == 1
    assert config.endpoints[0].model == "gpt-4o-mini" and config.endpoints[0].tier == 3
    assert routing_config(Context(offline=True)) is None
    assert routing_config(Context()) is not None
    monkeypatch.delenv("HUGGINGGPT_LLM")
    assert routing_config(Context()) is None


@pytest.mark.parametrize(("raw", "message"), [
    ({"endpoints": []}, "no endpoints configured"),
    ([{"name": "x"}], "endpoint 1 needs a model"),
    ([{"model": "m", "tier": "huge"}], "tier must be small, medium, large or 1-3"),
    ([{"model": "m", "speed": 3}], "unknown key(s) ['speed']"),
    ([{"model": "m", "roles": ["planner", "critic"]}], "unknown role(s) ['critic']"),
    ([{"model": "m"}, {"model": "m"}], "endpoint names must be unique"),
    ([{"model": "m", "api_key_env": "sk-abc123"}], "never put the key itself"),
    ([{"model": "m", "timeout_s": -1}], "timeout_s must be a positive number"),
    ({"endpoints": [{"model": "m"}], "routing": {"strategy": "random"}},
     "strategy must be one of"),
    ({"endpoints": [{"model": "m"}], "llms": []}, "unknown section(s) ['llms']"),
])
def test_invalid_configurations_are_refused_with_the_reason(raw, message):
    with pytest.raises(ConfigError) as caught:
        parse_config(raw, "llms.toml")
    assert message in str(caught.value) and "llms.toml" in str(caught.value)


def test_a_broken_configuration_file_stops_the_cli_with_the_reason(capsys, tmp_path):
    from hugginggpt.cli import main

    bad = tmp_path / "llms.toml"
    bad.write_text("[[endpoints]]\nmodel = 'm'\ntier = 'gigantic'\n")
    code = main(["run", "hi", "--llm-config", str(bad), "--workspace", str(tmp_path)])
    err = capsys.readouterr().err
    assert code == 2 and "tier must be small, medium, large or 1-3" in err
    code = main(["run", "hi", "--llm-config", str(tmp_path / "missing.toml"),
                 "--workspace", str(tmp_path)])
    assert code == 2 and "No such file" in capsys.readouterr().err
    unparsable = tmp_path / "llms.yaml"
    unparsable.write_text("endpoints: [unclosed\n")
    code = main(["run", "hi", "--llm-config", str(unparsable), "--workspace", str(tmp_path)])
    assert code == 2 and "does not parse" in capsys.readouterr().err


def test_credentials_in_a_url_are_never_shown():
    endpoint = Endpoint(name="e", model="m", base_url="https://user:secret@llm.example/v1")
    assert "secret" not in endpoint.label and "llm.example" in endpoint.label
    from hugginggpt.graph.recorded import settings_of

    settings = settings_of(Context(llm_base_url="https://user:secret@llm.example/v1"))
    assert "secret" not in str(settings)


# ------------------------------------------------------------------ the policy alone

def _config(*endpoints: Endpoint, **settings: Any) -> RoutingConfig:
    return RoutingConfig(endpoints=endpoints, **settings)


def _reply(router: Router, endpoint: Endpoint, latency_s: float, tokens: int = 10) -> None:
    router.succeeded(router.begin(endpoint), completion_tokens=tokens, latency_s=latency_s)


def test_least_busy_takes_the_capable_endpoint_with_the_fewest_calls_in_flight():
    router = Router(tie_break=itertools.count().__next__)
    small = Endpoint(name="small", model="m", tier=1)
    a, b = (Endpoint(name=n, model="m", tier=3) for n in "ab")
    config = _config(small, a, b, strategy="least-busy")
    assert router.order(config, "planner", 3) == [a, b, small]  # tie: listed first
    tickets = [router.begin(a), router.begin(a), router.begin(b)]
    assert router.order(config, "planner", 3) == [b, a, small]  # small: a last resort
    for ticket in tickets[:2]:
        router.succeeded(ticket, completion_tokens=5, latency_s=0.2)
    assert router.order(config, "planner", 3)[0] == a
    assert router.order(config, "selector", 1)[0] == small  # as free: listed first


def test_peak_ewma_sends_the_next_call_to_the_equally_busy_endpoint_that_was_faster():
    router = Router(tie_break=itertools.count().__next__)
    slow, fast = (Endpoint(name=n, model="m", tier=3) for n in ("slow", "fast"))
    config = _config(slow, fast)  # peak-ewma: the default
    _reply(router, slow, 2.0)  # 0.2 s per token
    _reply(router, fast, 0.5)  # 0.05 s per token
    router.begin(slow), router.begin(fast)  # one call in flight each
    assert router.order(config, "planner", 3) == [fast, slow]  # least-busy: slow, listed first
    router.begin(fast)
    assert router.order(config, "planner", 3) == [fast, slow]  # 0.05 x 3 < 0.2 x 2
    for _ in range(6):
        router.begin(fast)
    assert router.order(config, "planner", 3) == [slow, fast]  # 0.05 x 9 > 0.2 x 2
    # a slower reply counts at once, for every role's calls
    _reply(router, fast, 5.0)
    assert router.order(config, "planner", 3) == [slow, fast]
    assert router.order(config, "selector", 1) == [slow, fast]
    assert router.health()["fast"]["peak_s"] == pytest.approx(0.5, rel=0.01)


def test_peak_ewma_tries_a_slow_endpoint_again_once_its_peak_has_decayed():
    now = [0.0]
    router = Router(tie_break=itertools.count().__next__, clock=lambda: now[0])
    slow, fast = (Endpoint(name=n, model="m", tier=3) for n in ("slow", "fast"))
    config = _config(slow, fast)
    _reply(router, slow, 10.0)  # 1 s per token: 10x slower
    _reply(router, fast, 1.0)
    assert router.order(config, "planner", 3) == [fast, slow]
    now[0] += 4 * DECAY_S  # four time constants: slow's peak is 1/55 of what it was...
    _reply(router, fast, 1.0)  # ...while fast keeps answering as fast as before
    assert router.order(config, "planner", 3) == [slow, fast]
    _reply(router, slow, 1.0)  # recovered: as fast, so one call in flight tips it
    router.begin(fast)
    assert router.order(config, "planner", 3) == [slow, fast]
    _reply(router, slow, 10.0)  # slow again: the peak counts at once, whatever the decay
    assert router.order(config, "planner", 3) == [fast, slow]
    # the default time constant is Finagle's and Linkerd's
    assert DECAY_S == 10.0


def test_peak_ewma_tries_an_unmeasured_endpoint_then_counts_it_as_average():
    router = Router(tie_break=itertools.count().__next__)
    a, b, new = (Endpoint(name=n, model="m", tier=3) for n in ("a", "b", "new"))
    config = _config(a, b, new)
    _reply(router, a, 1.0)  # 0.1 s per token
    _reply(router, b, 2.5)  # 0.25 s per token
    assert router.order(config, "planner", 3) == [new, a, b]  # idle, never measured: tried
    router.begin(new)  # its first call is out: now the average, 0.175
    assert router.order(config, "planner", 3) == [a, b, new]  # 0.1, 0.25, 0.175 x 2
    router.begin(a), router.begin(a)
    assert router.order(config, "planner", 3) == [b, a, new]  # 0.25, 0.1 x 3, 0.175 x 2
    # before any reply, peak-ewma is least-busy
    fresh = Router(tie_break=itertools.count().__next__)
    fresh.begin(a), fresh.begin(b)
    assert fresh.order(config, "planner", 3) == [new, a, b]
    fresh.begin(new), fresh.begin(new)
    assert fresh.order(config, "planner", 3) == [a, b, new]


def test_weaker_endpoints_are_only_a_last_resort_for_hard_calls():
    router = Router(tie_break=itertools.count().__next__)
    small = Endpoint(name="small", model="m", tier=1)
    large = Endpoint(name="large", model="m", tier=3)
    medium = Endpoint(name="medium", model="m", tier=2)
    config = _config(small, large, medium)
    for _ in range(3):
        router.begin(large)  # busy, and still the only capable one
    assert router.order(config, "planner", 3) == [large, medium, small]
    assert router.order(config, "selector", 1) == [small, medium, large]


def test_naive_strategies_for_comparison():
    router = Router()
    a, b, c = (Endpoint(name=n, model="m", tier=t) for n, t in (("a", 1), ("b", 3), ("c", 2)))
    rr = _config(a, b, c, strategy="round-robin")
    firsts = [router.order(rr, "planner", 3)[0].name for _ in range(6)]
    assert firsts == ["a", "b", "c", "a", "b", "c"]
    assert router.order(_config(a, b, c, strategy="strongest"), "selector", 1) == [b, c, a]


def test_lowest_latency_averages_the_last_replies_per_token_and_tries_the_unmeasured():
    router = Router()
    a, b, c = (Endpoint(name=n, model="m", tier=3) for n in "abc")
    config = _config(a, b, c, strategy="lowest-latency")
    _reply(router, a, 1.0)  # 0.1 s per token
    _reply(router, b, 2.0)  # 0.2 s per token
    assert router.order(config, "planner", 3) == [c, a, b]  # c not measured yet
    _reply(router, c, 5.0, tokens=100)  # 0.05 s per token
    assert router.order(config, "planner", 3) == [c, a, b]
    for _ in range(LATENCY_WINDOW):  # b's slow first reply leaves its window
        _reply(router, b, 1.0, tokens=100)
    assert router.order(config, "planner", 3) == [b, c, a]


def test_consecutive_failures_take_an_endpoint_out_and_a_probe_brings_it_back():
    router = Router(tie_break=itertools.count().__next__)
    flaky = Endpoint(name="flaky", model="m", tier=3)
    other = Endpoint(name="other", model="m", tier=3)
    config = _config(flaky, other, failure_threshold=2, cooldown_s=0.1)
    probes: list[str] = []
    router.prober = lambda endpoint: probes.append(endpoint.name)
    router.failed(router.begin(flaky), config, "boom")
    assert router.order(config, "planner", 3)[0] == flaky  # one failure is not enough
    router.failed(router.begin(flaky), config, "boom")
    assert router.order(config, "planner", 3) == [other, flaky]
    assert router.health()["flaky"]["state"] == "out"
    time.sleep(0.15)
    assert router.order(config, "planner", 3) == [other, flaky]  # probing, still out
    deadline = time.monotonic() + 2
    while router.health()["flaky"]["state"] != "up" and time.monotonic() < deadline:
        time.sleep(0.01)
    assert probes == ["flaky"]
    assert router.order(config, "planner", 3)[0] == flaky


def test_a_failed_probe_doubles_the_cooldown():
    router = Router()
    down = Endpoint(name="down", model="m", tier=3)
    config = _config(down, Endpoint(name="up", model="m", tier=3),
                     failure_threshold=1, cooldown_s=0.05)

    def refuse(endpoint: Endpoint) -> None:
        raise ConnectionError("still down")

    router.prober = refuse
    router.failed(router.begin(down), config, "boom")
    time.sleep(0.06)
    router.order(config, "planner", 3)  # starts the probe
    deadline = time.monotonic() + 2
    while router.health()["down"]["state"] == "probing" and time.monotonic() < deadline:
        time.sleep(0.01)
    health = router.health()["down"]
    assert health["state"] == "out" and "still down" in health["last_error"]
    assert router._stats[down.key].cooldown_s == pytest.approx(0.1)


def test_the_routing_benchmark_runs(capsys):
    """A small run of benchmarks/routing.py (its targets are for the full size): every
    strategy on the ``slowdown`` fleet, the second run after the slowdown, which
    ``strongest`` (always endpoint a) never meets and ``round-robin`` does."""
    routing = benchmark("routing")
    routing.main(["--runs", "2", "--rounds", "1", "--concurrency", "1", "--scenario",
                  "slowdown"])
    out = capsys.readouterr().out
    table = out.split("\nscenario slowdown:")[1]
    lines = table.splitlines()[2:2 + len(STRATEGIES)]
    rows = {line.split()[0]: line.split() for line in lines}
    assert sorted(rows) == sorted(STRATEGIES)
    assert all(row[4] == "2/2" for row in rows.values())
    assert rows["strongest"][-1] == "0%" and rows["round-robin"][-1] != "0%"
    assert "best other: " in table
    assert "peak-ewma median p95 at most 5% above the best other strategy's in every " \
           "scenario (slowdown " in out


def test_an_endpoint_dying_mid_stream_falls_back_or_is_explained(
        compiled, make_context, servers, tmp_path, ties_in_order):
    dying, live = servers(tokens_per_s=200), servers()
    dying.die_mid_stream = True
    alone = _toml(tmp_path / "alone.toml", [
        {"name": "dying", "model": "m", "base_url": dying.url}])
    out = run(compiled, make_context(llm_config=alone, backend="dry-run", planner="llm"),
              TWO_STEPS, thread="alone")  # with auto the offline planner would stand in
    assert out["status"] == "aborted" and "the LLM planner failed" in out["abort_reason"]
    assert out["llm_calls"][0].endpoint == "dying" and not out["llm_calls"][0].ok

    ROUTER.reset()  # forget the failure
    both = _toml(tmp_path / "both.toml", [
        {"name": "dying", "model": "m", "base_url": dying.url},
        {"name": "live", "model": "m", "base_url": live.url}])
    out = run(compiled, make_context(llm_config=both, backend="dry-run"), TWO_STEPS,
              thread="both")
    assert out["status"] == "completed" and _served(out, "planner") == ["live"]
    # listed first and as free as the live one: tried twice (the most per call), then live
    assert [c.ok for c in out["llm_calls"] if c.role == "planner"] == [False, False, True]


def test_hugging_face_and_openai_compatible_endpoints_mix(
        compiled, make_context, servers, tmp_path, monkeypatch):
    """One configuration, two client stacks: planning on a Hugging Face endpoint
    (langchain-huggingface, streamed as well), answers on an OpenAI-compatible server."""
    monkeypatch.delenv("HF_HUB_OFFLINE")
    monkeypatch.setattr("huggingface_hub.constants.HF_HUB_OFFLINE", False)
    hf_server, openai_server = servers(ttft_s=0.05), servers()
    config = _toml(tmp_path / "llms.toml", [
        {"name": "tgi", "model": f"hf:{hf_server.url.removesuffix('/v1')}", "tier": "large",
         "roles": ["planner"]},
        {"name": "small", "model": "m", "base_url": openai_server.url, "tier": "small",
         "roles": ["selector", "responder"]},
    ])
    out = run(compiled, make_context(llm_config=config, backend="dry-run"), TWO_STEPS)
    assert out["status"] == "completed", out["abort_reason"]
    assert _served(out, "planner") == ["tgi"] and _served(out, "responder") == ["small"]
    planner = next(c for c in out["llm_calls"] if c.role == "planner")
    # streamed through huggingface_hub: the first token is timed (the server's 50 ms
    # before it), and the usage of the last chunk is kept
    assert planner.ttft_s is not None and planner.ttft_s >= 0.05
    assert planner.prompt_tokens == 10
    assert not openai_server.calls("planner") and not hf_server.calls("responder")
