"""The builtin (offline) OOD backend: the roles' own in-scope questions (roles/*.yaml), the lexical
relatedness gate, frames drawn from the generic and the role's own frames, recasts from the templates of
recasts.yaml, and the deterministic checks."""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import TYPE_CHECKING

from abstaingen.generators.base import ItemLost
from abstaingen.generators.ood.base import register_ood_generator
from abstaingen.generators.ood.builtin.frames import frames_for, render_frame
from abstaingen.generators.ood.builtin.recasts import recast_templates, render_recast
from abstaingen.generators.ood.builtin.roles import builtin_roles
from abstaingen.generators.ood.builtin.task_templates import TaskTemplate, task_questions
from abstaingen.model.ood import ConsistencyCheck, FramedQuery, Question, Relatedness, RolePolicy
from abstaingen.model.release import GenerationReport
from abstaingen.validators.ood import (
    LEXICAL_THRESHOLD,
    lexical_relatedness,
    question_block,
    recast_consistency,
    verbatim_consistency,
)

if TYPE_CHECKING:
    from abstaingen.config import GenerateConfig


HAND_WRITTEN_PER_RELEASE = 4  # of a role's 12 (how-to, definition, scenario, calculation); the rest are task questions


@register_ood_generator("builtin")
class BuiltinOodGenerator:
    name = "builtin"

    def __init__(self, config: GenerateConfig):
        self.relatedness_threshold = config.ood.relatedness_threshold or LEXICAL_THRESHOLD
        self.questions = {role.policy.role_id: role.questions for role in builtin_roles()}
        self.templates: dict[str, list[TaskTemplate]] = {role.policy.role_id: role.templates
                                                         for role in builtin_roles()}

    async def write_id_questions(self, role: RolePolicy, count: int, seed: int, asked: Sequence[str] = ()
                                 ) -> list[Question]:
        """Questions the role was not asked before: up to HAND_WRITTEN_PER_RELEASE of its hand-written ones
        (roles/*.yaml, drawn by the seed), then task questions drawn from its task_templates (task_templates.py).
        A few hand-written ones per release, not all of them in the first: two datasets begun from different
        seeds would otherwise share every hand-written question."""
        seen = set(asked)

        def was_asked(group: list[Question]) -> bool:
            return any(question_block(question) in seen for question in group)

        versions: dict[str, list[Question]] = {}
        for question in self.questions.get(role.role_id, []):
            versions.setdefault(question.question_id, []).append(question)
        written = [group for group in versions.values() if not was_asked(group)]
        random.Random(f"{seed}:{role.role_id}:id").shuffle(written)
        chosen = written[:min(count, HAND_WRITTEN_PER_RELEASE)]
        chosen += task_questions(role.role_id, self.templates.get(role.role_id, []), count - len(chosen), seed,
                                 was_asked)
        return [question for group in chosen for question in group if question.language in role.texts]

    async def translate(self, question: Question, language: str) -> Question:
        raise ItemLost("no_translation", f"{question.question_id}: the builtin backend has no {language} version of "
                                         "this question (the llm backend translates)")

    async def rate_relatedness(self, versions: list[Question], role: RolePolicy) -> list[Relatedness]:
        return [lexical_relatedness(version, role.texts[version.language], self.relatedness_threshold)
                for version in versions]

    async def frame(self, question: Question, role: RolePolicy, seed: int) -> FramedQuery:
        text = role.texts[question.language]
        frames = frames_for(text, question.language)
        chosen = random.Random(f"{seed}:{role.role_id}:{question.language}:{question.question_id}:frame").choice(frames)
        return FramedQuery(query=render_frame(chosen, text.workflow, question_block(question)), frame_id=chosen.frame_id)

    async def check_consistency(self, question: Question, framed: FramedQuery, role: RolePolicy) -> ConsistencyCheck:
        return verbatim_consistency(question, framed.query)

    async def recast(self, question: Question, role: RolePolicy, seed: int) -> FramedQuery:
        rng = random.Random(f"{seed}:{role.role_id}:{question.language}:{question.question_id}:recast")
        template = rng.choice(recast_templates())
        return FramedQuery(query=render_recast(template, role.texts[question.language].workflow, question, rng),
                           frame_id=template.recast_id)

    async def check_recast(self, question: Question, recast: FramedQuery, role: RolePolicy) -> ConsistencyCheck:
        return recast_consistency(question, recast.query)

    def report(self) -> GenerationReport:
        return GenerationReport()

    async def aclose(self) -> None:
        return None
