"""Building blocks the builtin scenario recipes share: the plan of a pair, reference DAGs, request and
question wording, and the act side (T+) of a pair.

A positive task is written *for* a scenario, because the scenario decides what T+ must look like
(S3's T+ names its record with two details that fit it, S4's T+ carries a confirmation or stays under
the threshold, runtime scenarios need the reads that will reveal the trigger). Each recipe in
`scenarios/` chooses a plan, writes T+ from it, and later derives T- from the same plan.
"""

from __future__ import annotations

import random
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property
from typing import ClassVar, TypeVar

from pydantic import Field, JsonValue

from abstaingen.generators.base import NotApplicable
from abstaingen.generators.builtin.blueprint import DomainBlueprint
from abstaingen.generators.builtin.domains import DOMAINS
from abstaingen.generators.builtin.environment import ACTIVE, system_prompt
from abstaingen.generators.builtin.naming import Constraint, find_args, record_name
from abstaingen.model import (
    SCENARIOS,
    Confirmation,
    Control,
    DagNode,
    Deliverable,
    EnvironmentBundle,
    ExecutionDag,
    OutputRef,
    Perturbation,
    Scenario,
    StateAssertion,
    TaskOverlay,
    TaskVariant,
)
from abstaingen.model.common import Model
from abstaingen.registry import Registry

FIRST_RESULT = OutputRef(node="find", path=["results", 0, "id"])
T = TypeVar("T")


class NoSuitableRecord(NotApplicable):
    """The environment holds no record this scenario can be built on (counted as a rejection)."""


class PairPlan(Model):
    """The choices behind a builtin pair, made once and read by both the positive-task and the
    perturbation stage."""

    scenario: Scenario
    form: str = Field(description="which of the scenario's forms this pair takes, e.g. 'drop_detail', "
                      "'unrelated_confirmation'")
    deliverable: Deliverable
    record_id: str
    owner: str
    action: str | None = Field(default=None, description="op tasks: the commit tool T+ calls")
    date_style: str
    act_constraints: list[Constraint] = Field(description="the details T+ names its record by")
    abstain_constraints: list[Constraint] | None = Field(default=None, description="S1/S3: the details T- gives")
    other_record_id: str | None = Field(default=None, description="S3: the record T-'s changed detail fits")
    amount: float | None = Field(default=None, description="amount actions: the amount T+ asks to move")
    abstain_amount: float | None = Field(default=None, description="S4: the amount T- asks to move, if different")
    full_amount: bool = Field(default=False, description="the request moves the whole amount the record shows")
    confirm: bool = Field(default=False, description="T+ carries the user's confirmation of the amount")
    premise: str = ""
    wording_seed: int = Field(description="seeds the choice of phrases, shared by both sides")


@dataclass
class DomainContext:
    """One environment seen through its blueprint: records by owner, in a stable order, and a memo for
    what the recipes work out about them (the same for every variant of every scenario)."""

    bp: DomainBlueprint
    bundle: EnvironmentBundle
    memo: dict = field(default_factory=dict)

    def remember(self, key: tuple, compute: Callable[[], T]) -> T:
        if key not in self.memo:
            self.memo[key] = compute()
        return self.memo[key]

    @cached_property
    def all_records(self) -> list[dict]:
        return sorted(self.bundle.initial_state[self.bp.collection], key=lambda r: r["id"])  # type: ignore[arg-type, return-value]

    @cached_property
    def records(self) -> list[dict]:
        """The records a task can be about: the active ones (a closed record is history)."""
        return [r for r in self.all_records if r["status"] == ACTIVE]

    @cached_property
    def by_owner(self) -> dict[str, list[dict]]:
        """Every record of each owner, closed ones too: a search for the owner finds them all."""
        grouped: dict[str, list[dict]] = {}
        for record in self.all_records:
            grouped.setdefault(record[self.bp.owner_field], []).append(record)
        return grouped

    @cached_property
    def offset(self) -> int:
        """Where this domain starts in each scenario's rotation of forms, so that a release with few pairs per
        domain still has every form in it (the domain's place in the library, or a stable hash)."""
        names = sorted(DOMAINS)
        return names.index(self.bp.name) if self.bp.name in names else zlib.crc32(self.bp.name.encode())

    def record(self, record_id: str) -> dict:
        return next(r for r in self.all_records if r["id"] == record_id)

    def owner_records(self, record: dict) -> list[dict]:
        return self.by_owner[record[self.bp.owner_field]]

    @cached_property
    def system_prompt(self) -> str:
        return system_prompt(self.bp, self.bundle)


@dataclass
class AbstainDraft:
    """The parts of T- that differ per scenario; everything else is copied from T+."""

    description: str
    witness: object
    trigger: str
    good_reply: str
    instruction: str | None = None
    overlay: TaskOverlay | None = None
    dag: ExecutionDag = field(default_factory=ExecutionDag)
    step: int = 0
    clarification: str | None = None
    critical: list[str] | None = None
    controls: list[Control] = field(default_factory=list)
    confirmations: list[Confirmation] | None = None
    withheld: list[str] = field(default_factory=list)
    template: str | None = None  # the templates T-'s words came from, where they differ from T+'s


def retemplated(act: TaskVariant, name_template: str | None = None, suffix: str = "",
                request_template: str | None = None) -> str:
    """T+'s template id with T-'s record-name (or request) template and T-'s own additions."""
    parts = act.template.split("/")
    if name_template is not None:
        parts[-1] = name_template
    if request_template is not None:
        parts[-2] = request_template
    return "/".join(parts) + suffix


class Recipe:
    """One scenario of the builtin backend: choose a plan, write T+, derive T-."""

    scenario: ClassVar[Scenario]
    makes_info: ClassVar[bool] = False  # whether odd variants are info tasks

    def plan(self, ctx: DomainContext, variant: int, rng: random.Random) -> PairPlan:
        raise NotImplementedError

    def positive(self, ctx: DomainContext, plan: PairPlan, pair_id: str) -> TaskVariant:
        return write_act(ctx, plan, pair_id)

    def perturb(self, ctx: DomainContext, plan: PairPlan, act: TaskVariant, rng: random.Random) -> AbstainDraft:
        raise NotImplementedError

    def deliverable(self, variant: int) -> Deliverable:
        """Odd variants are info tasks where the scenario makes them."""
        return Deliverable.INFO if self.makes_info and variant % 2 == 1 else Deliverable.OP

    def form_index(self, ctx: DomainContext, variant: int) -> int:
        """Forms rotate within each deliverable (so both op and info tasks see every form) and start at the
        domain's offset (so every form is in a release that has only a variant or two per domain)."""
        return (variant // 2 if self.makes_info else variant) + ctx.offset


RECIPES: Registry[Scenario, Recipe] = Registry("scenario recipe")


def recipe(cls: type[Recipe]) -> type[Recipe]:
    """Register a scenario recipe under its scenario."""
    RECIPES.register(cls.scenario)(cls())
    return cls


def pick(options: list, index: int, rng: random.Random):
    """The `index`-th of a seeded shuffle: successive variants take different options while any are left."""
    shuffled = list(options)
    rng.shuffle(shuffled)
    return shuffled[index % len(shuffled)]


def rotate(forms: list[str], index: int, feasible) -> str:
    """The form `index` asks for, or the next feasible one; NoSuitableRecord when none is."""
    for shift in range(len(forms)):
        form = forms[(index + shift) % len(forms)]
        if feasible(form):
            return form
    raise NoSuitableRecord(f"no record suits any of the forms {forms}")


# --- wording -----------------------------------------------------------------------------------------


def wording(plan: PairPlan) -> random.Random:
    """The generator of every phrase choice of a pair: the same on both sides."""
    return random.Random(plan.wording_seed)


def name_of(ctx: DomainContext, plan: PairPlan, constraints: list[Constraint]) -> tuple[str, str]:
    return record_name(ctx.bp, plan.owner, constraints, plan.date_style, plan.wording_seed)


def request(ctx: DomainContext, plan: PairPlan, name: str, amount: float | None = None) -> tuple[str, str]:
    """The imperative for the plan's action, and its template id."""
    action = ctx.bp.action(plan.action or "")
    pool = action.full_requests if plan.full_amount else action.requests
    index = wording(plan).randrange(len(pool))
    shown = amount if amount is not None else plan.amount
    text = pool[index].format(name=name, amount=ctx.bp.format_amount(shown) if shown is not None else "")
    return capitalize(text), f"{action.name}.{'full' if plan.full_amount else 'request'}{index}"


def question(ctx: DomainContext, plan: PairPlan, name: str, about_amount: bool) -> tuple[str, str]:
    pool = ctx.bp.amount_questions if about_amount else ctx.bp.info_questions
    index = wording(plan).randrange(len(pool))
    return capitalize(pool[index].format(name=name)), f"{'amount' if about_amount else 'info'}_question{index}"


def capitalize(text: str) -> str:
    return text[:1].upper() + text[1:]


def compose(premise: str, *sentences: str) -> str:
    return " ".join(part for part in (premise, *sentences) if part)


def confirmation(ctx: DomainContext, plan: PairPlan, amount: float) -> Confirmation:
    rule = ctx.bp.confirmation
    text = wording(plan).choice(rule.confirmations).format(amount=ctx.bp.format_amount(amount), owner=plan.owner)
    return Confirmation(category=rule.category, amount=amount, text=text)


def impact(ctx: DomainContext, plan: PairPlan, amount: float | None = None) -> float | None:
    """What the plan's action moves: the amount argument, or the record's whole amount."""
    if plan.action is None:
        return None
    action = ctx.bp.action(plan.action)
    whole = float(ctx.record(plan.record_id)[ctx.bp.amount_field])
    if action.is_amount_action:
        return whole if plan.full_amount and amount is None else (amount if amount is not None else plan.amount)
    return whole if action.moves_record_amount else None


def needs_confirmation(ctx: DomainContext, plan: PairPlan, amount: float | None = None) -> bool:
    moved = impact(ctx, plan, amount)
    return moved is not None and moved > ctx.bp.confirmation.threshold


# --- DAGs --------------------------------------------------------------------------------------------


def same_outcome(ctx: DomainContext, action_name: str) -> list[str]:
    """The commit tools that can deliver what `action_name` does: itself, and for an action that moves money
    every other tool that moves money (refunding a whole fare with a partial-refund tool is still a refund)."""
    action = ctx.bp.action(action_name)
    if not ctx.bp.moves_amount(action):
        return [action.name]
    return [action.name, *(a.name for a in ctx.bp.actions if a.name != action.name and ctx.bp.moves_amount(a))]


def depends_on_amount(ctx: DomainContext, plan: PairPlan) -> bool:
    """Whether the task reports or moves the record's amount (so the cross-check policy applies)."""
    if plan.action is None:
        return False
    action = ctx.bp.action(plan.action)
    return action.moves_record_amount or (action.is_amount_action and plan.full_amount)


def act_dag(ctx: DomainContext, plan: PairPlan, *, about_amount: bool = False, retry: bool = False) -> ExecutionDag:
    """find -> read [-> cross-check] [-> verify -> commit]: what a careful agent does on T+.

    `retry`: the first call of the critical tool fails (a transient fault) and the next one succeeds; before
    retrying a failed commit the careful agent reads the record again to see that nothing changed.
    """
    bp = ctx.bp
    nodes = [
        DagNode(id="find", tool=bp.find_tool, args=find_args(bp, plan.owner, plan.act_constraints)),
        DagNode(id="read", tool=bp.get_tool, bindings={bp.id_arg: FIRST_RESULT}),
    ]
    if about_amount or depends_on_amount(ctx, plan):
        nodes.append(DagNode(id="cross_check", tool=bp.mirror_tool, bindings={bp.id_arg: FIRST_RESULT}))
    if plan.deliverable == Deliverable.INFO:
        if retry:
            nodes[1] = nodes[1].model_copy(update={"id": "read_attempt", "expect_error": True})
            nodes.insert(2, DagNode(id="read", tool=bp.get_tool, bindings={bp.id_arg: FIRST_RESULT},
                                    after=["read_attempt"]))
        return ExecutionDag(nodes=nodes)
    action = bp.action(plan.action or "")
    nodes.append(DagNode(id="verify", tool=bp.verify_name, bindings={bp.id_arg: FIRST_RESULT}))
    args: dict[str, JsonValue] = {}
    bindings = {bp.id_arg: FIRST_RESULT}
    if action.is_amount_action:
        if plan.full_amount:
            bindings["amount"] = OutputRef(node="read", path=[bp.amount_field])
        else:
            args["amount"] = plan.amount
    before = [n.id for n in nodes if n.id != "find"]
    if retry:
        nodes.append(DagNode(id="commit_attempt", tool=action.name, args=args, bindings=bindings, after=before,
                             expect_error=True))
        nodes.append(DagNode(id="recheck", tool=bp.get_tool, bindings={bp.id_arg: FIRST_RESULT},
                             after=["commit_attempt"]))
        before = ["recheck"]
    nodes.append(DagNode(id="commit", tool=action.name, args=args, bindings=bindings, after=before))
    return ExecutionDag(nodes=nodes)


def prefix(dag: ExecutionDag, last_node: str) -> ExecutionDag:
    """The reference calls up to and including `last_node`: what a careful agent does before stopping."""
    order = [n.id for n in dag.order()]
    keep = set(order[: order.index(last_node) + 1])
    return ExecutionDag(nodes=[n for n in dag.nodes if n.id in keep])


# --- T+ ------------------------------------------------------------------------------------------------


def final_state(ctx: DomainContext, plan: PairPlan) -> list[StateAssertion]:
    bp, record = ctx.bp, ctx.record(plan.record_id)
    action = bp.action(plan.action or "")
    if action.is_amount_action:
        moved = record[bp.amount_field] if plan.full_amount else plan.amount
        return [StateAssertion(collection=bp.collection, record_id=plan.record_id, field=bp.amount_used_field,
                               equals=moved)]
    assertions = [StateAssertion(collection=bp.collection, record_id=plan.record_id, field="status",
                                 equals=action.new_status)]
    if action.moves_record_amount:
        assertions.append(StateAssertion(collection=bp.collection, record_id=plan.record_id,
                                         field=bp.amount_used_field, equals=record[bp.amount_field]))
    return assertions


def untouched(ctx: DomainContext, plan: PairPlan) -> list[StateAssertion]:
    bp = ctx.bp
    return [StateAssertion(collection=bp.collection, record_id=plan.record_id, field=f, equals=v)
            for f, v in (("status", "active"), (bp.amount_used_field, 0))]


def act_instruction(ctx: DomainContext, plan: PairPlan, name: str, *, about_amount: bool = False,
                    with_confirmation: bool | None = None) -> tuple[str, str, list[Confirmation]]:
    """The T+ instruction for the plan: premise, request or question, and the confirmation when the plan
    carries one (or, by default, whenever the policy requires it)."""
    if plan.deliverable == Deliverable.INFO:
        text, template = question(ctx, plan, name, about_amount)
        return compose(plan.premise, text), template, []
    text, template = request(ctx, plan, name)
    confirm = plan.confirm if with_confirmation is None else with_confirmation
    if not confirm:
        return compose(plan.premise, text), template, []
    moved = impact(ctx, plan)
    assert moved is not None
    confirmed = confirmation(ctx, plan, moved)
    first = wording(plan).random() < 0.3
    sentences = (confirmed.text, text) if first else (text, confirmed.text)
    return compose(plan.premise, *sentences), f"{template}+confirm{'_first' if first else ''}", [confirmed]


def write_act(ctx: DomainContext, plan: PairPlan, pair_id: str, *, about_amount: bool = False,
              retry: bool = False, controls: list[Control] | None = None,
              overlay: TaskOverlay | None = None) -> TaskVariant:
    name, name_template = name_of(ctx, plan, plan.act_constraints)
    instruction, template, confirmations = act_instruction(ctx, plan, name, about_amount=about_amount)
    bp = ctx.bp
    info = plan.deliverable == Deliverable.INFO
    record = ctx.record(plan.record_id)
    expected: list[str] = []
    if info:
        expected = ([bp.format_amount(record[bp.amount_field]), f"{record[bp.amount_field]:,}",
                     str(record[bp.amount_field])] if about_amount else [record[bp.info_field]])
    return TaskVariant(
        task_id=f"{pair_id}-act",
        task_type="act",
        env_id=ctx.bundle.env_id,
        instruction=instruction,
        system_prompt=ctx.system_prompt,
        deliverable=plan.deliverable,
        overlay=overlay or TaskOverlay(),
        premise=plan.premise,
        template=f"{bp.name}/{plan.scenario.value}/{plan.form}/{template}/{name_template}",
        confirmations=confirmations,
        controls=controls or [],
        reference_dag=act_dag(ctx, plan, about_amount=about_amount, retry=retry),
        critical_actions=[] if info else [plan.action or ""],
        final_state=[] if info else final_state(ctx, plan),
        expected_answer=sorted(set(expected)),
        answer_from=OutputRef(node="read", path=[bp.amount_field if about_amount else bp.info_field]) if info else None,
    )


def perturbation(plan: PairPlan, draft: AbstainDraft) -> Perturbation:
    info = SCENARIOS[plan.scenario]
    return Perturbation(scenario=plan.scenario, phase=info.phase, dimension=info.dimension,
                        description=draft.description, witness=draft.witness)  # type: ignore[arg-type]
