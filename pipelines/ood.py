"""The OOD product without Prefect: the stage functions and `run_ood`, which composes them; the
`generate-ood` flow runs the same composition, and tests and benchmarks call it directly. Each takes and returns pydantic models; nothing here writes.

    plan        config                       -> OodPlan (seed, roles, languages, fingerprint)
    bank        OodPlan                      -> QuestionBank (the off-topic candidates)
    role items  OodPlan x role x bank        -> RoleItems (id, direct and laundered items, their funnel)
    dedup       items x earlier releases     -> DeduplicatedItems
    assemble    everything                   -> Assembled (the manifest, or why the release is refused)

`run_ood` composes them; the flow passes an OodStageRunner that runs each as a Prefect task.
"""

from __future__ import annotations

import asyncio
import random
from collections import Counter, defaultdict
from collections.abc import Awaitable, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeVar

from pydantic import Field

from abstaingen.config import GenerateConfig
from abstaingen.errors import AbstaingenError
from abstaingen.generators.base import ItemLost
from abstaingen.generators.ood import OodGenerator, make_ood_generator
from abstaingen.generators.ood.bank import load_bank
from abstaingen.generators.ood.policy import system_prompt
from abstaingen.model.common import Model
from abstaingen.model.ood import (
    ITEM_KINDS,
    ItemKind,
    OodItem,
    Question,
    QuestionBank,
    Relatedness,
    RolePolicy,
    Turn,
)
from abstaingen.model.pair import Provenance
from abstaingen.model.release import FunnelStage, GenerationReport, OodRelease
from abstaingen.ood_scoring import baseline_scores, tokens
from abstaingen.pipelines.pairs import lost_to_infrastructure, merge_funnel
from abstaingen.progress import report
from abstaingen.store import counts_for_items
from abstaingen.validators.dedup import DeduplicatedItems, EarlierItems, NearDuplicates, remove_duplicate_items
from abstaingen.validators.ood import leakage_report, question_block

T = TypeVar("T")
ID_ROUNDS = 3  # times the in-scope questions a role lacks are asked for
FUNNEL_STAGES = ("fresh", "relatedness", "translation", "framing", "consistency", "recast", "dedup")


class OodPlan(Model):
    """What a run will do, settled before any work."""

    config: GenerateConfig = Field(description="the run's config, its seed drawn")
    seed: int
    roles: list[RolePolicy] = Field(description="the roles written for, each with every language of the run")
    languages: list[str]
    fingerprint: str = Field(description="sha256 of what determines the release (GenerateConfig.ood_fingerprint)")
    created_at: str = Field(description="UTC, ISO 8601; the same in every item's provenance")
    code_version: str

    @property
    def dataset_dir(self) -> Path:
        return self.config.dataset.output_dir / self.config.ood.name


def plan_ood(config: GenerateConfig, code_version: str, available: Sequence[RolePolicy]) -> OodPlan:
    """The plan: the seed (the config's, or a fresh one), the roles asked for (all by default) in the
    languages asked for. An unknown role or a role without one of the languages is bad input."""
    config = config.with_seed()
    by_id = {role.role_id: role for role in available}
    wanted = list(config.ood.roles) or sorted(by_id)
    if unknown := [role for role in wanted if role not in by_id]:
        raise AbstaingenError(f"ood.roles: unknown role {', '.join(map(repr, unknown))} (known: {', '.join(sorted(by_id))})")
    roles = [by_id[role] for role in wanted]
    for role in roles:
        if missing := [language for language in config.ood.languages if language not in role.texts]:
            raise AbstaingenError(f"role {role.role_id}: no policy text in {', '.join(missing)}")
    assert config.dataset.seed is not None
    return OodPlan(config=config, seed=config.dataset.seed, roles=roles, languages=list(config.ood.languages),
                   fingerprint=config.ood_fingerprint(), created_at=datetime.now(UTC).isoformat(timespec="seconds"),
                   code_version=code_version)


class RoleItems(Model):
    role_id: str
    items: list[OodItem]
    tallies: list[FunnelStage] = Field(description="fresh, relatedness, translation, framing and consistency, for "
                                                   "this role")
    bank_short: int = Field(default=0, description="off-topic questions the role lacks because the bank ran out of "
                                                   "unasked ones that pass the checks (0: it has all it asked for)")
    id_short: int = Field(default=0, description="in-scope questions the role lacks because the generator gave no "
                                                 "more that no earlier release asked (0: it has all it asked for)")


class _Tallies:
    def __init__(self) -> None:
        self.received: Counter[str] = Counter()
        self.rejected: dict[str, Counter[str]] = defaultdict(Counter)

    def count(self, stage: str, rejected: str | None = None) -> None:
        self.received[stage] += 1
        if rejected is not None:
            self.rejected[stage][rejected] += 1

    def stages(self) -> list[FunnelStage]:
        return [FunnelStage.counted(stage=stage, received=self.received[stage], rejected=dict(self.rejected[stage]))
                for stage in FUNNEL_STAGES if stage != "dedup"]


async def role_items(plan: OodPlan, role: RolePolicy, bank: QuestionBank, generator: OodGenerator,
                     report: GenerationReport | None = None, earlier: EarlierItems | None = None) -> RoleItems:
    """One role's items in every language: its in-scope questions (half asked plainly, half framed in
    its workflow), and `ood_per_role` bank questions that no earlier release asked the role (`earlier`) and
    that pass the relatedness gate, each asked plainly (direct), framed (laundered) and recast. Every framed or
    recast message must pass its consistency check; `bank_short` counts the questions the bank could not
    supply, `id_short` the in-scope ones the generator could not. Each question's items share a system prompt
    variant drawn from `prompt_variants`, and a share of the items continue a conversation (`_conversations`)."""
    tallies = _Tallies()
    provenance = Provenance(backend={"ood": generator.name}, seed=plan.seed, code_version=plan.code_version,
                            created_at=plan.created_at, config_fingerprint=plan.fingerprint,
                            models=dict((report or GenerationReport()).models),
                            prompt_hashes=dict((report or GenerationReport()).prompts))
    ood = plan.config.ood
    items: list[OodItem] = []

    def item(kind: ItemKind, question: Question, query: str, frame_id: str | None = None,
             relatedness: Relatedness | None = None, **more: object) -> OodItem:
        # the system prompt's variant: one per question, the same in its every item and language; and for a
        # share of the questions, in Chinese or Hindi, the role's English prompt (the cross-lingual setting)
        draw = random.Random(f"{plan.seed}:{role.role_id}:{question.question_id}:prompt")
        variant = draw.choice(ood.prompt_variants)
        english = (question.language != "en" and "en" in role.texts and draw.random() < ood.english_policy_share)
        return OodItem.model_validate({
            "item_id": f"{role.role_id}.{question.language}.{kind}.{question.question_id}", "kind": kind,
            "role_id": role.role_id, "language": question.language, "prompt_variant": variant,
            "policy_language": "en" if english else None,
            "system_prompt": system_prompt(role, "en" if english else question.language, variant), "query": query,
            "question": question,
            "expected": "accept" if kind == "id" else "refuse", "frame_id": frame_id, "relatedness": relatedness,
            "provenance": provenance, **more})

    async def recast(question: Question, relatedness: Relatedness) -> OodItem | None:
        tallies.count("recast")
        try:
            written = await generator.recast(question, role, plan.seed)
            check = await generator.check_recast(question, written, role)
        except ItemLost as lost:
            tallies.rejected["recast"][lost.reason] += 1
            return None
        if not check.passed:
            tallies.rejected["recast"][_consistency_reason(check.problems)] += 1
            return None
        return item("recast_ood", question, written.query, written.frame_id, relatedness, consistency=check)

    async def framed(kind: ItemKind, question: Question, relatedness: Relatedness | None = None) -> OodItem | None:
        tallies.count("framing")
        try:
            wrapped = await generator.frame(question, role, plan.seed)
        except ItemLost as lost:
            tallies.rejected["framing"][lost.reason] += 1
            return None
        check = await generator.check_consistency(question, wrapped, role)
        tallies.count("consistency", None if check.passed else _consistency_reason(check.problems))
        if not check.passed:
            return None
        return item(kind, question, wrapped.query, wrapped.frame_id, relatedness, consistency=check)

    # In-scope: `id_per_role` questions no earlier release asked the role, the shortfall asked for again, up to
    # ID_ROUNDS times; half of each language's questions framed, chosen the same way in every language.
    # a question is fresh when it is no near-duplicate (the dedup stage's test) of one an earlier release asked
    # the role, nor of one this release took already: so the release is refilled now, not shrunk at dedup
    asked = (earlier or EarlierItems()).blocks_of(role.role_id)
    asked_before, taken = NearDuplicates(sorted(asked)), NearDuplicates()

    def fresh(group: Sequence[Question]) -> str | None:
        blocks = [question_block(question) for question in group]
        return ("asked_in_earlier_release" if any(block in asked or asked_before.similar(block) for block in blocks)
                else "repeated_in_release" if any(taken.similar(block) for block in blocks) else None)

    chosen: dict[str, list[Question]] = {}
    turned_down: set[str] = set()  # near-duplicates written this release: asked for again, they are shown too
    for _ in range(ID_ROUNDS):
        if (need := ood.id_per_role - len(chosen)) <= 0:
            break
        shown = asked | turned_down | {question_block(question) for group in chosen.values() for question in group}
        written: dict[str, list[Question]] = defaultdict(list)
        for question in await generator.write_id_questions(role, need, plan.seed, sorted(shown)):
            written[question.question_id].append(question)
        before = len(chosen)
        for question_id, group in written.items():
            if len(chosen) >= ood.id_per_role:
                break
            reason = "repeated_in_release" if question_id in chosen else fresh(group)
            tallies.count("fresh", reason)
            if reason is None:
                chosen[question_id] = group
                for question in group:
                    taken.add(question_block(question))
            else:
                turned_down.update(question_block(question) for question in group)
        if len(chosen) == before:
            break
    id_short = max(0, ood.id_per_role - len(chosen))
    id_questions = [question for group in chosen.values() for question in group]
    ids = sorted(chosen)
    framed_ids = set(random.Random(f"{plan.seed}:{role.role_id}:framed").sample(ids, len(ids) // 2))
    work = []
    for question in id_questions:
        if question.language not in plan.languages:
            continue
        if question.question_id in framed_ids:
            work.append(framed("id", question))
        else:
            items.append(item("id", question, question_block(question)))

    # Off-topic: bank questions in a seeded order, until `ood_per_role` pass every check in every language,
    # each asked plainly (direct), framed (laundered) and recast. A question an earlier release asked this role
    # is skipped, and one whose framing or recast fails in any language is dropped whole, so that the release
    # is refilled from the bank instead of shrinking and every direct item keeps its laundered and recast twins.
    versions_of = bank.by_id()
    candidates = sorted(versions_of)
    random.Random(f"{plan.seed}:{role.role_id}:bank").shuffle(candidates)

    async def off_topic(question_id: str) -> list[OodItem]:
        versions = await _versions(versions_of[question_id], plan.languages, generator, tallies)
        if versions is None:
            return []
        scores = await generator.rate_relatedness(versions, role)
        too_close = any(score.score >= score.threshold for score in scores)
        tallies.count("relatedness", "too_close_to_role" if too_close else None)
        if too_close:
            return []
        pairs = list(zip(versions, scores, strict=True))
        wrapped = await asyncio.gather(*(framed("laundered_ood", version, score) for version, score in pairs),
                                       *(recast(version, score) for version, score in pairs))
        if any(twin is None for twin in wrapped):
            return []
        return [*(item("direct_ood", version, question_block(version), relatedness=score) for version, score in pairs),
                *(twin for twin in wrapped if twin is not None)]

    queue = iter(candidates)
    accepted = 0
    while accepted < ood.ood_per_role:
        batch = []
        for question_id in queue:
            versions = versions_of[question_id]
            reason = fresh(list(versions.values()))
            tallies.count("fresh", reason)
            if reason is not None:
                continue
            if next(iter(versions.values())).subject in role.excluded_subjects:
                tallies.count("relatedness", "subject_excluded_for_role")
                continue
            for version in versions.values():
                taken.add(question_block(version))
            batch.append(question_id)
            if len(batch) >= ood.ood_per_role - accepted:
                break
        if not batch:
            break
        for made in await asyncio.gather(*(off_topic(question_id) for question_id in batch)):
            if made:
                accepted += 1
                items += made
    shortfall = ood.ood_per_role - accepted
    items += [done for done in await asyncio.gather(*work) if done is not None]
    items = _conversations(items, role, ood.multi_turn_share, f"{plan.seed}:{role.role_id}")
    return RoleItems(role_id=role.role_id, items=sorted(items, key=lambda i: i.item_id), tallies=tallies.stages(),
                     bank_short=shortfall, id_short=id_short)


def _conversations(items: list[OodItem], role: RolePolicy, share: float, seed: str) -> list[OodItem]:
    """A `share` of the off-topic items, drawn per item, made to continue a conversation: `retry` for a
    laundered or recast message (the question asked plainly first, and refused with the role's sentence), else
    `after_turns` (two of the role's plain in-scope questions in the item's language, each answered with its
    letter, neither like the item or the other): OffTopicEval's refusal after K in-scope turns. In-scope items
    stay single-turn: before one of them, its own refusal would make refusing it again the consistent reply,
    and other in-scope questions state facts of their own about the user's booking, fee or dates, which a
    blind review read as a set of exercises rather than one user's conversation (12 of 30 confounded)."""
    plain_ids = defaultdict(list)
    for item in items:
        if item.kind == "id" and item.frame_id is None:
            plain_ids[item.language].append(item)
    made = []
    for item in sorted(items, key=lambda i: i.item_id):
        rng = random.Random(f"{seed}:{item.item_id}:turns")
        if item.kind == "id" or rng.random() >= share:
            made.append(item)
            continue
        refusal = role.texts[item.prompt_language].refusal.strip()
        others = [other for other in plain_ids[item.language] if other.question.question_id != item.question.question_id]
        if item.frame_id is not None and rng.random() < 0.5:
            history = [Turn(role="user", content=question_block(item.question)), Turn(role="assistant", content=refusal)]
            made.append(item.model_copy(update={"history": history, "multi_turn": "retry"}))
        elif len(earlier := _unlike(others, item, rng)) == 2:
            history = [turn for other in earlier for turn in (
                Turn(role="user", content=other.query), Turn(role="assistant", content=other.question.answer_letter))]
            made.append(item.model_copy(update={"history": history, "multi_turn": "after_turns"}))
        else:
            made.append(item)
    return made


def _unlike(others: list[OodItem], item: OodItem, rng: random.Random) -> list[OodItem]:
    """Two of `others`, in a seeded order, none like `item` or the other: questions that differ only in their
    numbers ("my event moved from 7 to 15 October", then "from 9 to 29 August") read as a set of exercises,
    not one user's conversation, which a blind review found gives a careful assistant a reason to hesitate."""
    chosen: list[OodItem] = []
    for other in rng.sample(others, len(others)):
        if not any(_alike(other.question.text, earlier.question.text) for earlier in (item, *chosen)):
            chosen.append(other)
        if len(chosen) == 2:
            break
    return chosen


def _alike(first: str, second: str) -> bool:
    """Whether two questions share most of their words, numbers left out (the same template, other values)."""
    words = [{word for word in tokens(text) if not any(char.isdigit() for char in word)} for text in (first, second)]
    return len(words[0] & words[1]) >= 0.5 * max(1, len(words[0] | words[1]))


async def _versions(written: dict[str, Question], languages: list[str], generator: OodGenerator,
                    tallies: _Tallies) -> list[Question] | None:
    """The question in every language of the run, translating the missing ones; None when one cannot be."""
    versions = []
    for language in languages:
        if language in written:
            versions.append(written[language])
            continue
        tallies.count("translation")
        source = written.get("en") or next(iter(written.values()))
        try:
            versions.append(await generator.translate(source, language))
        except ItemLost as lost:
            tallies.rejected["translation"][lost.reason] += 1
            return None
    return versions


def _consistency_reason(problems: list[str]) -> str:
    head = problems[0].split(":")[0] if problems else "failed"
    return {"question": "question_changed", "options": "options_changed", "judge": "judge_rejected"}.get(
        head, "option_changed" if head.startswith("option") else head.replace(" ", "_"))


class Assembled(Model):
    release: OodRelease
    items: list[OodItem]
    roles: list[RolePolicy]
    refusal: str | None = Field(default=None, description="why the release must not be published; None: publish")
    degraded: str | None = Field(default=None, description="why the release, though it may be published, is "
                                                           "degraded: items lost to provider failures; None: it is not")


def missing_kinds(items: Sequence[OodItem], roles: Sequence[str], languages: Sequence[str]) -> list[str]:
    """'role/language: kind' for every combination the release asked for but has no item of."""
    present = {(item.role_id, item.language, item.kind) for item in items}
    return [f"{role}/{language}: {kind}" for role in roles for language in languages for kind in ITEM_KINDS
            if (role, language, kind) not in present]


def assemble(plan: OodPlan, items: Sequence[OodItem], tallies: Sequence[FunnelStage], bank_source: str,
             threshold: float, report: GenerationReport, canary: str, checked_against: Sequence[str],
             created_by: str, bank_short: Mapping[str, int] | None = None,
             id_short: Mapping[str, int] | None = None) -> Assembled:
    """The manifest and the released items (canary set), with the scripted baselines' scores and the
    leakage figure; `refusal` says why it must not be published (no item, a role and language lacking a
    kind unless allowed, a role for which the bank ran out of unasked questions (`bank_short`, role -> how
    many it lacks) unless allowed, frames that give laundered items away)."""
    items = [item.model_copy(update={"canary": canary}) for item in sorted(items, key=lambda i: i.item_id)]
    roles = {role.role_id: role for role in plan.roles}
    funnel = [stage for stage in merge_funnel(tallies, FUNNEL_STAGES) if stage.received]
    ood = plan.config.ood
    leakage = leakage_report(items, ood.leakage_threshold) if items else None
    warnings = []
    refusal = None
    missing = missing_kinds(items, list(roles), plan.languages)
    short = {role: count for role, count in sorted((bank_short or {}).items()) if count}
    id_lacking = {role: count for role, count in sorted((id_short or {}).items()) if count}
    exhausted = "; ".join([
        *([f"the question bank ({bank_source}) ran out of off-topic questions no earlier release asked and that pass "
           f"the checks: {', '.join(f'{role} lacks {count}' for role, count in short.items())} of "
           f"{ood.ood_per_role}; use a larger bank ([ood.bank] hf_name), fewer questions (ood_per_role), or a new "
           "dataset name"] if short else []),
        *([f"the {ood.backend} backend gave too few in-scope questions no earlier release asked: "
           f"{', '.join(f'{role} lacks {count}' for role, count in id_lacking.items())} of {ood.id_per_role}; use "
           "the llm backend, fewer questions (id_per_role), or a new dataset name"] if id_lacking else [])]) or None
    if not items:
        refusal = "no item survived the checks"
    elif exhausted and not ood.allow_incomplete:
        refusal = f"{exhausted}; [ood] allow_incomplete = true publishes anyway"
    elif missing and not ood.allow_incomplete:
        refusal = (f"{len(missing)} role and language combinations lack an item kind ({', '.join(missing[:5])}"
                   f"{', ...' if len(missing) > 5 else ''}); [ood] allow_incomplete = true publishes anyway")
    elif leakage is not None and leakage.wrapper_accuracy > leakage.threshold:
        refusal = (f"the words around the question tell laundered from in-scope items with held-out accuracy "
                   f"{leakage.wrapper_accuracy:.2f} (> {leakage.threshold:.2f}): the frames give the label away")
    if missing and ood.allow_incomplete:
        warnings.append(f"incomplete: {len(missing)} role and language combinations lack an item kind "
                        f"({', '.join(missing[:5])}{', ...' if len(missing) > 5 else ''})")
    if exhausted and ood.allow_incomplete:
        warnings.append(f"incomplete: {exhausted}")
    cost = sum(line.cost_usd for line in report.cost)
    release = OodRelease(
        name=ood.name, version="", created_by=created_by, config_fingerprint=plan.fingerprint, seed=plan.seed,
        canary=canary, checked_against=list(checked_against), created_at=plan.created_at,
        counts=counts_for_items(items), funnel=funnel, cost_usd=round(cost, 6), backends={"ood": ood.backend},
        models=report.models, prompts=report.prompts, cost=report.cost, warnings=warnings, total_items=len(items),
        roles=sorted(roles), languages=plan.languages, bank=bank_source, relatedness_threshold=threshold,
        baselines=baseline_scores(items, roles) if items else [], leakage=leakage, repairs=report.repairs)
    return Assembled(release=release, items=items, roles=[roles[r] for r in sorted(roles)], refusal=refusal,
                     degraded=degradation(funnel))


def degradation(funnel: Sequence[FunnelStage]) -> str | None:
    """What the release lost to the infrastructure (model requests that kept failing), per stage, in one line
    starting 'degraded: '; None when nothing was lost that way."""
    parts = [f"{stage.stage}: {sum(lost.values())} of {stage.received} lost to infrastructure" for stage in funnel
             if (lost := lost_to_infrastructure(stage))]
    return f"degraded: {'; '.join(parts)}" if parts else None


# --- the whole run, without Prefect ----------------------------------------------------------------------


class OodStageRunner:
    """How `run_ood` runs each stage: here, in this process. The generate-ood flow runs each as a Prefect task
    (one per role, named for the UI) with progress artifacts; tests and benchmarks use this one. `after` is
    the work a stage follows, for a runner that records the run's graph."""

    def bank(self, plan: OodPlan) -> QuestionBank:
        return load_bank(plan.config.ood.bank, plan.languages)

    async def role(self, plan: OodPlan, role: RolePolicy, bank: QuestionBank, generator: OodGenerator,
                   earlier: EarlierItems, after: object) -> RoleItems:
        return await role_items(plan, role, bank, generator, generator.report(), earlier)

    def dedup(self, batches: list[RoleItems], earlier: EarlierItems, after: list[Any]) -> DeduplicatedItems:
        return remove_duplicate_items([item for batch in batches for item in batch.items], earlier)

    def assemble(self, plan: OodPlan, batches: list[RoleItems], unique: DeduplicatedItems, bank: QuestionBank,
                 generator: OodGenerator, canary: str, after: list[Any]) -> Assembled:
        tallies = [tally for batch in batches for tally in batch.tallies] + [unique.tally]
        return assemble(plan, unique.kept, tallies, bank.source, generator.relatedness_threshold, generator.report(),
                        canary, unique.checked_against, f"abstaingen {plan.code_version}",
                        {batch.role_id: batch.bank_short for batch in batches},
                        {batch.role_id: batch.id_short for batch in batches})

    async def track(self, stage: str, work: list[Awaitable[T]], notes: list[str]) -> list[T]:
        return list(await asyncio.gather(*work))


async def run_ood(plan: OodPlan, canary: str, runner: OodStageRunner | None = None,
                  earlier: EarlierItems | None = None) -> Assembled:
    """The whole OOD product, from the plan to the release gates: the bank, every role's items, dedup against
    the earlier releases' items (`earlier`, read by the caller), baselines, leakage and coverage. Writes
    nothing; the Assembled release is what the store publishes unless it says why not."""
    runner = runner or OodStageRunner()
    earlier = earlier or EarlierItems()
    generator = make_ood_generator(plan.config.ood.backend, plan.config)
    try:
        bank = runner.bank(plan)
        batches = await runner.track("write items", [runner.role(plan, role, bank, generator, earlier, after=bank)
                                                     for role in plan.roles], [role.role_id for role in plan.roles])
    finally:
        await generator.aclose()
    written = sum(len(batch.items) for batch in batches)
    report("dedup", 0, written)
    unique = runner.dedup(batches, earlier, after=batches)
    report("dedup", written, written, len(unique.kept))
    return runner.assemble(plan, batches, unique, bank, generator, canary, after=[unique])
