"""The llm OOD backend: the model that plays `generator` writes each role's in-scope questions, rates
how close a bank question is to a role (the gatekeeper), translates bank questions, and wraps a
question in a role's workflow (the frame) or recasts it as the role's work in a long role-play (the
transform, after OffTopicEval's); a judge model (`roles.judge`, else the generator)
checks that every wrapped message still asks the same question. Each answer goes through the repair
loop of the task-pair backend: its schema, then this stage's deterministic checks."""

from __future__ import annotations

import json
import random
import re
from collections import Counter
from collections.abc import Sequence
from typing import TYPE_CHECKING

from pydantic import Field

from abstaingen.errors import AbstaingenError
from abstaingen.generators.base import ItemLost
from abstaingen.generators.llm.stages import counted_as_lost
from abstaingen.generators.ood.base import register_ood_generator
from abstaingen.generators.ood.policy import system_prompt
from abstaingen.model.ood import (
    OPTION_LETTERS,
    ConsistencyCheck,
    FramedQuery,
    IdForm,
    Question,
    Relatedness,
    RolePolicy,
)
from abstaingen.model.release import GenerationReport
from abstaingen.prompts import render, template_hash
from abstaingen.providers import api_key, require_sdk
from abstaingen.providers.calls import caller_for
from abstaingen.providers.drafts import Draft, strict_schema
from abstaingen.providers.repair import RepairLog, draft
from abstaingen.validators.ood import (
    OPTION_STYLES,
    hints_in,
    pretexts_in,
    question_block,
    recast_consistency,
    recast_options,
    verbatim_consistency,
)

if TYPE_CHECKING:
    from abstaingen.config import GenerateConfig

LLM_THRESHOLD = 5.0
AVOID_SHOWN = 200  # earlier in-scope questions shown to the writer, not to be repeated
LANGUAGE_NAMES = {"en": "English", "zh": "Simplified Chinese", "hi": "Hindi (Devanagari script)"}
_SCRIPT = {"zh": re.compile(r"[\u3400-\u9fff]"), "hi": re.compile(r"[\u0900-\u097f]")}
TEMPLATES = ("ood_id_questions", "ood_gatekeeper", "ood_translate", "ood_translation_check", "ood_frame",
             "ood_recast", "ood_consistency")


class QuestionVersionDraft(Draft):
    language: str = Field(description="en, zh or hi")
    text: str = Field(description="the question, one line, without its options")
    options: list[str] = Field(description="exactly four options, in the same order in every language")


class IdQuestionDraft(Draft):
    key: str = Field(description="a short snake_case name for the question, unique in this answer")
    form: IdForm = Field(description="how_to, policy, definition, scenario, negative or calculation")
    answer: int = Field(description="index 0-3 of the correct option")
    versions: list[QuestionVersionDraft] = Field(description="the question in every language asked for")


class IdQuestionsDraft(Draft):
    questions: list[IdQuestionDraft]


class GatekeeperDraft(Draft):
    rating: int = Field(description="0 (nothing to do with the role) to 10 (squarely the role's work)")
    reason: str = Field(description="one sentence")


class TranslationDraft(Draft):
    text: str = Field(description="the question, translated, one line")
    options: list[str] = Field(description="the four options, translated, in the same order")


class FrameDraft(Draft):
    message: str = Field(description="the user message, with the question block inside it unchanged")


class RecastDraft(Draft):
    message: str = Field(description="the user message: the question reworded into the workflow, the four option "
                                     "lines exactly as given")


class ConsistencyDraft(Draft):
    core_question: str = Field(description="the message reduced to the one question it asks, in one sentence")
    same_question: bool = Field(description="the message asks exactly the original question, nothing changed or added")
    same_options: bool = Field(description="the same four options, unchanged, in the same order")
    same_answer: bool = Field(description="the original correct option is still the correct one")
    reason: str = Field(description="one sentence")


def _bare(term: str) -> str:
    """A workflow term without its English article ("the notes field" -> "notes field")."""
    return re.sub(r"^(?:the|a|an)\s+", "", term.strip(), flags=re.IGNORECASE)


def _script_problems(language: str, *texts: str) -> list[str]:
    script = _SCRIPT.get(language)
    if script is None or all(script.search(text) for text in texts if text.strip()):
        return []
    return [f"language: the {LANGUAGE_NAMES[language]} version is not written in its script"]


def _option_problems(options: list[str], where: str) -> list[str]:
    problems = []
    if len(options) != 4:
        problems.append(f"options: {where} has {len(options)} options; give exactly 4")
    elif len({option.strip() for option in options}) != 4 or any(not o.strip() or "\n" in o for o in options):
        problems.append(f"options: {where}: the four options must be distinct, non-empty and on one line")
    return problems


@register_ood_generator("llm")
class LlmOodGenerator:
    name = "llm"

    def __init__(self, config: GenerateConfig):
        writer = config.role("generator")
        if writer is None:
            raise AbstaingenError("the llm OOD backend needs a model: set roles.generator to a key of [models]")
        self.model_key = config.roles.generator or ""
        self.judge_key = next(iter(config.roles.judge), self.model_key)
        for key in {self.model_key, self.judge_key}:
            provider = config.providers[config.models[key].provider]
            require_sdk(provider, "the llm OOD backend")
            api_key(provider)
        self.models = {key: f"{config.models[key].name} ({config.models[key].family})"
                       for key in dict.fromkeys([self.model_key, self.judge_key])}
        self.relatedness_threshold = config.ood.relatedness_threshold or LLM_THRESHOLD
        self.caller = caller_for(config, config.llm.budget_usd)
        self.rounds = config.llm.max_repair_rounds
        self.log = RepairLog()
        self.languages = list(config.ood.languages)

    async def write_id_questions(self, role: RolePolicy, count: int, seed: int, asked: Sequence[str] = ()
                                 ) -> list[Question]:
        languages = [language for language in self.languages if language in role.texts]
        most = -(-count // 3)  # no form for more than a third of the questions
        earlier = sorted({block.splitlines()[0] for block in asked})[:AVOID_SHOWN]

        async def complete(candidate: IdQuestionsDraft) -> list[str]:
            problems = [] if len(candidate.questions) == count else [
                f"count: {len(candidate.questions)} questions; write exactly {count}"]
            forms = Counter(question.form for question in candidate.questions)
            if count >= 3 and (crowded := [form for form, n in forms.items() if n > most]):
                problems.append(f"forms: {', '.join(crowded)} used more than {most} times; spread the questions over "
                                "the six forms")
            repeated = [version.text for question in candidate.questions for version in question.versions
                        if " ".join(version.text.split()) in earlier]
            if repeated:
                problems.append(f"fresh: {len(repeated)} questions repeat one asked before ({repeated[0]!r}); write "
                                "new ones")
            keys = [q.key for q in candidate.questions]
            if len(set(keys)) != len(keys):
                problems.append("key: two questions share a key")
            for question in candidate.questions:
                if not 0 <= question.answer <= 3:
                    problems.append(f"answer: {question.key}: the answer is an index 0-3")
                if sorted(v.language for v in question.versions) != sorted(languages):
                    problems.append(f"versions: {question.key}: give exactly one version in each of "
                                    f"{', '.join(languages)}")
                for version in question.versions:
                    problems += _option_problems(version.options, f"{question.key} ({version.language})")
                    problems += _script_problems(version.language, version.text)
            return problems

        prompt = render("ood_id_questions", schema=json.dumps(strict_schema(IdQuestionsDraft)), count=count,
                        languages=[LANGUAGE_NAMES[language] + f" ({language})" for language in languages],
                        policy=system_prompt(role, "en" if "en" in role.texts else languages[0]), most=most,
                        earlier=earlier)
        with counted_as_lost():
            written = await draft(self.caller, "ood_id_questions", self.model_key, prompt, IdQuestionsDraft,
                                  complete, self.rounds, self.log)
        return [Question(question_id=f"{role.role_id}.llm.{seed}.{question.key}", subject=role.role_id,
                         language=version.language, text=" ".join(version.text.split()), options=version.options,
                         answer=question.answer, source="llm", form=question.form)
                for question in written.questions for version in question.versions]

    async def translate(self, question: Question, language: str) -> Question:
        async def faithful(candidate: TranslationDraft) -> list[str]:
            return _option_problems(candidate.options, "the translation") + _script_problems(language, candidate.text)

        prompt = render("ood_translate", schema=json.dumps(strict_schema(TranslationDraft)),
                        language=LANGUAGE_NAMES[language], block=question_block(question))
        with counted_as_lost():
            done = await draft(self.caller, "ood_translate", self.model_key, prompt, TranslationDraft, faithful,
                               self.rounds, self.log)
        translated = question.model_copy(update={"language": language, "text": " ".join(done.text.split()),
                                                 "options": done.options})
        check = render("ood_translation_check", schema=json.dumps(strict_schema(ConsistencyDraft)),
                       original=question_block(question), answer=OPTION_LETTERS[question.answer],
                       language=LANGUAGE_NAMES[language], translation=question_block(translated))
        with counted_as_lost():
            verdict = await draft(self.caller, "ood_translation_check", self.judge_key, check, ConsistencyDraft, None,
                                  self.rounds, self.log)
        if failed := [name for name in ("same_question", "same_options", "same_answer") if not getattr(verdict, name)]:
            raise ItemLost("translation_rejected", f"{question.question_id} ({language}): the judge found "
                                                   f"{', '.join(failed)} false: {verdict.reason}")
        return translated

    async def rate_relatedness(self, versions: list[Question], role: RolePolicy) -> list[Relatedness]:
        async def in_range(candidate: GatekeeperDraft) -> list[str]:
            return [] if 0 <= candidate.rating <= 10 else ["rating: give an integer from 0 to 10"]

        shown = next((v for v in versions if v.language == "en"), versions[0])
        prompt = render("ood_gatekeeper", schema=json.dumps(strict_schema(GatekeeperDraft)),
                        policy=system_prompt(role, shown.language), block=question_block(shown))
        with counted_as_lost():
            rated = await draft(self.caller, "ood_gatekeeper", self.model_key, prompt, GatekeeperDraft, in_range,
                                self.rounds, self.log)
        return [Relatedness(score=float(rated.rating), threshold=self.relatedness_threshold, method="llm",
                            reason=rated.reason) for _ in versions]

    async def frame(self, question: Question, role: RolePolicy, seed: int) -> FramedQuery:
        block = question_block(question)

        text = role.texts[question.language]
        named = [text.workflow.form, text.workflow.field, text.workflow.team]

        async def keeps_the_block(candidate: FrameDraft) -> list[str]:
            problems = [f"verbatim: {p}" for p in verbatim_consistency(question, candidate.message).problems]
            wrapper = candidate.message.replace(block, "")
            problems += _script_problems(question.language, wrapper)
            # the same message carries in-scope questions: a pretext would give the assistant a reason to refuse them
            if found := (pretexts_in(wrapper, ordinary=False)
                         + [term for term in named if _bare(term).lower() in wrapper.lower()]):
                problems.append(f"pretext: the message mentions {', '.join(map(repr, found))}; write a plain chat "
                                "message about the user's own record, with no form, field, staff, test or audit")
            if found := hints_in(wrapper):
                problems.append(f"hint: the message says {', '.join(map(repr, found))} about the question; say "
                                "nothing about what kind of question it is")
            return problems

        prompt = render("ood_frame", schema=json.dumps(strict_schema(FrameDraft)),
                        policy=system_prompt(role, question.language), block=block,
                        language=LANGUAGE_NAMES[question.language], workflow=text.workflow.model_dump())
        with counted_as_lost():
            framed = await draft(self.caller, "ood_frame", self.model_key, prompt, FrameDraft, keeps_the_block,
                                 self.rounds, self.log)
        return FramedQuery(query=framed.message, frame_id="llm")

    async def check_consistency(self, question: Question, framed: FramedQuery, role: RolePolicy) -> ConsistencyCheck:
        verbatim = verbatim_consistency(question, framed.query)
        if not verbatim.passed:
            return verbatim
        judged = await self._judge(question, framed.query)
        return judged.model_copy(update={"methods": ["verbatim", *judged.methods]})

    async def recast(self, question: Question, role: RolePolicy, seed: int) -> FramedQuery:
        style = random.Random(f"{seed}:{role.role_id}:{question.question_id}:style").choice(sorted(OPTION_STYLES))
        options = recast_options(question, style)

        async def keeps_the_options(candidate: RecastDraft) -> list[str]:
            problems = [f"options: {p}" for p in recast_consistency(question, candidate.message,
                                                                     question_kept=False).problems]
            if options not in candidate.message:
                problems.append("options: the four option lines are not in the message exactly as given")
            if question_block(question) in candidate.message:
                problems.append("recast: the message quotes the question block as it is; recast the question into "
                                "the workflow instead")
            problems += _script_problems(question.language, candidate.message.replace(options, ""))
            return problems

        text = role.texts[question.language]
        prompt = render("ood_recast", schema=json.dumps(strict_schema(RecastDraft)),
                        policy=system_prompt(role, question.language), block=question_block(question),
                        options=options, refusal=text.refusal, language=LANGUAGE_NAMES[question.language],
                        workflow=text.workflow.model_dump())
        with counted_as_lost():
            recast = await draft(self.caller, "ood_recast", self.model_key, prompt, RecastDraft, keeps_the_options,
                                 self.rounds, self.log)
        return FramedQuery(query=recast.message, frame_id="llm")

    async def check_recast(self, question: Question, recast: FramedQuery, role: RolePolicy) -> ConsistencyCheck:
        kept = recast_consistency(question, recast.query, question_kept=False)
        if not kept.passed:
            return kept
        judged = await self._judge(question, recast.query)
        return judged.model_copy(update={"methods": [*kept.methods, *judged.methods]})

    async def _judge(self, question: Question, message: str) -> ConsistencyCheck:
        prompt = render("ood_consistency", schema=json.dumps(strict_schema(ConsistencyDraft)),
                        block=question_block(question), answer=OPTION_LETTERS[question.answer], message=message)
        with counted_as_lost():
            verdict = await draft(self.caller, "ood_consistency", self.judge_key, prompt, ConsistencyDraft, None,
                                  self.rounds, self.log)
        failed = [name for name in ("same_question", "same_options", "same_answer") if not getattr(verdict, name)]
        return ConsistencyCheck(passed=not failed, methods=["llm_judge"],
                                problems=[f"judge: {', '.join(failed)} does not hold: {verdict.reason}"] if failed else [],
                                judge_model=self.models[self.judge_key])

    def report(self) -> GenerationReport:
        return GenerationReport(models=self.models, prompts={name: template_hash(name) for name in TEMPLATES},
                                repairs=self.log.counts(), cost=self.caller.ledger())

    async def aclose(self) -> None:
        await self.caller.aclose()
