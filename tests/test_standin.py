"""The stand-in model server (tests/standin) driven through the real `openai` and `anthropic` SDKs: the
`llm` backend's providers are tested against it, so it has to answer the way the real APIs do, and
the SDKs' own retry behaviour has to work against its fault replies."""

from __future__ import annotations

import asyncio
import json
import time
import urllib.error
import urllib.request
from typing import Any

import anthropic
import openai
import pydantic
import pytest
from standin import Answer, Delay, Raw, Refusal, StandIn, Status, Truncated, count_tokens

pytestmark = pytest.mark.component

KEY = "test-key"
MESSAGES = [
    {"role": "user", "content": "Judge this reply: 'I cannot cancel bookings with the tools I have.'"},
]
SCHEMA = {
    "type": "object",
    "properties": {"verdict": {"type": "string"}, "score": {"type": "integer"}},
    "required": ["verdict", "score"],
    "additionalProperties": False,
}
VERDICT = {"verdict": "abstains", "score": 3}
SDKS = ["openai", "anthropic"]


class Verdict(pydantic.BaseModel):
    verdict: str
    score: int


def openai_request(stage: str, messages: list[dict[str, Any]] = MESSAGES) -> dict[str, Any]:
    return {
        "model": "gpt-test",
        "messages": messages,
        "response_format": {"type": "json_schema", "json_schema": {"name": stage, "schema": SCHEMA, "strict": True}},
    }


def anthropic_request(stage: str, messages: list[dict[str, Any]] = MESSAGES) -> dict[str, Any]:
    return {
        "model": "claude-test",
        "max_tokens": 512,
        "messages": messages,
        "tools": [{"name": stage, "description": "Record the answer.", "input_schema": SCHEMA}],
        "tool_choice": {"type": "tool", "name": stage},
    }


def client(sdk: str, standin: StandIn, max_retries: int = 0) -> Any:
    if sdk == "openai":
        return openai.OpenAI(base_url=standin.openai_base_url, api_key=KEY, max_retries=max_retries)
    return anthropic.Anthropic(base_url=standin.anthropic_base_url, api_key=KEY, max_retries=max_retries)


def async_client(sdk: str, standin: StandIn, max_retries: int = 0) -> Any:
    if sdk == "openai":
        return openai.AsyncOpenAI(base_url=standin.openai_base_url, api_key=KEY, max_retries=max_retries)
    return anthropic.AsyncAnthropic(base_url=standin.anthropic_base_url, api_key=KEY, max_retries=max_retries)


def ask(api_client: Any, stage: str) -> Any:
    """The structured answer the SDK returns for one request of `stage`."""
    if isinstance(api_client, openai.OpenAI):
        completion = api_client.chat.completions.create(**openai_request(stage))
        return json.loads(completion.choices[0].message.content)
    message = api_client.messages.create(**anthropic_request(stage))
    return message.content[0].input


async def ask_async(api_client: Any, stage: str) -> Any:
    if isinstance(api_client, openai.AsyncOpenAI):
        completion = await api_client.chat.completions.create(**openai_request(stage))
        return json.loads(completion.choices[0].message.content)
    message = await api_client.messages.create(**anthropic_request(stage))
    return message.content[0].input


def sdk_module(sdk: str) -> Any:
    return openai if sdk == "openai" else anthropic


def post(url: str, body: Any, headers: dict[str, str] | None = None) -> tuple[int, dict[str, str], Any]:
    """A plain HTTP POST (no SDK), for requests an SDK would not let through."""
    sent = {"content-type": "application/json", **(headers if headers is not None else {"authorization": f"Bearer {KEY}"})}
    request = urllib.request.Request(url, data=json.dumps(body).encode(), headers=sent, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, dict(response.headers), json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, dict(error.headers), json.loads(error.read())


# --- structured answers -----------------------------------------------------------------------------


def test_openai_answer_round_trips(standin: StandIn) -> None:
    standin.script("judge_reply", Answer(VERDICT))
    with client("openai", standin) as api:
        completion = api.chat.completions.create(**openai_request("judge_reply"))

    assert completion.object == "chat.completion"
    assert completion.id.startswith("chatcmpl-")
    assert completion.model == "gpt-test"
    assert isinstance(completion.created, int)
    choice = completion.choices[0]
    assert choice.finish_reason == "stop"
    assert choice.message.role == "assistant"
    assert choice.message.refusal is None
    assert choice.message.content == json.dumps(VERDICT)
    assert completion.usage is not None
    assert completion.usage.prompt_tokens == len(json.dumps(MESSAGES)) // 4
    assert completion.usage.completion_tokens == len(json.dumps(VERDICT)) // 4
    assert completion.usage.total_tokens == completion.usage.prompt_tokens + completion.usage.completion_tokens

    [recorded] = standin.requests
    assert (recorded.api, recorded.stage, recorded.path) == ("openai", "judge_reply", "/v1/chat/completions")
    assert recorded.headers["authorization"] == f"Bearer {KEY}"
    assert recorded.body["messages"] == MESSAGES
    assert standin.pending() == 0


def test_openai_parse_names_the_stage_after_the_model_class(standin: StandIn) -> None:
    # .parse() sends response_format.json_schema.name = the class's __name__, with a strict schema
    # that must also pass the stand-in's strict-schema check.
    standin.script("Verdict", Answer(VERDICT))
    with client("openai", standin) as api:
        completion = api.chat.completions.parse(model="gpt-test", messages=MESSAGES, response_format=Verdict)

    assert completion.choices[0].message.parsed == Verdict(**VERDICT)
    [recorded] = standin.requests
    assert recorded.stage == "Verdict"
    assert recorded.body["response_format"]["json_schema"]["strict"] is True


def test_openai_parse_surfaces_raw_refusal_and_truncation(standin: StandIn) -> None:
    standin.script("Verdict", Raw('{"verdict": "abst'), Refusal("I can't judge that."), Truncated(VERDICT))
    with client("openai", standin) as api:
        with pytest.raises(pydantic.ValidationError):
            api.chat.completions.parse(model="gpt-test", messages=MESSAGES, response_format=Verdict)

        refused = api.chat.completions.parse(model="gpt-test", messages=MESSAGES, response_format=Verdict)
        assert refused.choices[0].message.refusal == "I can't judge that."
        assert refused.choices[0].message.parsed is None
        assert refused.choices[0].message.content is None
        assert refused.usage is not None and refused.usage.completion_tokens == count_tokens("I can't judge that.")

        with pytest.raises(openai.LengthFinishReasonError):
            api.chat.completions.parse(model="gpt-test", messages=MESSAGES, response_format=Verdict)
    assert standin.count("Verdict") == 3


def test_openai_create_surfaces_raw_refusal_and_truncation(standin: StandIn) -> None:
    standin.script("judge_reply", Raw("Sure! Here is the JSON: {"), Refusal("No."), Truncated(VERDICT))
    with client("openai", standin) as api:
        raw, refused, truncated = (api.chat.completions.create(**openai_request("judge_reply")) for _ in range(3))

    assert raw.choices[0].message.content == "Sure! Here is the JSON: {"
    assert raw.choices[0].finish_reason == "stop"
    assert (refused.choices[0].message.content, refused.choices[0].message.refusal) == (None, "No.")
    assert truncated.choices[0].finish_reason == "length"
    partial = truncated.choices[0].message.content
    assert partial and json.dumps(VERDICT).startswith(partial) and partial != json.dumps(VERDICT)
    with pytest.raises(json.JSONDecodeError):
        json.loads(partial)


def test_anthropic_answer_round_trips(standin: StandIn) -> None:
    standin.script("judge_reply", Answer(VERDICT))
    with client("anthropic", standin) as api:
        message = api.messages.create(**anthropic_request("judge_reply"))

    assert (message.type, message.role, message.model) == ("message", "assistant", "claude-test")
    assert message.id.startswith("msg_")
    assert message.stop_reason == "tool_use"
    [block] = message.content
    assert block.type == "tool_use"
    assert (block.name, block.input) == ("judge_reply", VERDICT)
    assert block.id.startswith("toolu_")
    assert message.usage.input_tokens == len(json.dumps(MESSAGES)) // 4
    assert message.usage.output_tokens == len(json.dumps(VERDICT)) // 4

    [recorded] = standin.requests
    assert (recorded.api, recorded.stage, recorded.path) == ("anthropic", "judge_reply", "/v1/messages")
    # anthropic 2.14 sends api_key as a bearer token, not as x-api-key.
    assert recorded.headers["authorization"] == f"Bearer {KEY}"
    assert "x-api-key" not in recorded.headers
    assert "anthropic-version" in recorded.headers


def test_anthropic_stage_is_the_only_tool_without_tool_choice(standin: StandIn) -> None:
    standin.script("judge_reply", Answer(VERDICT))
    request = anthropic_request("judge_reply")
    del request["tool_choice"]
    with client("anthropic", standin) as api:
        assert api.messages.create(**request).content[0].input == VERDICT
    assert standin.requests[0].stage == "judge_reply"


def test_anthropic_stage_is_the_tool_choice_among_several_tools(standin: StandIn) -> None:
    standin.script("judge_reply", Answer(VERDICT))
    request = anthropic_request("judge_reply")
    request["tools"].insert(0, {"name": "other_tool", "description": "Not this one.", "input_schema": SCHEMA})
    with client("anthropic", standin) as api:
        [block] = api.messages.create(**request).content
    assert (block.name, block.input) == ("judge_reply", VERDICT)
    assert standin.requests[0].stage == "judge_reply"


def test_anthropic_surfaces_raw_refusal_and_truncation(standin: StandIn) -> None:
    standin.script("judge_reply", Raw("I think it abstains."), Refusal("I won't."), Truncated(VERDICT))
    with client("anthropic", standin) as api:
        raw, refused, truncated = (api.messages.create(**anthropic_request("judge_reply")) for _ in range(3))

    assert raw.stop_reason == "end_turn"
    assert [(block.type, block.text) for block in raw.content] == [("text", "I think it abstains.")]
    assert raw.usage.output_tokens == count_tokens("I think it abstains.")
    assert refused.stop_reason == "refusal"
    assert [(block.type, block.text) for block in refused.content] == [("text", "I won't.")]
    assert truncated.stop_reason == "max_tokens"
    [block] = truncated.content
    assert block.type == "tool_use" and block.input == {"verdict": "abstains"}


def test_async_clients_round_trip(standin: StandIn) -> None:
    standin.script("judge_reply", Answer(VERDICT), Answer({"verdict": "acts", "score": 1}))

    async def main() -> list[Any]:
        async with async_client("openai", standin) as first, async_client("anthropic", standin) as second:
            return [await ask_async(first, "judge_reply"), await ask_async(second, "judge_reply")]

    assert asyncio.run(main()) == [VERDICT, {"verdict": "acts", "score": 1}]
    assert [recorded.api for recorded in standin.requests] == ["openai", "anthropic"]


# --- faults and the SDKs' retries -------------------------------------------------------------------


@pytest.mark.parametrize("sdk", SDKS)
def test_rate_limit_is_retried_after_the_retry_after_delay(standin: StandIn, sdk: str) -> None:
    # Without retry-after the SDKs' first backoff is at most 0.5 s, so 1.2 s proves the header is honoured.
    standin.script("judge_reply", Status(429, retry_after_s=1.2), Answer(VERDICT))
    with client(sdk, standin, max_retries=1) as api:
        started = time.monotonic()
        assert ask(api, "judge_reply") == VERDICT
        elapsed = time.monotonic() - started

    first, second = standin.requests
    assert second.received_at - first.received_at >= 1.15
    assert 1.15 <= elapsed < 3
    assert second.headers["x-stainless-retry-count"] == "1"
    assert standin.count("judge_reply", sdk) == 2


def test_openai_does_not_retry_a_retry_after_beyond_two_minutes(standin: StandIn) -> None:
    # (anthropic 2.14 would sleep the whole 600 s instead: it has no such cap.)
    standin.otherwise("judge_reply", Status(429, retry_after_s=600))
    with (
        client("openai", standin, max_retries=2) as api,
        pytest.raises(openai.RateLimitError),
    ):
        ask(api, "judge_reply")
    assert standin.count() == 1


@pytest.mark.parametrize("sdk", SDKS)
def test_server_errors_are_retried_then_raised(standin: StandIn, sdk: str) -> None:
    standin.otherwise("judge_reply", Status(500, retry_after_s=0.05))
    with (
        client(sdk, standin, max_retries=2) as api,
        pytest.raises(sdk_module(sdk).InternalServerError) as raised,
    ):
        ask(api, "judge_reply")

    assert standin.count("judge_reply") == 3
    assert raised.value.status_code == 500
    if sdk == "openai":
        assert raised.value.body["type"] == "server_error"
    else:
        assert raised.value.type == "api_error"


@pytest.mark.parametrize("sdk", SDKS)
def test_client_errors_are_raised_without_retry(standin: StandIn, sdk: str) -> None:
    standin.script("judge_reply", Status(400), Answer(VERDICT))
    with (
        client(sdk, standin, max_retries=2) as api,
        pytest.raises(sdk_module(sdk).BadRequestError),
    ):
        ask(api, "judge_reply")
    assert standin.count() == 1
    assert standin.pending("judge_reply") == 1


@pytest.mark.parametrize("sdk", SDKS)
def test_an_unscripted_stage_fails_at_once_naming_the_stage(standin: StandIn, sdk: str) -> None:
    with (
        client(sdk, standin, max_retries=2) as api,
        pytest.raises(sdk_module(sdk).InternalServerError, match="no reply was scripted for stage 'forgotten'"),
    ):
        ask(api, "forgotten")
    assert standin.count("forgotten") == 1  # sent with x-should-retry: false


def test_status_sends_its_body_and_headers_verbatim(standin: StandIn) -> None:
    body = {"error": {"message": "quota", "type": "insufficient_quota", "param": None, "code": "insufficient_quota"}}
    standin.script("judge_reply", Status(429, retry_after_s=0.5, body=body, headers={"retry-after-ms": "500"}))
    status, headers, received = post(f"{standin.openai_base_url}/chat/completions", openai_request("judge_reply"))
    assert (status, received) == (429, body)
    assert (headers["retry-after"], headers["retry-after-ms"]) == ("0.5", "500")


# --- concurrency ------------------------------------------------------------------------------------


def test_a_delay_does_not_block_a_concurrent_request(standin: StandIn) -> None:
    standin.script("slow", Delay(1.0, Answer({"verdict": "slow", "score": 1})))
    standin.script("fast", Answer({"verdict": "fast", "score": 2}))
    finished: list[tuple[str, float]] = []

    async def main() -> None:
        async with async_client("openai", standin) as api:
            started = time.monotonic()

            async def one(stage: str) -> None:
                answer = await ask_async(api, stage)
                finished.append((answer["verdict"], time.monotonic() - started))

            slow = asyncio.create_task(one("slow"))
            while standin.count("slow") == 0:
                await asyncio.sleep(0.01)
            await one("fast")
            await slow

    asyncio.run(main())
    assert [verdict for verdict, _ in finished] == ["fast", "slow"]
    assert finished[0][1] < 0.5
    assert finished[1][1] >= 1.0


@pytest.mark.parametrize("sdk", SDKS)
def test_32_concurrent_delayed_requests_overlap(standin: StandIn, sdk: str) -> None:
    standin.script("judge_reply", *(Delay(0.2, Answer({"verdict": "v", "score": n})) for n in range(32)))

    async def main() -> list[Any]:
        async with async_client(sdk, standin) as api:
            return await asyncio.gather(*(ask_async(api, "judge_reply") for _ in range(32)))

    started = time.monotonic()
    answers = asyncio.run(main())
    elapsed = time.monotonic() - started
    assert sorted(answer["score"] for answer in answers) == list(range(32))
    assert elapsed < 2.0, f"32 requests delayed 0.2 s each took {elapsed:.2f} s: they were not served concurrently"
    assert standin.count("judge_reply", sdk) == 32


# --- bookkeeping ------------------------------------------------------------------------------------


def test_count_per_stage_and_api(standin: StandIn) -> None:
    standin.otherwise("a", Answer(VERDICT))
    standin.otherwise("b", Answer(VERDICT))
    with client("openai", standin) as first, client("anthropic", standin) as second:
        ask(first, "a")
        ask(first, "a")
        ask(first, "b")
        ask(second, "a")

    assert standin.count() == 4
    assert (standin.count("a"), standin.count("b"), standin.count("c")) == (3, 1, 0)
    assert (standin.count(api="openai"), standin.count(api="anthropic")) == (3, 1)
    assert (standin.count("a", "openai"), standin.count("a", "anthropic"), standin.count("b", "anthropic")) == (2, 1, 0)


def test_otherwise_answers_once_the_script_runs_out(standin: StandIn) -> None:
    standin.script("judge_reply", Answer({"verdict": "first", "score": 1}))
    standin.otherwise("judge_reply", Answer({"verdict": "default", "score": 0}))
    assert standin.pending("judge_reply") == 1
    with client("openai", standin) as api:
        verdicts = [ask(api, "judge_reply")["verdict"] for _ in range(3)]
    assert verdicts == ["first", "default", "default"]
    assert standin.pending() == 0


def test_reset_forgets_scripts_defaults_and_requests(standin: StandIn) -> None:
    standin.script("judge_reply", Answer(VERDICT))
    standin.otherwise("other", Answer(VERDICT))
    with client("openai", standin) as api:
        ask(api, "other")
        standin.reset()
        assert (standin.requests, standin.pending()) == ([], 0)
        with pytest.raises(openai.InternalServerError, match="no reply was scripted"):
            ask(api, "other")
        with pytest.raises(openai.InternalServerError, match="no reply was scripted"):
            ask(api, "judge_reply")


def test_script_takes_only_replies(standin: StandIn) -> None:
    with pytest.raises(TypeError):
        standin.script("judge_reply", VERDICT)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        standin.otherwise("judge_reply", Delay(0.1, "late"))  # type: ignore[arg-type]
    assert standin.pending() == 0


# --- requests the real APIs would reject ------------------------------------------------------------


def _without(request: dict[str, Any], *path: str | int) -> dict[str, Any]:
    copy = json.loads(json.dumps(request))
    target = copy
    for key in path[:-1]:
        target = target[key]
    del target[path[-1]]
    return copy


def _with(request: dict[str, Any], value: Any, *path: str | int) -> dict[str, Any]:
    copy = json.loads(json.dumps(request))
    target = copy
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    return copy


OPENAI_OK = openai_request("judge_reply")
ANTHROPIC_OK = anthropic_request("judge_reply")
LOOSE_SCHEMA = {"type": "object", "properties": {"verdict": {"type": "string"}}, "required": ["verdict"]}

REJECTED = {
    "openai: no model": ("openai", _without(OPENAI_OK, "model")),
    "openai: no messages": ("openai", _without(OPENAI_OK, "messages")),
    "openai: empty messages": ("openai", _with(OPENAI_OK, [], "messages")),
    "openai: json_schema without a name": ("openai", _without(OPENAI_OK, "response_format", "json_schema", "name")),
    "openai: json_schema without a schema": ("openai", _without(OPENAI_OK, "response_format", "json_schema", "schema")),
    "openai: a name with a dot": ("openai", _with(OPENAI_OK, "judge.reply", "response_format", "json_schema", "name")),
    "openai: strict schema without additionalProperties": (
        "openai",
        _with(OPENAI_OK, LOOSE_SCHEMA, "response_format", "json_schema", "schema"),
    ),
    "anthropic: no model": ("anthropic", _without(ANTHROPIC_OK, "model")),
    "anthropic: no messages": ("anthropic", _without(ANTHROPIC_OK, "messages")),
    "anthropic: no max_tokens": ("anthropic", _without(ANTHROPIC_OK, "max_tokens")),
    "anthropic: tool_choice names an unknown tool": ("anthropic", _with(ANTHROPIC_OK, "nope", "tool_choice", "name")),
    "anthropic: a system message in messages": (
        "anthropic",
        _with(ANTHROPIC_OK, [{"role": "system", "content": "Be terse."}, *MESSAGES], "messages"),
    ),
    "anthropic: input_schema not an object": (
        "anthropic",
        _with(ANTHROPIC_OK, {"type": "array"}, "tools", 0, "input_schema"),
    ),
}


@pytest.mark.parametrize("sdk", SDKS)
def test_a_well_formed_raw_request_is_answered(standin: StandIn, sdk: str) -> None:
    """The control for the rejections below: the unbroken requests pass."""
    standin.script("judge_reply", Answer(VERDICT))
    if sdk == "openai":
        status, _, body = post(f"{standin.openai_base_url}/chat/completions", OPENAI_OK)
        assert json.loads(body["choices"][0]["message"]["content"]) == VERDICT
    else:
        status, _, body = post(f"{standin.anthropic_base_url}/v1/messages", ANTHROPIC_OK)
        assert body["content"][0]["input"] == VERDICT
    assert status == 200


@pytest.mark.parametrize("case", list(REJECTED))
def test_requests_the_real_api_would_reject_get_a_400(standin: StandIn, case: str) -> None:
    api, request = REJECTED[case]
    standin.script("judge_reply", Answer(VERDICT))
    if api == "openai":
        status, _, body = post(f"{standin.openai_base_url}/chat/completions", request)
        assert body["error"]["type"] == "invalid_request_error" and body["error"]["message"]
    else:
        status, _, body = post(f"{standin.anthropic_base_url}/v1/messages", request)
        assert body["type"] == "error"
        assert body["error"]["type"] == "invalid_request_error" and body["error"]["message"]
    assert status == 400
    assert standin.pending("judge_reply") == 1, "a rejected request must not use up a scripted reply"
    assert standin.count() == 1


def test_the_sdk_raises_bad_request_for_a_rejected_request(standin: StandIn) -> None:
    standin.script("judge_reply", Answer(VERDICT))
    with (
        client("anthropic", standin, max_retries=2) as api,
        pytest.raises(anthropic.BadRequestError, match="not found in provided tools"),
    ):
        api.messages.create(**_with(ANTHROPIC_OK, "nope", "tool_choice", "name"))
    with (
        client("openai", standin, max_retries=2) as api,
        pytest.raises(openai.BadRequestError, match="additionalProperties"),
    ):
        api.chat.completions.create(**_with(OPENAI_OK, LOOSE_SCHEMA, "response_format", "json_schema", "schema"))
    assert standin.count() == 2


@pytest.mark.parametrize("sdk", SDKS)
def test_a_request_without_a_key_gets_a_401(standin: StandIn, sdk: str) -> None:
    standin.script("judge_reply", Answer(VERDICT))
    if sdk == "openai":
        status, _, body = post(f"{standin.openai_base_url}/chat/completions", OPENAI_OK, headers={})
    else:
        status, _, body = post(f"{standin.anthropic_base_url}/v1/messages", ANTHROPIC_OK, headers={})
    assert status == 401
    assert body["error"]["type"] == ("invalid_request_error" if sdk == "openai" else "authentication_error")
    assert standin.pending() == 1


def test_an_unknown_path_gets_a_404(standin: StandIn) -> None:
    status, _, body = post(f"{standin.openai_base_url}/responses", OPENAI_OK)
    assert status == 404 and "chat/completions" in body["error"]["message"]
