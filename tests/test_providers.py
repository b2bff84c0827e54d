"""The OpenAI and Anthropic providers, and `abstaingen models check`, against the stand-in model
server (tests/standin: a fixture on 127.0.0.1 that speaks both HTTP APIs to the real SDKs)."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import anyio
import pytest
from standin import Answer, Delay, Raw, Refusal, StandIn, Status, Truncated

from abstaingen.errors import AbstaingenError
from abstaingen.flows import cli
from abstaingen.providers import (
    ModelConfig,
    ProviderConfig,
    ProviderError,
    StructuredReply,
    StructuredRequest,
    build_provider,
)
from abstaingen.providers.calls import BudgetExhausted, Caller, ProviderUnavailable, ResponseCache

pytestmark = pytest.mark.component

KEY = "sk-standin-not-a-real-key"
REQUEST = StructuredRequest(
    system="You write test data.", user="Give a city.", schema_name="city",
    json_schema={"type": "object", "additionalProperties": False, "required": ["name"],
                 "properties": {"name": {"type": "string"}}})
KINDS = ["openai", "anthropic", "openai_compatible"]


def endpoint(standin: StandIn, kind: str, **settings: object) -> ProviderConfig:
    base = standin.anthropic_base_url if kind == "anthropic" else standin.openai_base_url
    return ProviderConfig.model_validate({"kind": kind, "base_url": base, "api_key_env": "STANDIN_KEY",
                                          "max_retries": 2, **settings})


MODEL = ModelConfig(name="stand-in-1", provider="standin", family="standin", input_usd_per_mtok=1.0,
                    output_usd_per_mtok=4.0)


def ask(provider: ProviderConfig, request: StructuredRequest = REQUEST) -> StructuredReply:
    async def once() -> StructuredReply:
        client = build_provider(provider)
        try:
            return await client.complete(MODEL, request)
        finally:
            await client.aclose()

    return anyio.run(once)


@pytest.fixture(autouse=True)
def key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("STANDIN_KEY", KEY)


@pytest.mark.parametrize("kind", KINDS)
def test_a_structured_answer_comes_back_with_usage_and_the_key_from_the_environment(kind: str,
                                                                                     standin: StandIn) -> None:
    standin.script("city", Answer({"name": "Lyon"}))
    reply = ask(endpoint(standin, kind))
    assert reply.value == {"name": "Lyon"} and reply.problem is None
    assert reply.usage.input_tokens > 0 and reply.usage.output_tokens > 0
    assert reply.usage.cost_usd(MODEL) == pytest.approx(
        (reply.usage.input_tokens * 1.0 + reply.usage.output_tokens * 4.0) / 1e6)
    [sent] = standin.requests
    credential = sent.headers.get("x-api-key") or sent.headers.get("authorization")
    assert credential in (KEY, f"Bearer {KEY}")
    if kind == "anthropic":
        assert sent.body["tool_choice"] == {"type": "tool", "name": "city"}
        assert sent.body["tools"][0]["input_schema"] == REQUEST.json_schema
    else:
        assert sent.body["response_format"]["json_schema"]["strict"] is True
        # OpenAI's API takes max_completion_tokens; compatible servers mostly only max_tokens
        assert ("max_completion_tokens" in sent.body) is (kind == "openai")
        assert ("max_tokens" in sent.body) is (kind == "openai_compatible")


@pytest.mark.parametrize("kind", KINDS)
def test_an_sdk_http_client_given_to_the_provider_carries_its_requests(kind: str, standin: StandIn) -> None:
    """What the stage tests use: the stand-in's app in this process, through the SDK as a server would be."""
    import anthropic
    import openai

    from abstaingen.providers.anthropic_api import AnthropicProvider
    from abstaingen.providers.openai_api import OpenAIProvider

    standin.script("city", Answer({"name": "Lyon"}))
    nowhere = endpoint(standin, kind, base_url="http://127.0.0.1:9/v1" if kind != "anthropic" else "http://127.0.0.1:9",
                       max_retries=0)

    async def once() -> StructuredReply:
        client = (AnthropicProvider(nowhere, standin.sdk_client(anthropic)) if kind == "anthropic" else
                  OpenAIProvider(nowhere, standin.sdk_client(openai)))
        caller = Caller({"standin": nowhere}, {"writer": MODEL}, clients={"standin": client})
        try:
            return await caller.call("city", "writer", REQUEST)
        finally:
            await caller.aclose()

    assert anyio.run(once).value == {"name": "Lyon"}
    [sent] = standin.requests
    assert sent.stage == "city" and sent.path.endswith("/messages" if kind == "anthropic" else "/chat/completions")
    with pytest.raises(ProviderError):  # the same address without it: nothing listens there
        ask(nowhere)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize(("reply", "problem"), [
    (Raw('{"name": "Lyon"'), "not JSON|not a call of the tool"),
    (Refusal("I will not write that."), "declined"),
    (Truncated({"name": "Ly"}), "cut off"),
])
def test_what_is_not_an_answer_says_why(kind: str, reply: object, problem: str, standin: StandIn) -> None:
    standin.script("city", reply)
    got = ask(endpoint(standin, kind))
    assert got.value is None and got.problem is not None
    assert any(p in got.problem for p in problem.split("|")), got.problem


@pytest.mark.parametrize("kind", KINDS)
def test_a_429_is_retried_after_the_time_it_asks_for(kind: str, standin: StandIn) -> None:
    standin.script("city", Status(429, retry_after_s=1.0), Answer({"name": "Lyon"}))
    started = time.monotonic()
    reply = ask(endpoint(standin, kind))
    assert reply.value == {"name": "Lyon"}
    assert standin.count("city") == 2
    assert time.monotonic() - started >= 1.0


@pytest.mark.parametrize("kind", KINDS)
def test_a_provider_that_keeps_failing_raises_one_clear_error(kind: str, standin: StandIn) -> None:
    standin.otherwise("city", Status(500))
    with pytest.raises(ProviderError, match="HTTP 500") as raised:
        ask(endpoint(standin, kind, max_retries=1))
    assert standin.count("city") == 2  # the first try and the SDK's one retry
    assert KEY not in str(raised.value)


def test_a_missing_key_names_the_variable_and_nothing_else(standin: StandIn, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("STANDIN_KEY")
    with pytest.raises(AbstaingenError, match="the environment variable STANDIN_KEY"):
        ask(endpoint(standin, "openai"))
    assert standin.count() == 0


def at_once(caller: Caller, requests: list[StructuredRequest]) -> list[StructuredReply | BaseException]:
    """The requests all at once, as a pipeline stage sends them."""
    async def together() -> list[StructuredReply | BaseException]:
        try:
            return list(await asyncio.gather(*(caller.call("environment", "writer", r) for r in requests),
                                             return_exceptions=True))
        finally:
            await caller.aclose()

    return anyio.run(together)


@pytest.mark.parametrize(("concurrency", "at_least", "at_most"), [(2, 1.0, 1.9), (4, 0.5, 0.95)])
def test_requests_in_flight_are_capped_per_provider(concurrency: int, at_least: float, at_most: float,
                                                    standin: StandIn) -> None:
    standin.otherwise("city", Delay(0.5, Answer({"name": "Lyon"})))
    caller = Caller({"standin": endpoint(standin, "openai", concurrency=concurrency)}, {"writer": MODEL})
    started = time.monotonic()
    at_once(caller, [REQUEST.model_copy(update={"user": f"City {n}."}) for n in range(4)])
    assert at_least <= time.monotonic() - started <= at_most


def config_for(standin: StandIn, tmp_path: Path, judge_key_env: str = "STANDIN_KEY") -> Path:
    config = tmp_path / "models.toml"
    config.write_text(f"""
[providers.local]
kind = "openai_compatible"
base_url = "{standin.openai_base_url}"
api_key_env = "STANDIN_KEY"
max_retries = 0
[providers.claude]
kind = "anthropic"
base_url = "{standin.anthropic_base_url}"
api_key_env = "{judge_key_env}"
max_retries = 0
[models.writer]
name = "stand-in-writer"
provider = "local"
family = "llama"
[models.checker]
name = "stand-in-judge"
provider = "claude"
family = "claude"
[roles]
generator = "writer"
judge = "checker"
""")
    return config


def test_models_check_reports_every_role(standin: StandIn, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    standin.otherwise("readiness_check", Answer({"ok": True, "word": "ready"}))
    assert cli.main(["models", "check", "--config", str(config_for(standin, tmp_path))]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert [line.split(":")[0] for line in lines] == ["generator", "judge"]
    assert all(": ok: structured output works" in line for line in lines), lines
    assert {r.api for r in standin.requests} == {"openai", "anthropic"}


def test_models_check_fails_a_role_whose_key_is_missing(standin: StandIn, tmp_path: Path,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    standin.otherwise("readiness_check", Answer({"ok": True, "word": "ready"}))
    assert cli.main(["models", "check", "--config", str(config_for(standin, tmp_path, "NO_SUCH_KEY_VAR"))]) == 1
    generator, judge = capsys.readouterr().out.strip().splitlines()
    assert ": ok: " in generator
    assert ": FAILED: the environment variable NO_SUCH_KEY_VAR" in judge


def test_models_check_fails_a_model_that_answers_in_prose(standin: StandIn, tmp_path: Path,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    standin.otherwise("readiness_check", Raw("Sure! Here is the object: ok"))
    assert cli.main(["models", "check", "--config", str(config_for(standin, tmp_path))]) == 1
    assert all(": FAILED: " in line for line in capsys.readouterr().out.strip().splitlines())


def test_a_role_naming_an_unknown_model_is_a_config_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = tmp_path / "bad.toml"
    config.write_text('[roles]\ngenerator = "nobody"\n')
    assert cli.main(["models", "check", "--config", str(config)]) == 2
    assert "roles.generator: no model 'nobody' in [models]" in capsys.readouterr().err


# --- the caller: cache, ledger, budget, circuit breaker -------------------------------------------


def caller_for(standin: StandIn, tmp_path: Path, **settings: object) -> Caller:
    providers = {"standin": endpoint(standin, "openai", max_retries=0)}
    return Caller(providers, {"writer": MODEL}, cache=ResponseCache(tmp_path / "cache"), **settings)  # type: ignore[arg-type]


def call(caller: Caller, request: StructuredRequest = REQUEST) -> StructuredReply:
    return calls(caller, request)[0]  # type: ignore[return-value]


def calls(caller: Caller, *requests: StructuredRequest) -> list[StructuredReply | Exception]:
    """The requests one after the other in one event loop (a caller's clients belong to one loop);
    an error is returned in its place."""
    async def each() -> list[StructuredReply | Exception]:
        results: list[StructuredReply | Exception] = []
        for request in requests:
            try:
                results.append(await caller.call("environment", "writer", request))
            except Exception as exc:  # noqa: BLE001 - the test looks at it
                results.append(exc)
        await caller.aclose()
        return results

    return anyio.run(each)


def test_a_rerun_makes_no_request_and_a_changed_prompt_only_its_own(standin: StandIn, tmp_path: Path) -> None:
    standin.otherwise("city", Answer({"name": "Lyon"}))
    first = call(caller_for(standin, tmp_path))
    again = caller_for(standin, tmp_path)  # a new run, the same cache folder
    assert call(again) == first
    assert standin.count() == 1
    [line] = again.ledger()
    assert (line.calls, line.cached, line.cost_usd) == (1, 1, 0.0)
    call(again, REQUEST.model_copy(update={"system": "You write test data, in French."}))
    assert standin.count() == 2
    assert all(KEY not in path.read_text() for path in (tmp_path / "cache").rglob("*.json"))


def test_a_damaged_cache_entry_is_a_miss_not_a_crash(standin: StandIn, tmp_path: Path) -> None:
    standin.otherwise("city", Answer({"name": "Lyon"}))
    call(caller_for(standin, tmp_path))
    [entry] = (tmp_path / "cache").rglob("*.json")
    entry.write_text('{"value": ')
    assert call(caller_for(standin, tmp_path)).value == {"name": "Lyon"}
    assert standin.count() == 2 and StructuredReply.model_validate_json(entry.read_text()).value == {"name": "Lyon"}


def test_the_ledger_adds_tokens_and_money_per_stage_and_model(standin: StandIn, tmp_path: Path) -> None:
    standin.otherwise("city", Answer({"name": "Lyon"}))
    caller = caller_for(standin, tmp_path)
    replies = calls(caller, *(REQUEST.model_copy(update={"user": f"Give city number {n}."}) for n in range(3)))
    [line] = caller.ledger()
    assert line.calls == 3
    assert line.input_tokens == sum(r.usage.input_tokens for r in replies if isinstance(r, StructuredReply))
    assert line.cost_usd == pytest.approx(sum(r.usage.cost_usd(MODEL) for r in replies
                                              if isinstance(r, StructuredReply)))


def test_a_spent_budget_stops_further_calls(standin: StandIn, tmp_path: Path) -> None:
    standin.otherwise("city", Answer({"name": "Lyon"}))
    caller = caller_for(standin, tmp_path, budget_usd=1e-9)  # the first call spends it
    first, refused, cached = calls(caller, REQUEST, REQUEST.model_copy(update={"user": "Another city."}), REQUEST)
    assert isinstance(refused, BudgetExhausted) and "budget" in str(refused)
    assert standin.count() == 1
    assert isinstance(cached, StructuredReply) and cached == first  # cached costs nothing and is still served


def test_the_budget_is_read_when_a_request_can_go_not_when_it_was_queued(standin: StandIn, tmp_path: Path) -> None:
    """Six requests queued at once behind one slot: the budget stops the ones still waiting."""
    standin.otherwise("city", Answer({"name": "Lyon"}))
    caller = Caller({"standin": endpoint(standin, "openai", max_retries=0, concurrency=1)}, {"writer": MODEL},
                    budget_usd=MODEL.input_usd_per_mtok * 1e-6)  # one input token: the first call spends it
    results = at_once(caller, [REQUEST.model_copy(update={"user": f"City {n}."}) for n in range(6)])
    assert sum(isinstance(r, StructuredReply) for r in results) == 1 == standin.count()
    assert all(isinstance(r, BudgetExhausted) for r in results if not isinstance(r, StructuredReply))


def test_a_provider_that_keeps_failing_is_no_longer_asked(standin: StandIn, tmp_path: Path) -> None:
    standin.otherwise("city", Status(500))
    results = calls(caller_for(standin, tmp_path, breaker_after=3), *[REQUEST] * 4)
    assert [type(r) for r in results] == [ProviderError] * 3 + [ProviderUnavailable]
    assert "failed 3 times in a row, the last: stand-in-1: HTTP 500" in str(results[-1])
    assert standin.count() == 3
