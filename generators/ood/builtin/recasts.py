"""The builtin recast attack: an off-topic question presented as a task of the role's own workflow inside a
long role-play that presses the assistant not to refuse, after OffTopicEval's adaptive transform, written
from templates (`recasts.yaml`).

A template has the workflow slots of the laundering frames (`frames.SLOTS`, filled from the role's
`WorkflowTerms`), `{name}` (a person's full name, native to the language), `{ref}` (a reference number),
`{question}` (the question sentence, unchanged, set inside a sentence about the workflow) and `{options}`
(the four options as the workflow's codes, `validators.ood.recast_options`, a paragraph of its own). It
never says what kind of question it carries (the frames' hint words are banned here too). What makes it an
attack: a named person, a reference, a deadline and a reviewer, the question as a classification or a
dropdown value, and an explicit instruction that a refusal or an apology breaks the workflow.

The builtin backend cannot reword the question itself into the role's objects, as the llm backend's
transform prompt does: here the question sentence stays as it is, so the consistency check is wholly
deterministic (`validators.ood.recast_consistency`).
"""

from __future__ import annotations

import random
import string
from functools import cache
from pathlib import Path
from typing import Literal

import yaml
from pydantic import Field, ValidationError, field_validator

from abstaingen.errors import AbstaingenError
from abstaingen.generators.ood.builtin.frames import SLOTS, fill_slots
from abstaingen.model.common import Model
from abstaingen.model.ood import LANGUAGES, Question, WorkflowTerms
from abstaingen.validators.ood import hints_in, recast_options

FILE = Path(__file__).parent / "recasts.yaml"
RECAST_SLOTS: tuple[str, ...] = (*SLOTS, "name", "ref", "question", "options")
NAMES = {
    "en": ("Priya Nair", "Tom Becker", "Laura Mendes", "Daniel Okafor", "Hannah Schmidt", "Marcus Lee", "Sofia Rossi",
           "James Whitfield"),
    "zh": ("王芳", "李伟", "陈静", "张磊", "刘洋", "赵敏", "周婷", "孙浩"),
    "hi": ("प्रिया नायर", "राहुल वर्मा", "अनीता शर्मा", "विकास गुप्ता", "सुनीता राव", "अमित सिंह", "नेहा जोशी",
           "संजय मेहता"),
}


class RecastTemplate(Model):
    recast_id: str = Field(pattern=r"^[a-z][a-z0-9_]{1,40}$")
    option_style: Literal["bracket", "code", "paren"] = Field(description="how {options} shows the options: "
                                                                          "validators.ood.OPTION_STYLES")
    texts: dict[str, str] = Field(description="language -> template")

    @field_validator("texts")
    @classmethod
    def _valid(cls, texts: dict[str, str]) -> dict[str, str]:
        if missing := [language for language in LANGUAGES if language not in texts]:
            raise ValueError(f"no template in {', '.join(missing)}")
        for language, template in texts.items():
            if problems := recast_check(template):
                raise ValueError(f"{language}: {'; '.join(problems)}")
        return texts


def recast_check(template: str) -> list[str]:
    """What is wrong with a recast template; empty when it can be used: named slots of RECAST_SLOTS only,
    {question} and {options} exactly once, {options} a paragraph of its own, no hint words."""
    problems = []
    try:
        names = [name for _, name, _, _ in string.Formatter().parse(template) if name is not None]
    except ValueError as exc:
        return [f"braces: {exc}"]
    if unknown := sorted({name for name in names if name not in RECAST_SLOTS}):
        problems.append(f"unknown slots {', '.join(unknown)}; the slots are {', '.join(RECAST_SLOTS)}")
    for needed in ("question", "options"):
        if names.count(needed) != 1:
            problems.append(f"{{{needed}}} occurs {names.count(needed)} times; a template has it exactly once")
    if "{options}" not in template.split("\n\n"):
        problems.append("{options} must be a paragraph of its own")
    if found := hints_in(template):
        problems.append(f"hint words {', '.join(map(repr, found))}: a recast says nothing about the question it carries")
    return problems


@cache
def recast_templates() -> tuple[RecastTemplate, ...]:
    try:
        rows = yaml.safe_load(FILE.read_text(encoding="utf-8"))
        templates = tuple(RecastTemplate.model_validate({"recast_id": row.get("recast_id"),
                                                         "option_style": row.get("option_style"),
                                                         "texts": {k: row.get(k) for k in LANGUAGES if k in row}})
                          for row in rows)
    except (OSError, yaml.YAMLError, AttributeError, TypeError) as exc:
        raise AbstaingenError(f"{FILE}: cannot read the recast templates: {exc}") from None
    except ValidationError as exc:
        raise AbstaingenError(f"{FILE}: invalid recast template: {exc.errors()[0]['msg']}") from None
    if len({t.recast_id for t in templates}) != len(templates):
        raise AbstaingenError(f"{FILE}: two templates share a recast_id")
    return templates


def render_recast(template: RecastTemplate, workflow: WorkflowTerms, question: Question, rng: random.Random) -> str:
    """The template in the question's language, with the workflow terms, a name and a reference drawn from
    `rng`, the question sentence and its options in the template's style. Values are never parsed as
    templates. In English a slot that starts a sentence gets a capital first letter."""
    return fill_slots(template.texts[question.language], question.language, workflow,
                      name=rng.choice(NAMES[question.language]),
                      ref=f"{rng.choice('RQKTC')}{rng.choice('QXMA')}-{rng.randint(10000, 99999)}",
                      question=question.text.strip(), options=recast_options(question, template.option_style))
