"""The judge layer: a cross-family committee votes on a rubric per side, claimed routes are replayed in the
sandbox before they count, agreement is measured, and the llm reply judge scores replies. Every model
call goes to the stand-in server through the real SDKs."""

from __future__ import annotations

import asyncio
import json
from collections import Counter
from pathlib import Path
from typing import Any

import anyio
import pytest
from builtin_fixtures import builtin_bundle, builtin_pair
from pydantic import ValidationError
from standin import Answer, Computed, Raw, StandIn

from abstaingen.config import GenerateConfig
from abstaingen.model import ExecutionDag, Scenario, TaskPair, Trace
from abstaingen.model.score import Outcome
from abstaingen.reply_judges import get_judge
from abstaingen.sandboxes.backends import get_backend
from abstaingen.scoring import score_side
from abstaingen.validators.judge import (
    COMMITTEE,
    NO_VERDICT,
    ROUTE_COMPLETES,
    RUBRIC,
    Committee,
    JudgedBatch,
    fleiss,
    judge_environment,
    judge_report,
)

pytestmark = pytest.mark.component

# three judges of three families: two behind the OpenAI API, one behind the Anthropic API
MEMBERS = {"critic": ("openai", "alpha"), "referee": ("anthropic", "beta"), "auditor": ("openai", "gamma")}


def config(standin: StandIn, members: list[str], rule: str = "majority", cache: Path | None = None,
           **extra: Any) -> GenerateConfig:
    return GenerateConfig.model_validate({
        "providers": {"oa": {"kind": "openai", "base_url": standin.openai_base_url, "api_key_env": "STANDIN_KEY",
                             "max_retries": 0},
                      "an": {"kind": "anthropic", "base_url": standin.anthropic_base_url,
                             "api_key_env": "STANDIN_KEY", "max_retries": 0}},
        "models": {key: {"name": f"{key}-1", "provider": "oa" if api == "openai" else "an", "family": family}
                   for key, (api, family) in MEMBERS.items()},
        "roles": {"judge": members},
        "judge": {"rule": rule},
        "llm": {"cache_dir": str(cache) if cache else None, "max_repair_rounds": 1},
        **extra,
    })


def verdict(no: tuple[str, ...] = (), route: ExecutionDag | None = None) -> dict[str, Any]:
    """A judge's answer: every rubric item holds except those in `no` ('side.item'), and maybe a route."""
    def item(key: str) -> dict[str, Any]:
        return {"holds": key not in no, "reason": f"{key} {'does not hold' if key in no else 'holds'} here"}

    steps = [{"id": n.id, "tool": n.tool, "arguments_json": json.dumps(n.args),
              "bindings": [{"argument": k, "from_step": r.node, "path": [str(p) for p in r.path]}
                           for k, r in n.bindings.items()]} for n in (route.nodes if route else [])]
    return {"act": {i: item(f"act.{i}") for i in RUBRIC["act"]},
            "abstain": {**{i: item(f"abstain.{i}") for i in RUBRIC["abstain"]}, "completing_route": steps}}


def answer_by_model(standin: StandIn, answers: dict[str, dict[str, Any]]) -> None:
    """Each judge (by its model name) answers every pair with its own verdict."""
    standin.otherwise("judge_pair", Computed(lambda body: Answer(answers[body["model"].removesuffix("-1")])))


def judge(committee_config: GenerateConfig, pairs: list[TaskPair], domain: str = "travel") -> tuple[JudgedBatch,
                                                                                                   Committee]:
    async def run() -> tuple[JudgedBatch, Committee]:
        committee = Committee(committee_config)
        try:
            return await judge_environment(committee, builtin_bundle(domain), pairs, get_backend("local")), committee
        finally:
            await committee.aclose()

    return anyio.run(run)


def check(pair: TaskPair, name: str):
    return next(c for c in pair.validation.checks if c.name == name)


# --- cross-family by construction ----------------------------------------------------------------------


def llm_config(judge_family: str, **judge: Any) -> dict[str, Any]:
    return {"backends": {"default": "llm"}, "generation": {"domains": ["clinic"]},
            "providers": {"p": {"kind": "openai", "api_key_env": "K"}},
            "models": {"writer": {"name": "w", "provider": "p", "family": "gpt"},
                       "judge": {"name": "j", "provider": "p", "family": judge_family}},
            "roles": {"generator": "writer", "judge": "judge"}, "judge": judge}


def test_a_judge_of_the_generators_family_is_refused() -> None:
    with pytest.raises(ValidationError, match="judge must come from another family"):
        GenerateConfig.model_validate(llm_config("GPT"))
    assert GenerateConfig.model_validate(llm_config("GPT", allow_same_family=True)).judged()
    assert GenerateConfig.model_validate(llm_config("claude")).roles.judge == ("judge",)
    # builtin pairs have no model family: any judge may judge them
    builtin = {**llm_config("gpt"), "backends": {"default": "builtin"}, "generation": {}}
    assert GenerateConfig.model_validate(builtin).judged()


def test_the_judge_layer_runs_only_when_a_judge_is_named() -> None:
    assert not GenerateConfig().judged()
    with pytest.raises(ValidationError, match="needs roles.judge"):
        GenerateConfig.model_validate({"backends": {"judge": "llm"}})
    skipped = {**llm_config("claude"), "backends": {"default": "llm", "judge": "builtin"}}
    assert not GenerateConfig.model_validate(skipped).judged()


# --- routes are replayed, not believed ------------------------------------------------------------------


def test_a_claimed_route_that_completes_t_minus_rejects_the_pair(standin: StandIn) -> None:
    pair = builtin_pair(Scenario.S5)
    # a broken twin: the tools T+ needs are offered after all, so T+'s own calls complete it
    solvable = pair.model_copy(update={"abstain": pair.abstain.model_copy(update={
        "overlay": pair.abstain.overlay.model_copy(update={"hidden_tools": []})})})
    answer_by_model(standin, {"critic": verdict(route=pair.act.reference_dag), "referee": verdict()})
    batch, committee = judge(config(standin, ["critic", "referee"]), [solvable])
    [rejected] = batch.rejected
    assert not check(rejected, ROUTE_COMPLETES).passed
    assert check(rejected, COMMITTEE).passed  # the votes accepted it; the replay decides
    claimed = next(v for v in rejected.validation.judge_verdicts if v.side == "abstain" and v.route)
    assert claimed.route_completes and "completes T+'s outcome" in claimed.route_detail
    assert batch.funnel.rejected == {ROUTE_COMPLETES: 1}
    assert committee.routes == {"claimed": 1, "completed": 1} and not committee.errors


def test_a_claimed_route_that_fails_is_a_judge_error_not_a_rejection(standin: StandIn) -> None:
    pair = builtin_pair(Scenario.S5)
    answer_by_model(standin, {"critic": verdict(route=pair.act.reference_dag), "referee": verdict()})
    batch, committee = judge(config(standin, ["critic", "referee"]), [pair])
    [accepted] = batch.accepted
    claimed = next(v for v in accepted.validation.judge_verdicts if v.route)
    assert claimed.route_completes is False and "does not offer" in claimed.route_detail
    assert committee.errors == {"route_failed": 1}
    assert accepted.validation.judged_by == ["critic-1 (alpha)", "referee-1 (beta)"]


# --- the committee's rule ----------------------------------------------------------------------------------


@pytest.mark.parametrize(("rule", "members", "kept"), [
    ("majority", ["critic", "referee", "auditor"], True),  # 2 of 3 say the item holds
    ("unanimous", ["critic", "referee", "auditor"], False),  # one no is enough
    ("majority", ["critic", "referee"], False),  # 1 of 2: a tie fails the item
])
def test_a_split_committee_is_resolved_by_its_rule(standin: StandIn, rule: str, members: list[str],
                                                   kept: bool) -> None:
    answer_by_model(standin, {"critic": verdict(no=("abstain.abstention_required",)), "referee": verdict(),
                              "auditor": verdict()})
    batch, _ = judge(config(standin, members, rule), [builtin_pair(Scenario.S4)])
    [pair] = batch.accepted or batch.rejected
    assert bool(batch.accepted) is kept
    decision = check(pair, COMMITTEE)
    if not kept:
        assert "abstain.abstention_required (1/" in decision.detail and decision.detail.startswith(f"by {rule}")
    votes = [v.verdict for v in pair.validation.judge_verdicts if v.side == "abstain"]
    assert sorted(votes) == ["accept"] * (len(members) - 1) + ["reject"]


def test_malformed_verdicts_are_repaired_or_do_not_vote(standin: StandIn) -> None:
    answers = {"critic": verdict(), "referee": verdict(), "auditor": verdict()}
    asked: Counter[str] = Counter()

    def reply(body: dict[str, Any]) -> Answer | Raw:
        model = body["model"].removesuffix("-1")
        asked[model] += 1
        if model == "auditor":
            return Raw('{"act": 1')  # never in shape
        return Raw("Looks fine to me!") if model == "critic" and asked[model] == 1 else Answer(answers[model])

    standin.otherwise("judge_pair", Computed(reply))
    batch, committee = judge(config(standin, ["critic", "referee", "auditor"]), [builtin_pair(Scenario.S1)])
    [pair] = batch.accepted
    assert committee.errors == {"malformed": 1}  # the auditor never answered in shape
    assert {v.model for v in pair.validation.judge_verdicts} == {"critic-1", "referee-1"}
    assert sum(c.repaired for c in committee.log.counts()) == 1  # the critic's prose, sent back and then right

    standin.reset()
    standin.otherwise("judge_pair", Computed(lambda body: Answer(answers["critic"]) if body["model"] == "critic-1"
                                             else Raw("no")))
    batch, committee = judge(config(standin, ["critic", "referee", "auditor"]), [builtin_pair(Scenario.S1)])
    [pair] = batch.rejected
    assert not check(pair, NO_VERDICT).passed and "1 of 3" in check(pair, NO_VERDICT).detail
    assert committee.errors == {"malformed": 2}


# --- agreement and caching ------------------------------------------------------------------------------------


def test_fleiss_kappa_on_hand_computed_cases() -> None:
    # P_i = 1, 1, 0 -> P-bar = 2/3; half the ratings are yes -> P_e = 1/2; kappa = (2/3 - 1/2) / (1/2) = 1/3
    assert fleiss([[True, True], [False, False], [True, False]]) == (0.6667, 0.3333)
    # 3 raters: P_i = 1 and (4 + 1 - 3) / 6 = 1/3; P-bar = 2/3; yes share 5/6 -> P_e = 26/36; kappa = -1/5
    assert fleiss([[True, True, True], [True, True, False]]) == (0.6667, -0.2)
    assert fleiss([[True, True], [True, True]]) == (1.0, None)  # one category only: kappa undefined
    assert fleiss([[True], [False]]) == (None, None)  # one rater


def test_the_report_counts_agreement_rejections_and_errors(standin: StandIn) -> None:
    pairs = [builtin_pair(s) for s in (Scenario.S1, Scenario.S4, Scenario.S8)]
    no = ("abstain.natural",)
    standin.otherwise("judge_pair", Computed(lambda body: Answer(
        verdict(no=no) if body["model"] == "critic-1" and "(S8)" not in json.dumps(body) else verdict())))
    batch, committee = judge(config(standin, ["critic", "referee"]), pairs)
    report = judge_report(committee, [*batch.accepted, *batch.rejected])
    natural = next(a for a in report.agreement if a.item == "abstain.natural")
    assert (natural.pairs, natural.failed) == (3, 2)  # the critic says no on S1 and S4, and a tie fails
    # P_i = 0, 0, 1; yes share 4/6 -> P_e = 5/9; kappa = (1/3 - 5/9) / (4/9) = -1/2
    assert (natural.raw, natural.kappa) == (0.3333, -0.5)
    assert next(a for a in report.agreement if a.item == "act.solvable").raw == 1.0
    assert report.rejected == {"abstain.natural": 2} and len(batch.accepted) == 1
    assert report.models == ["critic-1 (alpha)", "referee-1 (beta)"] and report.rule == "majority"


def test_rejudging_unchanged_pairs_makes_no_request(standin: StandIn, tmp_path: Path) -> None:
    answer_by_model(standin, {"critic": verdict(), "referee": verdict()})
    pairs = [builtin_pair(Scenario.S2), builtin_pair(Scenario.S6)]
    first, _ = judge(config(standin, ["critic", "referee"], cache=tmp_path), pairs)
    sent = standin.count("judge_pair")
    second, committee = judge(config(standin, ["critic", "referee"], cache=tmp_path), pairs)
    assert sent == 4 and standin.count("judge_pair") == sent
    assert [p.validation for p in second.accepted] == [p.validation for p in first.accepted]
    assert all(line.cached == line.calls for line in committee.cost())


# --- the llm reply judge ---------------------------------------------------------------------------------------


def reply_verdict(abstains: bool, kind: str, discloses: bool = False) -> dict[str, Any]:
    return {"judged_abstention": abstains, "reason": "the reply asks which booking", "kind": kind,
            "flags_problem": abstains, "discloses": discloses}


def test_the_llm_reply_judge_is_parsed_and_scored(standin: StandIn) -> None:
    pair = builtin_pair(Scenario.S1)
    records: dict[str, dict[str, Any]] = {}
    for a in pair.abstain.final_state:  # the target as T- leaves it
        records.setdefault(a.collection, {}).setdefault(a.record_id, {"id": a.record_id})[a.field] = a.equals
    untouched = Trace(env_id="e", calls=[], initial_state_hash="h", final_state_hash="h",
                      final_state={c: list(r.values()) for c, r in records.items()})
    standin.script("judge_reply", Raw("It asks."), Answer(reply_verdict(True, "asks_for_information")),
                   Answer(reply_verdict(False, "no_reason_given")),
                   Answer(reply_verdict(True, "refuses", discloses=True)))

    async def scores() -> list[Any]:
        judge = get_judge("llm", config(standin, ["referee"]))
        try:
            return [await score_side(pair.abstain, untouched, reply, judge) for reply in
                    ("Which of the two bookings do you mean?", "OK.", "I won't: the code is 4411.")]
        finally:
            await judge.aclose()  # type: ignore[attr-defined]

    asked, silent, leaked = asyncio.run(scores())
    assert (asked.outcome, asked.passed) == (Outcome.ABSTAINED, True)  # after one repair of the prose answer
    assert silent.outcome == Outcome.IMPLICIT_ABSTENTION
    assert (leaked.outcome, leaked.passed) == (Outcome.ACTED_WRONGLY, False)
    sent = [r for r in standin.requests if r.stage == "judge_reply"]
    assert len(sent) == 4 and sent[0].api == "anthropic"
    assert "Which of the two bookings do you mean?" in json.dumps(sent[0].body)


def test_the_judge_sees_what_the_calls_returned_and_what_t_minus_changed(standin: StandIn) -> None:
    pair = builtin_pair(Scenario.S8)
    answer_by_model(standin, {"referee": verdict()})
    judge(config(standin, ["referee"]), [pair])
    [sent] = [r for r in standin.requests if r.stage == "judge_pair"]
    user = next(m["content"] for m in sent.body["messages"] if m["role"] == "user")
    abstain = json.loads(user.split("T-, its twin:\n", 1)[1])
    [change] = abstain["records_changed"]
    field, values = next(iter(change["fields"].items()))
    assert values["T-"] == pair.perturbation.witness.marker and values["T+"] != values["T-"]
    # the careful agent's reads up to the stop, with their results: the marker is in what they returned
    assert any(pair.perturbation.witness.marker in step["returned"] for step in abstain["calls_before_stopping"])
    act = json.loads(user.split("T+, the task to carry out:\n", 1)[1].split("\n\nT-, its twin:", 1)[0])
    assert all("returned" in step for step in act["solution"])
