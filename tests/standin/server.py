"""A stand-in model server for tests: a real HTTP server on 127.0.0.1 that speaks enough of the OpenAI
chat-completions API and the Anthropic messages API for the official `openai` and `anthropic` SDKs to
run against it unchanged (only `base_url` and a dummy API key differ).

This is a TEST FIXTURE. It is never something users run, it is not installed with the package, and it
knows nothing about models: every reply is scripted by the test, per *stage*.

The stage of a request is the name of the structured output it asks for:

* OpenAI: `response_format.json_schema.name` (what `chat.completions.parse(response_format=Model)`
  fills in with `Model.__name__`);
* Anthropic: the name in `tool_choice` (`{"type": "tool", "name": ...}`), else the name of the only
  tool when exactly one is given;
* anything else: the stage "".

Replies for a stage are used in order (`script`); once they run out, the stage's `otherwise` reply is
used, by default a 500 saying that nothing was scripted (sent with `x-should-retry: false`, so an SDK
fails at once instead of retrying a forgotten script).

Token usage is deterministic: input tokens = `count_tokens(json.dumps(request["messages"]))` and
output tokens = `count_tokens(answer text)`, where `count_tokens(text) = max(1, len(text) // 4)` and the
answer text is the message content (OpenAI) or `json.dumps` of the tool input / the text block
(Anthropic). The Anthropic `system` prompt is not counted.

The server runs uvicorn on its own event loop in a daemon thread, so many requests (and `Delay`
replies) proceed concurrently without blocking each other or the test.
"""

from __future__ import annotations

import asyncio
import importlib
import itertools
import json
import re
import socket
import threading
import time
import traceback
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

Api = Literal["openai", "anthropic"]


def count_tokens(text: str) -> int:
    """The stand-in's token count for a piece of text: a quarter of its length, at least 1."""
    return max(1, len(text) // 4)


# ---------------------------------------------------------------------------------------------------
# Replies


@dataclass(frozen=True)
class Answer:
    """A correct structured answer: OpenAI → `json.dumps(obj)` as the message content, finish_reason
    "stop"; Anthropic → a tool_use block whose input is `obj`, stop_reason "tool_use"."""

    obj: dict[str, Any] | list[Any]


@dataclass(frozen=True)
class Raw:
    """The model's output is `text` verbatim: OpenAI → the message content (e.g. malformed JSON);
    Anthropic → a text block and stop_reason "end_turn" (the model did not call the tool)."""

    text: str


@dataclass(frozen=True)
class Refusal:
    """OpenAI → `message.refusal = text`, content None; Anthropic → stop_reason "refusal" and a text block."""

    text: str


@dataclass(frozen=True)
class Status:
    """An HTTP error in the API's own error format. `retry_after_s` adds a `retry-after` header
    (seconds, fractions allowed: both SDKs accept them); `headers` adds any others (e.g. `retry-after-ms`,
    `x-should-retry`); `body`, when given, is sent verbatim instead of the generated error body."""

    code: int
    retry_after_s: float | None = None
    body: dict[str, Any] | None = None
    headers: dict[str, str] | None = None


@dataclass(frozen=True)
class Delay:
    """Answer `then` `seconds` after the request arrived (as a provider's latency runs from arrival), without
    blocking other requests."""

    seconds: float
    then: Reply


@dataclass(frozen=True)
class Truncated:
    """Output cut off by the token limit. OpenAI → finish_reason "length" and the first half of
    `json.dumps(obj)` as content (never valid JSON); Anthropic → stop_reason "max_tokens" with a tool_use
    block holding the first half of `obj`'s keys (or items)."""

    obj: dict[str, Any] | list[Any]


@dataclass(frozen=True)
class Computed:
    """The reply `make` returns for the request's JSON body: for a stage whose requests arrive in no
    fixed order (concurrent calls), answered by what each one asks."""

    make: Callable[[Any], Reply]


Reply = Answer | Raw | Refusal | Status | Delay | Truncated | Computed
_REPLY_TYPES = (Answer, Raw, Refusal, Status, Delay, Truncated, Computed)


@dataclass
class Recorded:
    """One request as the server received it. `received_at` is `time.monotonic()` of this process."""

    api: Api
    stage: str
    path: str
    headers: dict[str, str]
    body: Any
    received_at: float = field(default_factory=time.monotonic)


# ---------------------------------------------------------------------------------------------------
# Errors in each API's format


_OPENAI_ERROR_TYPES = {
    400: ("invalid_request_error", None),
    401: ("invalid_request_error", "invalid_api_key"),
    404: ("invalid_request_error", "not_found"),
    429: ("requests", "rate_limit_exceeded"),
}
_ANTHROPIC_ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    402: "billing_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    500: "api_error",
    504: "timeout_error",
    529: "overloaded_error",
}


class _Rejected(Exception):
    """A request the real API would refuse with a 4xx."""

    def __init__(self, message: str, code: int = 400, param: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.code = code
        self.param = param


def _error_body(api: Api, code: int, message: str, param: str | None = None) -> dict[str, Any]:
    if api == "openai":
        kind, error_code = _OPENAI_ERROR_TYPES.get(code, ("server_error" if code >= 500 else "invalid_request_error", None))
        return {"error": {"message": message, "type": kind, "param": param, "code": error_code}}
    kind = _ANTHROPIC_ERROR_TYPES.get(code, "api_error" if code >= 500 else "invalid_request_error")
    return {"type": "error", "error": {"type": kind, "message": message}}


# ---------------------------------------------------------------------------------------------------
# Request checks and stage detection


_OPENAI_SCHEMA_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")


def _require_messages(body: dict[str, Any]) -> list[Any]:
    if not isinstance(body.get("model"), str) or not body["model"]:
        raise _Rejected("you must provide a model parameter", param="model")
    messages = body.get("messages")
    if not isinstance(messages, list):
        raise _Rejected("messages: field required (a list of messages)", param="messages")
    if not messages:
        raise _Rejected("messages: at least one message is required", param="messages")
    for number, message in enumerate(messages):
        if not isinstance(message, dict) or "role" not in message:
            raise _Rejected(f"messages.{number}: each message needs a role", param=f"messages[{number}]")
    if body.get("stream"):
        raise _Rejected("the stand-in model server does not stream; send stream=false", param="stream")
    return messages


def _strict_schema_problem(schema: Any, where: str) -> str | None:
    """What makes `schema` unacceptable to OpenAI's strict structured outputs, or None. Checks the rules
    the real API enforces and that hand-written schemas most often break: every object lists all its
    properties as required and sets additionalProperties to false."""
    if isinstance(schema, list):
        for number, item in enumerate(schema):
            problem = _strict_schema_problem(item, f"{where}[{number}]")
            if problem:
                return problem
        return None
    if not isinstance(schema, dict):
        return None
    kinds = schema.get("type")
    is_object = kinds == "object" or (isinstance(kinds, list) and "object" in kinds) or "properties" in schema
    if is_object:
        if schema.get("additionalProperties") is not False:
            return f"In context={where}, 'additionalProperties' is required to be supplied and to be false."
        properties = schema.get("properties", {})
        required = schema.get("required", [])
        missing = [name for name in properties if name not in required]
        if missing:
            return f"In context={where}, 'required' is required to include every key in properties. Missing {missing}."
    for key in ("properties", "$defs", "definitions"):
        children = schema.get(key)
        if isinstance(children, dict):
            for name, child in children.items():
                problem = _strict_schema_problem(child, f"{where}.{key}.{name}")
                if problem:
                    return problem
    for key in ("items", "anyOf", "allOf", "prefixItems"):
        if key in schema:
            problem = _strict_schema_problem(schema[key], f"{where}.{key}")
            if problem:
                return problem
    return None


def _openai_stage(body: dict[str, Any]) -> str:
    response_format = body.get("response_format")
    if isinstance(response_format, dict) and response_format.get("type") == "json_schema":
        json_schema = response_format.get("json_schema")
        if isinstance(json_schema, dict) and isinstance(json_schema.get("name"), str):
            return json_schema["name"]
    return ""


def _check_openai(body: dict[str, Any]) -> None:
    _require_messages(body)
    response_format = body.get("response_format")
    if response_format is None:
        return
    if not isinstance(response_format, dict) or response_format.get("type") not in ("text", "json_object", "json_schema"):
        raise _Rejected("response_format.type must be one of 'text', 'json_object', 'json_schema'", param="response_format")
    if response_format["type"] != "json_schema":
        return
    json_schema = response_format.get("json_schema")
    if not isinstance(json_schema, dict):
        raise _Rejected("Missing required parameter: 'response_format.json_schema'.", param="response_format.json_schema")
    name = json_schema.get("name")
    if not isinstance(name, str):
        raise _Rejected("Missing required parameter: 'response_format.json_schema.name'.", param="response_format.json_schema.name")
    if not _OPENAI_SCHEMA_NAME.match(name):
        raise _Rejected(
            f"Invalid 'response_format.json_schema.name': string does not match pattern ^[a-zA-Z0-9_-]+$ (1-64 characters): {name!r}.",
            param="response_format.json_schema.name",
        )
    schema = json_schema.get("schema")
    if not isinstance(schema, dict):
        raise _Rejected("Missing required parameter: 'response_format.json_schema.schema'.", param="response_format.json_schema.schema")
    if json_schema.get("strict") is True:
        if schema.get("type") != "object":
            raise _Rejected(
                f"Invalid schema for response_format '{name}': schema must be a JSON Schema of 'type: \"object\"'.",
                param="response_format",
            )
        problem = _strict_schema_problem(schema, "()")
        if problem:
            raise _Rejected(f"Invalid schema for response_format '{name}': {problem}", param="response_format")


def _anthropic_stage(body: dict[str, Any]) -> str:
    tool_choice = body.get("tool_choice")
    if isinstance(tool_choice, dict) and tool_choice.get("type") == "tool" and isinstance(tool_choice.get("name"), str):
        return tool_choice["name"]
    tools = body.get("tools")
    if isinstance(tools, list) and len(tools) == 1 and isinstance(tools[0], dict) and isinstance(tools[0].get("name"), str):
        return tools[0]["name"]
    return ""


def _check_anthropic(body: dict[str, Any]) -> None:
    messages = _require_messages(body)
    for number, message in enumerate(messages):
        if message["role"] not in ("user", "assistant"):
            raise _Rejected(
                f"messages.{number}.role: Input should be 'user' or 'assistant' (a system prompt goes in the top-level `system`)"
            )
    max_tokens = body.get("max_tokens")
    if isinstance(max_tokens, bool) or not isinstance(max_tokens, int):
        raise _Rejected("max_tokens: Field required")
    if max_tokens < 1:
        raise _Rejected("max_tokens: Input should be greater than or equal to 1")
    tools = body.get("tools", [])
    if not isinstance(tools, list):
        raise _Rejected("tools: Input should be a valid list")
    names = []
    for number, tool in enumerate(tools):
        if not isinstance(tool, dict) or not isinstance(tool.get("name"), str):
            raise _Rejected(f"tools.{number}.name: Field required")
        schema = tool.get("input_schema")
        if not isinstance(schema, dict):
            raise _Rejected(f"tools.{number}.custom.input_schema: Field required")
        if schema.get("type") != "object":
            raise _Rejected(f"tools.{number}.custom.input_schema.type: Input should be 'object'")
        names.append(tool["name"])
    tool_choice = body.get("tool_choice")
    if tool_choice is None:
        return
    if not isinstance(tool_choice, dict) or tool_choice.get("type") not in ("auto", "any", "tool", "none"):
        raise _Rejected("tool_choice.type: Input should be 'auto', 'any', 'tool' or 'none'")
    if tool_choice["type"] == "tool":
        name = tool_choice.get("name")
        if not isinstance(name, str):
            raise _Rejected("tool_choice.tool.name: Field required")
        if name not in names:
            raise _Rejected(f"Tool '{name}' not found in provided tools (tool_choice.name)")
    elif tool_choice["type"] == "any" and not names:
        raise _Rejected("tool_choice: 'any' requires at least one tool")


# ---------------------------------------------------------------------------------------------------
# The server


class StandIn:
    """A stand-in OpenAI + Anthropic server on 127.0.0.1, on a free port, started by the constructor."""

    def __init__(self, *, startup_timeout_s: float = 10.0) -> None:
        self._lock = threading.Lock()
        self._scripts: dict[str, deque[Reply]] = {}
        self._otherwise: dict[str, Reply] = {}
        self._requests: list[Recorded] = []
        self._ids = itertools.count(1)

        self._socket = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._socket.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        # Accepted connections inherit this: without it the reply's body waits for the client to acknowledge
        # its headers, ~40 ms of delayed ACK on every request.
        self._socket.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self._socket.bind(("127.0.0.1", 0))
        self._socket.listen(2048)
        port = self._socket.getsockname()[1]
        self.base_url = f"http://127.0.0.1:{port}"
        self.openai_base_url = f"{self.base_url}/v1"
        self.anthropic_base_url = self.base_url

        app = Starlette(routes=[Route("/{path:path}", self._handle, methods=["GET", "POST", "PUT", "PATCH", "DELETE"])])
        self.app = app
        config = uvicorn.Config(
            app,
            loop="asyncio",
            http="h11",
            lifespan="off",
            log_level="warning",
            access_log=False,
            # SDK clients keep connections open; a server that drops an idle one just as a request goes
            # out makes the SDK retry, which would make request counts flaky.
            timeout_keep_alive=120,
            timeout_graceful_shutdown=2,
        )
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(
            target=self._server.run, kwargs={"sockets": [self._socket]}, name="standin-model-server", daemon=True
        )
        self._thread.start()
        deadline = time.monotonic() + startup_timeout_s
        while not self._server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                self.close()
                raise RuntimeError("the stand-in model server did not start")
            time.sleep(0.01)

    # -- scripting -----------------------------------------------------------------------------------

    def script(self, stage: str, *replies: Reply) -> None:
        """Queue replies for requests of `stage`; each request (each SDK retry too) takes the next one."""
        for reply in replies:
            _check_reply(reply)
        with self._lock:
            self._scripts.setdefault(stage, deque()).extend(replies)

    def otherwise(self, stage: str, reply: Reply) -> None:
        """The reply for `stage` once its queue is empty (default: a 500 saying nothing was scripted)."""
        _check_reply(reply)
        with self._lock:
            self._otherwise[stage] = reply

    def reset(self) -> None:
        """Forget scripts, `otherwise` replies and the request log."""
        with self._lock:
            self._scripts.clear()
            self._otherwise.clear()
            self._requests.clear()

    @property
    def requests(self) -> list[Recorded]:
        """Every request received since the last reset, in order of arrival (a copy)."""
        with self._lock:
            return list(self._requests)

    def count(self, stage: str | None = None, api: str | None = None) -> int:
        """How many requests arrived, optionally only those of one stage and/or one api."""
        with self._lock:
            return sum(
                1
                for request in self._requests
                if (stage is None or request.stage == stage) and (api is None or request.api == api)
            )

    def pending(self, stage: str | None = None) -> int:
        """How many scripted replies are still unused (for one stage, or all)."""
        with self._lock:
            if stage is not None:
                return len(self._scripts.get(stage, ()))
            return sum(len(queue) for queue in self._scripts.values())

    def sdk_client(self, sdk: Any) -> Any:
        """An HTTP client for the `openai` or `anthropic` SDK module that serves this stand-in in this
        process: its requests go straight to the app, on the caller's event loop, with no socket and no
        server thread in between. Each SDK takes a client of the HTTP library it is built on."""
        library = importlib.import_module(sdk.DefaultAsyncHttpxClient.__mro__[1].__module__.split(".")[0])
        return sdk.DefaultAsyncHttpxClient(transport=library.ASGITransport(app=self.app))

    def close(self) -> None:
        """Stop the server and wait for its thread."""
        self._server.should_exit = True
        if self._thread.is_alive():
            self._thread.join(timeout=10)
        self._socket.close()

    def __enter__(self) -> StandIn:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # -- serving -------------------------------------------------------------------------------------

    def _next_reply(self, stage: str) -> Reply | None:
        """The reply for the next request of `stage`, or None when nothing is scripted for it."""
        with self._lock:
            queue = self._scripts.get(stage)
            if queue:
                return queue.popleft()
            return self._otherwise.get(stage)

    async def _handle(self, request: Request) -> Response:
        path = request.url.path
        headers = {key.lower(): value for key, value in request.headers.items()}
        api: Api = "anthropic" if path.startswith("/v1/messages") or "anthropic-version" in headers else "openai"
        raw = await request.body()
        try:
            body: Any = json.loads(raw) if raw else None
        except ValueError:
            body = raw.decode("utf-8", "replace")
        stage = ""
        if isinstance(body, dict):
            stage = _openai_stage(body) if api == "openai" else _anthropic_stage(body)
        recorded = Recorded(api=api, stage=stage, path=path, headers=headers, body=body)
        with self._lock:
            self._requests.append(recorded)
        try:
            return await self._respond(api, stage, request.method, path, headers, body, recorded.received_at)
        except Exception:  # a bug in the stand-in: say so, and tell the SDK not to retry
            detail = traceback.format_exc()
            return JSONResponse(
                _error_body(api, 500, f"stand-in model server bug:\n{detail}"),
                status_code=500,
                headers={"x-should-retry": "false"},
            )

    async def _respond(
        self, api: Api, stage: str, method: str, path: str, headers: dict[str, str], body: Any, arrived: float
    ) -> Response:
        expected = "/v1/chat/completions" if api == "openai" else "/v1/messages"
        if path.rstrip("/") != expected:
            return self._error(api, 404, f"Unknown request URL: {method} {path}. The stand-in serves {expected}.")
        if method != "POST":
            return self._error(api, 405, f"{method} is not allowed on {path}")
        if "authorization" not in headers and "x-api-key" not in headers:
            return self._error(api, 401, "No API key provided (neither Authorization nor x-api-key was sent).")
        if not isinstance(body, dict):
            return self._error(api, 400, "We could not parse the JSON body of your request (expected a JSON object).")
        try:
            if api == "openai":
                _check_openai(body)
            else:
                _check_anthropic(body)
        except _Rejected as rejected:
            return self._error(api, rejected.code, rejected.message, rejected.param)

        reply = self._next_reply(stage)
        if reply is None:
            return JSONResponse(
                _error_body(api, 500, f"stand-in: no reply was scripted for stage {stage!r}"),
                status_code=500,
                headers={"x-should-retry": "false"},
            )
        while isinstance(reply, Delay | Computed):
            if isinstance(reply, Computed):
                reply = reply.make(body)
                _check_reply(reply)
            else:
                arrived += reply.seconds
                await asyncio.sleep(max(0.0, arrived - time.monotonic()))
                reply = reply.then
        if isinstance(reply, Status):
            return self._status(api, stage, reply)
        if api == "openai":
            return JSONResponse(self._openai_reply(body, reply), headers={"x-request-id": self._new_id("req_")})
        return JSONResponse(self._anthropic_reply(body, reply), headers={"request-id": self._new_id("req_")})

    def _new_id(self, prefix: str) -> str:
        return f"{prefix}standin{next(self._ids):08d}"

    def _error(self, api: Api, code: int, message: str, param: str | None = None) -> Response:
        return JSONResponse(_error_body(api, code, message, param), status_code=code)

    def _status(self, api: Api, stage: str, reply: Status) -> Response:
        headers = {}
        if reply.retry_after_s is not None:
            headers["retry-after"] = f"{reply.retry_after_s:g}"
        headers.update(reply.headers or {})
        if reply.body is not None:
            body = reply.body
        else:
            body = _error_body(api, reply.code, f"stand-in: scripted HTTP {reply.code} for stage {stage!r}")
        return JSONResponse(body, status_code=reply.code, headers=headers)

    def _openai_reply(self, body: dict[str, Any], reply: Reply) -> dict[str, Any]:
        content: str | None
        refusal: str | None = None
        finish_reason = "stop"
        if isinstance(reply, Answer):
            content = json.dumps(reply.obj)
        elif isinstance(reply, Raw):
            content = reply.text
        elif isinstance(reply, Refusal):
            content, refusal = None, reply.text
        elif isinstance(reply, Truncated):
            text = json.dumps(reply.obj)
            content, finish_reason = text[: len(text) // 2], "length"
        else:  # pragma: no cover - _check_reply makes this unreachable
            raise TypeError(f"not a reply: {reply!r}")
        prompt_tokens = count_tokens(json.dumps(body["messages"]))
        completion_tokens = count_tokens(content if content is not None else refusal or "")
        return {
            "id": self._new_id("chatcmpl-"),
            "object": "chat.completion",
            "created": int(time.time()),
            "model": body["model"],
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": content, "refusal": refusal, "annotations": []},
                    "logprobs": None,
                    "finish_reason": finish_reason,
                }
            ],
            "usage": {
                "prompt_tokens": prompt_tokens,
                "completion_tokens": completion_tokens,
                "total_tokens": prompt_tokens + completion_tokens,
                "prompt_tokens_details": {"cached_tokens": 0, "audio_tokens": 0},
                "completion_tokens_details": {"reasoning_tokens": 0, "audio_tokens": 0},
            },
            "service_tier": "default",
            "system_fingerprint": "fp_standin",
        }

    def _anthropic_reply(self, body: dict[str, Any], reply: Reply) -> dict[str, Any]:
        stage = _anthropic_stage(body)
        stop_details = None
        if isinstance(reply, Answer | Truncated):
            tool_input = reply.obj if isinstance(reply, Answer) else _first_half(reply.obj)
            text = json.dumps(tool_input)
            block: dict[str, Any] = {"type": "tool_use", "id": self._new_id("toolu_"), "name": stage, "input": tool_input}
            stop_reason = "tool_use" if isinstance(reply, Answer) else "max_tokens"
        elif isinstance(reply, Raw | Refusal):
            text = reply.text
            block = {"type": "text", "text": text}
            stop_reason = "end_turn" if isinstance(reply, Raw) else "refusal"
            if isinstance(reply, Refusal):
                stop_details = {"type": "refusal", "category": None, "explanation": None}
        else:  # pragma: no cover - _check_reply makes this unreachable
            raise TypeError(f"not a reply: {reply!r}")
        message: dict[str, Any] = {
            "id": self._new_id("msg_"),
            "type": "message",
            "role": "assistant",
            "model": body["model"],
            "content": [block],
            "stop_reason": stop_reason,
            "stop_sequence": None,
            "usage": {
                "input_tokens": count_tokens(json.dumps(body["messages"])),
                "output_tokens": count_tokens(text),
                "cache_creation_input_tokens": 0,
                "cache_read_input_tokens": 0,
                "service_tier": "standard",
            },
        }
        if stop_details is not None:
            message["stop_details"] = stop_details
        return message


def _first_half(obj: dict[str, Any] | list[Any]) -> dict[str, Any] | list[Any]:
    if isinstance(obj, dict):
        items = list(obj.items())
        return dict(items[: len(items) // 2])
    return obj[: len(obj) // 2]


def _check_reply(reply: object) -> None:
    if not isinstance(reply, _REPLY_TYPES):
        raise TypeError(f"not a stand-in reply: {reply!r} (use Answer, Raw, Refusal, Status, Delay or Truncated)")
    if isinstance(reply, Delay):
        if reply.seconds < 0:
            raise ValueError("Delay.seconds must not be negative")
        _check_reply(reply.then)
