"""A judge's claimed route counts only if an agent with what T- gives it could take it: grounded in T-'s
request, runnable under T-'s overlay, reaching T+'s outcome within the rules and without guessing."""

from __future__ import annotations

import anyio
import pytest
from builtin_fixtures import builtin_bundle, builtin_pair

from abstaingen.model import ExecutionDag, Scenario
from abstaingen.sandboxes.backends import get_backend
from abstaingen.sandboxes.session import SandboxSession
from abstaingen.store import bundle_in_scratch
from abstaingen.validators.routes import Mentions, RouteCheck, check_route, ungrounded

pytestmark = pytest.mark.component


def test_mentions_read_dates_and_amounts_in_the_forms_people_write() -> None:
    said = Mentions("Refund $2,300 on Olga's booking of 4 October 2027 (or was it Oct. 5th, 2027?) by 2027-10-09.")
    for value in ("2027-10-04", "2027-10-05", "2027-10-09", 2300, 2300.0, "2,300", "olga", True, None):
        assert said.grounds(value), value
    for value in ("2027-10-06", 2301, "BK-1234", "Petrova"):
        assert not said.grounds(value), value


def test_every_builtin_positive_solution_is_grounded_in_its_own_request() -> None:
    for domain in ("travel", "banking", "clinical", "hr"):
        for scenario in Scenario:
            act = builtin_pair(scenario, 0, domain, 29).act
            assert not ungrounded(act.reference_dag, act.instruction), act.instruction


def routes(domain: str, seed: int, dag_of) -> dict[Scenario, RouteCheck]:
    bundle = builtin_bundle(domain, seed)

    async def run() -> dict[Scenario, RouteCheck]:
        with bundle_in_scratch(bundle) as folder:
            async with SandboxSession(folder, get_backend("local")) as session:
                checked = {}
                for scenario in Scenario:
                    pair = builtin_pair(scenario, 0, domain, seed)
                    checked[scenario] = await check_route(session, pair, bundle, dag_of(pair))
                return checked

    return anyio.run(run)


@pytest.mark.parametrize("domain", ["travel", "ecommerce", "smart_home"])
def test_t_plus_solution_never_completes_a_sound_t_minus(domain: str) -> None:
    """The route a judge that read T+ would reach for first: every builtin twin stands up to it, each for
    its scenario's reason."""
    checked = routes(domain, 37, lambda pair: pair.act.reference_dag)
    assert not [s for s, c in checked.items() if c.completes], {s: c.detail for s, c in checked.items()}
    reasons = {s: c.detail for s, c in checked.items()}
    assert "does not offer" in reasons[Scenario.S5]
    assert "replay stopped" in reasons[Scenario.S6]
    assert "goes on after reading" in reasons[Scenario.S8]
    assert "breaks a rule" in reasons[Scenario.S7]


def check(pair, route: ExecutionDag, domain: str = "travel", seed: int = 37) -> RouteCheck:
    bundle = builtin_bundle(domain, seed)

    async def run() -> RouteCheck:
        with bundle_in_scratch(bundle) as folder:
            async with SandboxSession(folder, get_backend("local")) as session:
                return await check_route(session, pair, bundle, route)

    return anyio.run(run)


def test_a_route_under_a_twin_that_changed_nothing_completes() -> None:
    pair = builtin_pair(Scenario.S6, 0, "travel", 37)
    undone = pair.model_copy(update={"abstain": pair.abstain.model_copy(update={"overlay": pair.act.overlay})})
    checked = check(undone, pair.act.reference_dag)
    assert checked.completes, checked.detail
    assert check(undone, ExecutionDag()).detail == "the route has no calls"


def test_taking_one_of_several_lookup_results_is_a_guess() -> None:
    """S1: T+'s route with T-'s lookup finds several records, and a route that takes the first is guessing,
    however grounded its literals are."""
    pair = builtin_pair(Scenario.S1, 0, "travel", 37)
    said = Mentions(pair.abstain.instruction)
    [lookup] = pair.abstain.reference_dag.nodes  # T-'s own lookup: every literal grounded, two records found
    assert all(said.grounds(v) for v in lookup.args.values())
    nodes = [n.model_copy(update={"args": lookup.args}) if n.id == "find" else n for n in pair.act.reference_dag.nodes]
    checked = check(pair, ExecutionDag(nodes=nodes))
    assert not checked.completes and "picks without evidence" in checked.detail, checked.detail
