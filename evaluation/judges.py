"""The reply judge of an evaluation: the offline `rules` judge, or a model named as Inspect names models
(`openai/gpt-4.1`, `anthropic/claude-…`, `openai-api/<service>/<model>`) asked with the `llm` reply judge's
prompt (prompts/judge_reply.j2) through Inspect's model API, so it uses the same providers, keys,
retries and cache as the evaluated model."""

from __future__ import annotations

import json
from functools import cache

from inspect_ai.model import ChatMessageSystem, ChatMessageUser, GenerateConfig, Model, ResponseSchema, get_model
from inspect_ai.util import json_schema
from pydantic import ValidationError

from abstaingen.errors import AbstaingenError
from abstaingen.prompts import render
from abstaingen.providers.drafts import strict_schema
from abstaingen.reply_judges import ReplyInput, ReplyJudge, ReplyVerdict, get_judge
from abstaingen.reply_judges.llm import STAGE, ReplyVerdictDraft

ATTEMPTS = 3


class InspectModelJudge:
    """The `llm` reply judge's prompt and verdict, asked of an Inspect model."""

    def __init__(self, model: str | Model):
        self.model = model
        self.name = f"llm:{model if isinstance(model, str) else model.name}"

    async def judge(self, item: ReplyInput) -> ReplyVerdict:
        prompt = render(STAGE, schema=json.dumps(strict_schema(ReplyVerdictDraft)), instruction=item.instruction,
                        deliverable=item.deliverable.value, reply=item.reply,
                        withheld=json.dumps(item.withheld, ensure_ascii=False) if item.withheld else "(none)")
        config = GenerateConfig(response_schema=ResponseSchema(name="reply_verdict",
                                                               json_schema=json_schema(ReplyVerdictDraft)))
        problem = ""
        for _ in range(ATTEMPTS):
            output = await get_model(self.model).generate(
                [ChatMessageSystem(content=prompt.system), ChatMessageUser(content=prompt.user + problem)],
                config=config)
            text = output.completion.strip().removeprefix("```json").removeprefix("```").removesuffix("```")
            try:
                answer = ReplyVerdictDraft.model_validate_json(text)
            except ValidationError as exc:
                problem = f"\n\nYour last answer did not fit the schema ({exc.errors()[0]['msg']}); answer again."
                continue
            return ReplyVerdict(abstains=answer.judged_abstention, flags_problem=answer.flags_problem,
                                discloses=answer.discloses, reason=answer.reason, kind=answer.kind)
        raise AbstaingenError(f"the reply judge {self.model} gave no verdict that fits the schema in {ATTEMPTS} tries")


@cache
def reply_judge(model: str | None = None) -> ReplyJudge:
    """The rules judge, or the model `model` as the judge."""
    return get_judge("rules") if model is None else InspectModelJudge(model)
