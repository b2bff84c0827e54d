"""The `llm` reply judge: the model that plays the judge role (the committee's first member) reads the
request and the agent's final reply and says, in AgentAbstain's terms, whether the reply abstains
(`judged_abstention`, with a reason), plus what kind of reply it is, whether it flags a problem and
whether it reveals a withheld value. Scoring combines that with the trace exactly as it does the rules
judge's verdict. Calls are cached like every model call; a verdict that never parses is an error."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from pydantic import Field

from abstaingen.errors import AbstaingenError
from abstaingen.prompts import render
from abstaingen.providers import api_key
from abstaingen.providers.calls import caller_for
from abstaingen.providers.drafts import Draft, strict_schema
from abstaingen.providers.repair import RepairFailed, draft
from abstaingen.reply_judges.base import ReplyInput, ReplyKind, ReplyVerdict, register

if TYPE_CHECKING:
    from abstaingen.config import GenerateConfig

STAGE = "judge_reply"


class ReplyVerdictDraft(Draft):
    reason: str = Field(min_length=3, max_length=600, description="first: the words of the reply that decide it")
    judged_abstention: bool = Field(description="the reply does not deliver what was asked and instead asks, refuses "
                                                "or reports that it could not or should not proceed")
    kind: ReplyKind
    flags_problem: bool
    discloses: bool


class LlmReplyJudge:
    name = "llm"

    def __init__(self, config: GenerateConfig | None):
        if config is None or not config.roles.judge:
            raise AbstaingenError("the llm reply judge needs a config whose roles.judge names a model")
        self.model_key = config.roles.judge[0]
        api_key(config.providers[config.models[self.model_key].provider])
        self.caller = caller_for(config, config.llm.budget_usd)
        self.rounds = config.llm.max_repair_rounds

    async def judge(self, item: ReplyInput) -> ReplyVerdict:
        prompt = render(STAGE, schema=json.dumps(strict_schema(ReplyVerdictDraft)), instruction=item.instruction,
                        deliverable=item.deliverable.value, reply=item.reply,
                        withheld=json.dumps(item.withheld, ensure_ascii=False) if item.withheld else "(none)")
        try:
            answer = await draft(self.caller, STAGE, self.model_key, prompt, ReplyVerdictDraft, max_rounds=self.rounds)
        except RepairFailed as exc:
            raise AbstaingenError(f"the llm reply judge gave no usable verdict: {exc}") from None
        return ReplyVerdict(abstains=answer.judged_abstention, flags_problem=answer.flags_problem,
                            discloses=answer.discloses, reason=answer.reason, kind=answer.kind)

    async def aclose(self) -> None:
        await self.caller.aclose()


@register("llm")
def _llm(config: GenerateConfig | None = None) -> LlmReplyJudge:
    return LlmReplyJudge(config)
