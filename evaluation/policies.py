"""Scripted policies as an Inspect model provider: `--model abstaingen/<policy>` plays a fixed policy
through the same task, tools, simulated user and scorer as a real model, so every metric can be checked
against numbers worked out by hand. Inspect finds the provider through the `inspect_ai` entry point.

A policy reads the side it is on from the sample's store (set by the task's solver), never from the
label. Pairs: `oracle` (the side's reference solution; on an abstain side it stops where a careful agent
can know and says why; asked, then told, it does T+), `always_act` (T+'s solution on both sides),
`always_abstain`, `do_nothing`, `asks_then_completes` (asks before any call; told, it does T+),
`acts_then_warns` (T+'s solution, then a warning). OOD: `oracle`, `answer_all`, `refuse_all`.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from inspect_ai.model import (
    ChatMessage,
    ChatMessageTool,
    ChatMessageUser,
    GenerateConfig,
    ModelAPI,
    ModelOutput,
    ModelUsage,
    modelapi,
)
from inspect_ai.tool import ToolChoice, ToolInfo
from inspect_ai.util import store

from abstaingen.errors import AbstaingenError
from abstaingen.evaluation.samples import OOD_SAMPLE, SAMPLE, side_of
from abstaingen.model import ExecutionDag, JsonValue, TaskPair, TaskVariant
from abstaingen.registry import Registry
from abstaingen.sandboxes.replay import DagRun
from abstaingen.validators.baselines import BASELINES, ScriptedAgent


@dataclass(frozen=True)
class PairPolicy:
    """A scripted agent on a pair, and what it does once the user has answered its question."""

    agent: ScriptedAgent
    told: ScriptedAgent | None = None  # after a clarification (None: it says the first reply again)


def _ask(variant: TaskVariant, pair: TaskPair, run: DagRun) -> str:
    return "Before I change anything: could you tell me exactly which record you mean and what you want done?"


def _warn(variant: TaskVariant, pair: TaskPair, run: DagRun) -> str:
    done = BASELINES["oracle"].reply(pair.act, pair, run)
    return f"{done} Warning: I noticed a problem with this request that you may want to check."


_act = ScriptedAgent("act", plan=lambda variant, pair: pair.act.reference_dag,
                     reply=lambda variant, pair, run: BASELINES["oracle"].reply(pair.act, pair, run))
PAIR_POLICIES: Registry[str, PairPolicy] = Registry("scripted pair policy")
for _name in ("always_act", "always_abstain", "do_nothing"):
    PAIR_POLICIES.register(_name)(PairPolicy(BASELINES[_name]))
PAIR_POLICIES.register("oracle")(PairPolicy(BASELINES["oracle"], told=_act))
PAIR_POLICIES.register("asks_then_completes")(PairPolicy(
    ScriptedAgent("asks_then_completes", plan=lambda variant, pair: ExecutionDag(), reply=_ask), told=_act))
PAIR_POLICIES.register("acts_then_warns")(PairPolicy(
    ScriptedAgent("acts_then_warns", plan=lambda variant, pair: pair.act.reference_dag, reply=_warn)))


def _phase(messages: list[ChatMessage]) -> tuple[int, list[ChatMessageTool]]:
    """How many user messages came (1: the request; 2: the request and an answer), and the tool results
    since the last one."""
    users = [i for i, m in enumerate(messages) if isinstance(m, ChatMessageUser)]
    return len(users), [m for m in messages[users[-1] + 1:] if isinstance(m, ChatMessageTool)]


def _result(message: ChatMessageTool) -> JsonValue:
    if message.error is not None:
        return {"error": message.error.message}
    try:
        value: JsonValue = json.loads(message.text)
    except ValueError:
        value = message.text
    return value


def next_pair_step(policy: PairPolicy, pair: TaskPair, side: TaskVariant, messages: list[ChatMessage]
                   ) -> tuple[str, dict[str, Any]] | str:
    """The policy's next tool call (name, arguments), or its final reply."""
    users, results = _phase(messages)
    agent = policy.told if users > 1 and policy.told is not None else policy.agent
    nodes = agent.plan(side, pair).order()
    # as execute_dag keeps them: a call that failed unexpectedly gives no output, and the plan stops there
    outputs: dict[str, JsonValue] = {node.id: _result(m) for node, m in zip(nodes, results)
                                     if m.error is None or node.expect_error}
    failed = len(outputs) < len(results)
    if len(results) < len(nodes) and not failed:
        node = nodes[len(results)]
        try:
            return node.tool, node.resolve_args(outputs)
        except LookupError:
            pass  # an earlier call did not give what this one needs: stop, as execute_dag does
    return agent.reply(side, pair, DagRun(outputs=outputs))


# --- OOD ----------------------------------------------------------------------------------------------

OodReply = Callable[[Any, Any, str], str]  # (item, role text, suffix) -> reply


def _ood_policies() -> dict[str, OodReply]:
    from abstaingen.ood_scoring import always_accept, always_refuse, correct_reply

    return {"oracle": correct_reply, "answer_all": always_accept, "refuse_all": always_refuse}


class ScriptedPolicyModel(ModelAPI):
    """`abstaingen/<policy>`: the policy's next move on the sample being run."""

    def __init__(self, model_name: str, base_url: str | None = None, api_key: str | None = None,
                 config: GenerateConfig | None = None, **model_args: Any) -> None:
        super().__init__(model_name, base_url, api_key, [], config or GenerateConfig())
        known = set(PAIR_POLICIES) | set(_ood_policies())
        if model_name not in known:
            raise AbstaingenError(f"no scripted policy {model_name!r}; the policies are {', '.join(sorted(known))}")

    async def generate(self, input: list[ChatMessage], tools: list[ToolInfo], tool_choice: ToolChoice,
                       config: GenerateConfig) -> ModelOutput:
        where = store()
        if (ood := where.get(OOD_SAMPLE)) is not None:
            output = ModelOutput.from_content(f"abstaingen/{self.model_name}", self._ood_reply(ood))
        else:
            output = self._pair_move(where.get(SAMPLE), input)
        output.usage = ModelUsage(input_tokens=0, output_tokens=0, total_tokens=0)
        return output

    def _pair_move(self, sample: dict[str, str] | None, messages: list[ChatMessage]) -> ModelOutput:
        if sample is None:
            raise AbstaingenError("a scripted policy runs only inside abstaingen's evaluation tasks")
        if self.model_name not in PAIR_POLICIES:
            raise AbstaingenError(f"{self.model_name} is a policy for the OOD dataset, not for task pairs")
        pair, side = side_of(sample["folder"], sample["task_id"])
        move = next_pair_step(PAIR_POLICIES.find(self.model_name), pair, side, messages)
        if isinstance(move, str):
            return ModelOutput.from_content(f"abstaingen/{self.model_name}", move)
        tool, args = move
        return ModelOutput.for_tool_call(f"abstaingen/{self.model_name}", tool, args, content="")

    def _ood_reply(self, sample: dict[str, str]) -> str:
        from abstaingen.evaluation.ood_task import item_and_role

        policies = _ood_policies()
        if self.model_name not in policies:
            raise AbstaingenError(f"{self.model_name} is a policy for task pairs, not for the OOD dataset")
        item, role = item_and_role(sample["folder"], sample["item_id"])
        suffix = "p_ground" if sample["suffix"] == "offtopiceval" else sample["suffix"]  # both open with [Yes]/[No]
        return policies[self.model_name](item, role, suffix)


@modelapi(name="abstaingen")
def scripted() -> type[ModelAPI]:
    return ScriptedPolicyModel
