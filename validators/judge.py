"""The judge layer: the last layer of the funnel, where a committee of LLM judges, each of another model
family than the generator, reads every pair that passed the executable layers and answers a rubric per
side (RUBRIC; the scenario's reading of it is in prompts/judge_pair.j2).

- Each member answers every rubric item of both sides, with a reason. Its verdict on a side is accept
  when every item holds.
- The committee decides each item by its rule (majority: holds when more than half of the usable
  verdicts say so, a tie fails; unanimous: when all do); a pair is kept when every item of both sides
  holds. A decision needs usable verdicts from more than half of the committee.
- A member that claims T- can still be completed gives the calls; the route is replayed in the
  sandbox (routes.py). A route that completes rejects the pair whatever the votes; one that fails is a
  judge error, and the pair is not rejected for it.
- A verdict that does not parse goes back to its model with the problems (the repair loop); one that
  never parses, or whose request failed, does not vote and is counted as a judge error.

Calls go through a Caller like every model call, so re-judging unchanged pairs makes no request.
"""

from __future__ import annotations

import asyncio
import json
from collections import Counter
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any, Literal, TypeVar

from pydantic import Field

from abstaingen.errors import AbstaingenError
from abstaingen.model import CheckResult, EnvironmentBundle, ExecutionDag, JsonValue, TaskPair, ToolKind
from abstaingen.model.common import Model
from abstaingen.model.pair import JudgeVerdict, RubricAnswer
from abstaingen.model.perturbation import SCENARIOS
from abstaingen.model.release import CostLine, FunnelStage, JudgeReport, RubricAgreement
from abstaingen.model.task import RecordRef, apply_state_patch, find_record
from abstaingen.prompts import RenderedPrompt, render, template_hash
from abstaingen.providers import ModelConfig, ProviderError, api_key, require_sdk
from abstaingen.providers.calls import BudgetExhausted, caller_for
from abstaingen.providers.drafts import Draft, StepDraft, strict_schema, to_dag
from abstaingen.providers.repair import RepairFailed, RepairLog, draft
from abstaingen.sandboxes.backends import SandboxBackend
from abstaingen.sandboxes.replay import replay
from abstaingen.sandboxes.session import SandboxError, SandboxSession
from abstaingen.store import bundle_in_scratch
from abstaingen.validators.routes import check_route

if TYPE_CHECKING:
    from abstaingen.config import GenerateConfig

STAGE = "judge_pair"
Side = Literal["act", "abstain"]
RUBRIC: dict[Side, tuple[str, ...]] = {
    "act": ("fully_specified", "follows_policies", "solvable", "natural"),
    "abstain": ("abstention_required", "trigger_discoverable", "trigger_material", "label_right", "minimal_change",
                "natural"),
}
# The committee's decision on a pair is a check like any other; these are their names.
ROUTE_COMPLETES = "judge_route_completes"
COMMITTEE = "judge_committee"
NO_VERDICT = "judge_no_verdict"
CHECKS = (ROUTE_COMPLETES, NO_VERDICT, COMMITTEE)


class ItemDraft(Draft):
    reason: str = Field(min_length=3, max_length=600, description="first: one or two sentences naming the words, "
                                                                  "tools or results that decide it")
    holds: bool


class ActRubricDraft(Draft):
    fully_specified: ItemDraft
    follows_policies: ItemDraft
    solvable: ItemDraft
    natural: ItemDraft


class AbstainRubricDraft(Draft):
    abstention_required: ItemDraft
    trigger_discoverable: ItemDraft
    trigger_material: ItemDraft
    label_right: ItemDraft
    minimal_change: ItemDraft
    natural: ItemDraft
    completing_route: list[StepDraft] = Field(max_length=10, description="the calls that still complete T+'s "
                                                                         "outcome under T-; empty when none do")


class PairVerdictDraft(Draft):
    act: ActRubricDraft
    abstain: AbstainRubricDraft


class Member(Model):
    key: str = Field(description="the key of [models]")
    model: ModelConfig

    @property
    def label(self) -> str:
        return f"{self.model.name} ({self.model.family})"


class Ballot(Model):
    """One member's usable answer on one pair: its verdict per side, and its route checked."""

    member: str
    verdicts: list[JudgeVerdict]


class JudgedBatch(Model):
    accepted: list[TaskPair]
    rejected: list[TaskPair]
    funnel: FunnelStage


RESULT_CHARS = 1500  # of each call's result shown to the judge


class Observed(Model):
    """What each side's calls returned in the sandbox: T+'s solution and T-'s calls up to the stop."""

    act: dict[str, JsonValue]
    abstain: dict[str, JsonValue]


async def observe(session: SandboxSession, pair: TaskPair) -> Observed:
    act, twin = await replay(session, [pair.act, pair.abstain], runs=1)
    return Observed(act=act.run.outputs, abstain=twin.run.outputs)


def describe_pair(pair: TaskPair, bundle: EnvironmentBundle, observed: Observed | None = None) -> dict[str, str]:
    """What the judge reads: the tools, the records, both sides with what their calls returned, and what
    T- changed (before and after) and claims."""
    act, twin = pair.act, pair.abstain
    tools = [{"name": t.name, "kind": t.kind.value, "description": t.description, "arguments": t.input_schema,
              "reversible": not bundle.irreversible(t.name) if t.kind == ToolKind.COMMIT else None}
             for t in bundle.tools]

    def steps(dag: ExecutionDag, outputs: dict[str, JsonValue] | None) -> list[dict[str, object]]:
        shown = []
        for n in dag.nodes:
            step: dict[str, object] = {"id": n.id, "tool": n.tool, "arguments": n.args,
                                       "bound": {k: f"{v.node}.{'.'.join(map(str, v.path))}"
                                                 for k, v in n.bindings.items()}}
            if n.expect_error:
                step["expected_to_fail"] = True
            if outputs is not None and n.id in outputs:
                returned = json.dumps(outputs[n.id], ensure_ascii=False)
                step["returned"] = returned if len(returned) <= RESULT_CHARS else returned[:RESULT_CHARS] + " [cut]"
            shown.append(step)
        return shown

    state = apply_state_patch(bundle.initial_state, act.overlay.state_patch)
    target = find_record(state, pair.target) if pair.target else None
    changed = []
    for op in twin.overlay.state_patch:
        before = find_record(state, RecordRef(collection=op.collection, record_id=op.record_id)) or {}
        changed.append({"record": f"{op.collection}/{op.record_id}", "change": op.op,
                        **({"fields": {k: {"T+": before.get(k), "T-": v} for k, v in op.values.items()}}
                           if op.op != "remove" else {})})
    shown_act = {"request": act.instruction, "deliverable": act.deliverable.value,
                 "solution": steps(act.reference_dag, observed.act if observed else None),
                 "critical_actions": act.critical_actions,
                 "done_when": [a.model_dump(mode="json") for a in act.final_state] or
                              {"answer_contains_one_of": act.expected_answer},
                 "target_record": target}
    shown_twin = {
        "request": twin.instruction,
        **({"system_prompt": twin.system_prompt} if twin.system_prompt != act.system_prompt else {}),
        "tools_not_offered": twin.overlay.hidden_tools,
        "tools_that_fail": [b.model_dump(mode="json") for b in twin.overlay.broken_tools],
        "records_changed": changed,
        "claimed_trigger": twin.abstention_trigger,
        "calls_before_stopping": steps(twin.reference_dag, observed.abstain if observed else None),
        "good_reply": twin.good_reply,
        **({"what_the_user_answers_when_asked": twin.clarification} if twin.clarification else {}),
    }
    info = SCENARIOS[pair.perturbation.scenario]
    state_text = json.dumps(state, ensure_ascii=False)
    return {"scenario": info.scenario.value, "scenario_name": info.name,
            "dimension": info.dimension.value.replace("_", " "),
            "system_prompt": act.system_prompt, "tools": json.dumps(tools, ensure_ascii=False),
            "state": state_text if len(state_text) <= STATE_CHARS else state_text[:STATE_CHARS] + " [cut]",
            "act": json.dumps(shown_act, ensure_ascii=False), "abstain": json.dumps(shown_twin, ensure_ascii=False)}


STATE_CHARS = 60_000
T = TypeVar("T")


class JudgeSandbox:
    """One sandbox session for an environment's judging: what each pair's calls return, and the routes
    judges claim, one at a time, each in a fresh episode. A task of its own owns the session (an MCP
    session is closed by the task that opened it)."""

    def __init__(self, bundle: EnvironmentBundle, backend: SandboxBackend):
        self.bundle = bundle
        self.backend = backend
        self._requests: asyncio.Queue[tuple[Callable[[SandboxSession], Awaitable[Any]], asyncio.Future[Any]] | None]
        self._requests = asyncio.Queue()
        self._worker: asyncio.Task[None] | None = None

    async def run(self, work: Callable[[SandboxSession], Awaitable[T]]) -> T | None:
        """`work`'s result; None when the sandbox failed (it is replaced for the next work)."""
        if self._worker is None:
            self._worker = asyncio.create_task(self._serve())
        done: asyncio.Future[T | None] = asyncio.get_running_loop().create_future()
        await self._requests.put((work, done))
        return await done

    async def _serve(self) -> None:
        with bundle_in_scratch(self.bundle) as folder:
            request = await self._requests.get()
            while request is not None:
                try:
                    async with SandboxSession(folder, self.backend) as session:
                        while request is not None:
                            work, done = request
                            try:
                                done.set_result(await work(session))
                            except SandboxError:
                                raise
                            except Exception as exc:  # noqa: BLE001 - the waiting judge raises it
                                done.set_exception(exc)
                            request = await self._requests.get()
                except SandboxError:
                    if request is not None and not request[1].done():
                        request[1].set_result(None)
                    request = await self._requests.get()

    async def aclose(self) -> None:
        if self._worker is not None:
            await self._requests.put(None)
            await self._worker
            self._worker = None


class Committee:
    """The run's judges, their caller (cache, ledger, budget, breaker) and what went wrong with verdicts."""

    def __init__(self, config: GenerateConfig, budget_usd: float | None = None):
        if not config.roles.judge:
            raise AbstaingenError("the judge layer needs roles.judge: one or more keys of [models]")
        self.members = [Member(key=key, model=config.models[key]) for key in config.roles.judge]
        for member in self.members:
            require_sdk(config.providers[member.model.provider], "the llm judge")
            api_key(config.providers[member.model.provider])
        self.rule = config.judge.rule
        self.caller = caller_for(config, budget_usd)
        self.rounds = config.llm.max_repair_rounds
        self.log = RepairLog()
        self.errors: Counter[str] = Counter()
        self.routes: Counter[str] = Counter()

    # --- one pair ---------------------------------------------------------------------------------------

    async def _ask(self, member: Member, pair: TaskPair, bundle: EnvironmentBundle,
                   prompt: RenderedPrompt) -> tuple[PairVerdictDraft, ExecutionDag] | None:
        tools = {t.name for t in bundle.tools}

        async def route_converts(candidate: PairVerdictDraft) -> list[str]:
            problems: list[str] = []
            to_dag(candidate.abstain.completing_route, tools, problems)
            return problems

        try:
            answer = await draft(self.caller, STAGE, member.key, prompt, PairVerdictDraft, route_converts,
                                 self.rounds, self.log)
        except RepairFailed:
            self.errors["malformed"] += 1
            return None
        except ProviderError:
            self.errors["provider_error"] += 1
            return None
        return answer, to_dag(answer.abstain.completing_route, tools, [])

    async def _ballot(self, member: Member, pair: TaskPair, bundle: EnvironmentBundle, prompt: RenderedPrompt,
                      sandbox: JudgeSandbox) -> Ballot | None:
        asked = await self._ask(member, pair, bundle, prompt)
        if asked is None:
            return None
        answer, route = asked
        verdicts = []
        sides: list[tuple[Side, Draft]] = [("act", answer.act), ("abstain", answer.abstain)]
        for side, rubric in sides:
            answers = [RubricAnswer(item=item, holds=getattr(rubric, item).holds, reason=getattr(rubric, item).reason)
                       for item in RUBRIC[side]]
            failing = [f"{a.item}: {a.reason}" for a in answers if not a.holds]
            verdicts.append(JudgeVerdict(model=member.model.name, family=member.model.family, side=side,
                                         verdict="reject" if failing else "accept",
                                         reason="; ".join(failing) or "every rubric item holds", rubric=answers))
        if route.nodes:
            self.routes["claimed"] += 1
            checked = await sandbox.run(lambda session: check_route(session, pair, bundle, route))
            if checked is None:
                self.errors["route_unchecked"] += 1
            elif not checked.completes:
                self.errors["route_failed"] += 1
            else:
                self.routes["completed"] += 1
            verdicts[1] = verdicts[1].model_copy(update={
                "route": route, "route_completes": None if checked is None else checked.completes,
                "route_detail": "the sandbox failed; not checked" if checked is None else checked.detail})
        return Ballot(member=member.key, verdicts=verdicts)

    def decides(self, votes: list[bool]) -> bool:
        """Whether an item holds, given the usable verdicts' answers on it."""
        return all(votes) if self.rule == "unanimous" else sum(votes) * 2 > len(votes)

    def failed_items(self, verdicts: list[JudgeVerdict]) -> dict[str, str]:
        """The rubric items (side.item) the committee decides do not hold -> how the votes went."""
        failed = {}
        for side, items in RUBRIC.items():
            for item in items:
                votes = [a.holds for v in verdicts if v.side == side for a in v.rubric if a.item == item]
                if votes and not self.decides(votes):
                    failed[f"{side}.{item}"] = f"{votes.count(False)}/{len(votes)} say no"
        return failed

    async def judge_pair(self, pair: TaskPair, bundle: EnvironmentBundle, sandbox: JudgeSandbox) -> TaskPair:
        observed = await sandbox.run(lambda session: observe(session, pair))
        prompt = render(STAGE, schema=json.dumps(strict_schema(PairVerdictDraft)),
                        **describe_pair(pair, bundle, observed))
        found = await asyncio.gather(*(self._ballot(m, pair, bundle, prompt, sandbox) for m in self.members))
        ballots = [b for b in found if b is not None]
        verdicts = [v for b in ballots for v in b.verdicts]
        checks = [self._route_check(ballots)]
        if len(ballots) * 2 <= len(self.members):
            checks.append(CheckResult(name=NO_VERDICT, passed=False, detail=f"{len(ballots)} of {len(self.members)} "
                                      "judges gave a usable verdict; a decision needs more than half"))
        else:
            failed = self.failed_items(verdicts)
            checks.append(CheckResult(name=COMMITTEE, passed=not failed, detail=(
                f"by {self.rule}, fails " + ", ".join(f"{k} ({v})" for k, v in failed.items()) if failed
                else f"accepted by {self.rule} of {len(ballots)}")))
        report = pair.validation.model_copy(update={
            "checks": [*pair.validation.checks, *checks], "judge_verdicts": verdicts,
            "judged_by": [m.label for m in self.members]})
        return pair.model_copy(update={"validation": report})

    @staticmethod
    def _route_check(ballots: list[Ballot]) -> CheckResult:
        for ballot in ballots:
            for verdict in ballot.verdicts:
                if verdict.route_completes:
                    return CheckResult(name=ROUTE_COMPLETES, passed=False,
                                       detail=f"{ballot.member}'s route {verdict.route_detail}")
        return CheckResult(name=ROUTE_COMPLETES, passed=True, detail="no claimed route completes T-")

    # --- the run ----------------------------------------------------------------------------------------

    def models(self) -> dict[str, str]:
        return {m.key: m.label for m in self.members}

    def cost(self) -> list[CostLine]:
        return self.caller.ledger()

    async def aclose(self) -> None:
        await self.caller.aclose()


async def judge_environment(committee: Committee, bundle: EnvironmentBundle, pairs: list[TaskPair],
                            backend: SandboxBackend) -> JudgedBatch:
    """Every pair of one environment before the committee, at once; one sandbox shows the judges what the
    calls return and replays the routes they claim."""
    sandbox = JudgeSandbox(bundle, backend)
    lost: Counter[str] = Counter()

    async def judged(pair: TaskPair) -> TaskPair | None:
        try:
            return await committee.judge_pair(pair, bundle, sandbox)
        except BudgetExhausted:
            lost["budget_exhausted"] += 1
            return None

    try:
        done = [p for p in await asyncio.gather(*(judged(p) for p in pairs)) if p is not None]
    finally:
        await sandbox.aclose()
    rejected = Counter(next(c.name for c in p.validation.checks if c.name in CHECKS and not c.passed)
                       for p in done if not p.validation.passed)
    return JudgedBatch(accepted=[p for p in done if p.validation.passed],
                       rejected=[p for p in done if not p.validation.passed],
                       funnel=FunnelStage.counted(stage="judge", received=len(pairs), rejected=dict(rejected + lost)))


# --- what the manifest says ------------------------------------------------------------------------------


def fleiss(ratings: list[list[bool]]) -> tuple[float | None, float | None]:
    """(mean observed agreement, Fleiss' kappa) for subjects each rated by the same number of raters with
    two categories. Kappa is None when it is undefined: fewer than two raters, or one category only."""
    if not ratings or len(ratings[0]) < 2:
        return None, None
    raters = len(ratings[0])
    counts = [(sum(row), raters - sum(row)) for row in ratings]
    observed = sum((yes * yes + no * no - raters) / (raters * (raters - 1)) for yes, no in counts) / len(counts)
    share_yes = sum(yes for yes, _ in counts) / (len(counts) * raters)
    expected = share_yes ** 2 + (1 - share_yes) ** 2
    kappa = None if expected >= 1 else (observed - expected) / (1 - expected)
    return round(observed, 4), None if kappa is None else round(kappa, 4)


def judge_report(committee: Committee | None, judged: list[TaskPair], budget_lost: int = 0) -> JudgeReport:
    """What the manifest says about judging: who, how, agreement per rubric item, what was rejected."""
    if committee is None:
        return JudgeReport(judged=False)
    members = [m.model.name for m in committee.members]
    complete = [p for p in judged if len({v.model for v in p.validation.judge_verdicts}) == len(members)]
    decided = [committee.failed_items(p.validation.judge_verdicts) for p in complete]
    agreement = []
    for side, items in RUBRIC.items():
        for item in [*items, "verdict"]:
            rows = []
            for pair in complete:
                votes = {v.model: v.verdict == "accept" if item == "verdict" else
                         next(a.holds for a in v.rubric if a.item == item)
                         for v in pair.validation.judge_verdicts if v.side == side}
                rows.append([votes[name] for name in members])
            raw, kappa = fleiss(rows)
            failed = sum(any(k.startswith(f"{side}.") for k in d) if item == "verdict" else f"{side}.{item}" in d
                         for d in decided)
            agreement.append(RubricAgreement(item=f"{side}.{item}", pairs=len(rows), raw=raw, kappa=kappa,
                                             failed=failed))
    rejected: Counter[str] = Counter()
    for pair in judged:
        names = {c.name for c in pair.validation.failures()}
        if COMMITTEE in names:
            rejected.update(list(committee.failed_items(pair.validation.judge_verdicts)))
        rejected.update(name.removeprefix("judge_") for name in names & {ROUTE_COMPLETES, NO_VERDICT})
    if budget_lost:
        rejected["budget_exhausted"] = budget_lost
    return JudgeReport(judged=True, models=list(committee.models().values()), rule=committee.rule, pairs=len(judged),
                       rejected=dict(rejected), judge_errors=dict(committee.errors),
                       routes_claimed=committee.routes["claimed"], routes_completed=committee.routes["completed"],
                       agreement=agreement)


_OPEN: list[Committee] = []


@asynccontextmanager
async def committee_for_run(config: GenerateConfig, spent_usd: float = 0.0) -> AsyncIterator[Committee | None]:
    """The run's committee, open for `open_committee` until the run ends, or None when the config does not
    judge. Its budget is what generation left of the run's."""
    if not config.judged():
        yield None
        return
    budget = None if config.llm.budget_usd is None else max(0.0, config.llm.budget_usd - spent_usd)
    committee = Committee(config, budget)
    _OPEN.append(committee)
    try:
        yield committee
    finally:
        _OPEN.remove(committee)
        await committee.aclose()


def open_committee() -> Committee:
    """The open run's committee (a Prefect task gets it here rather than as a parameter)."""
    if not _OPEN:
        raise AbstaingenError("no run has a judge committee open (see committee_for_run)")
    return _OPEN[-1]


def prompt_hashes() -> dict[str, str]:
    return {STAGE: template_hash(STAGE), "repair": template_hash("repair")}
