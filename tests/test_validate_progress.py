"""What validation tells of its progress (`on_validated`): every candidate pair once, as its validation ends, in
a real sandbox; the validate stage's bar counts these pairs (test_flows.py watches a whole run)."""

from __future__ import annotations

import anyio
import pytest
from builtin_fixtures import builtin_bundle, builtin_pair

from abstaingen.model import Scenario, TaskPair
from abstaingen.sandboxes.backends import get_backend
from abstaingen.validators.validate import validate_pairs_async

pytestmark = pytest.mark.component

TRAVEL = builtin_bundle("travel")


def broken(pair: TaskPair) -> TaskPair:
    """A pair the structural layer rejects, before any sandbox: its act side commits with a tool nobody has."""
    return pair.model_copy(update={"act": pair.act.model_copy(update={"critical_actions": ["no_such_tool"]})})


def validated(pairs: list[TaskPair], bundle=TRAVEL) -> tuple[list[tuple[int, int]], object]:  # type: ignore[no-untyped-def]
    """(what on_validated heard, the batch); a changed bundle is not the builtin generator's code: allowed here."""
    told: list[tuple[int, int]] = []

    async def hear(done: int, passed: int) -> None:
        told.append((done, passed))

    async def run():  # type: ignore[no-untyped-def]
        return await validate_pairs_async(bundle, pairs, get_backend("local"), allow_unsandboxed=bundle is not TRAVEL,
                                          on_validated=hear)

    return told, anyio.run(run)


def test_each_pair_is_told_once_as_its_validation_ends() -> None:
    good = [builtin_pair(Scenario.S1), builtin_pair(Scenario.S5), builtin_pair(Scenario.S8)]
    told, batch = validated([broken(builtin_pair(Scenario.S2)), *good])
    assert len(batch.rejected) == 1 and len(batch.accepted) == 3  # type: ignore[attr-defined]
    # the structural rejection at once, before the sandbox; then the sandbox's pairs one by one
    assert told == [(1, 0), (1, 1), (1, 1), (1, 1)]


def test_an_environment_that_fails_its_checks_in_the_sandbox_tells_all_its_pairs_at_once() -> None:
    # get_ticket, a lookup, now changes the state: the environment checks in the sandbox catch it
    failing = TRAVEL.model_copy(update={"implementation": TRAVEL.implementation
                                        + "\n\ndef get_ticket(state, booking_id):\n    state['seen'] = booking_id\n"})
    pairs = [builtin_pair(Scenario.S1), builtin_pair(Scenario.S4)]
    told, batch = validated(pairs, failing)
    failed = {c.name for p in batch.rejected for c in p.validation.failures()}  # type: ignore[attr-defined]
    assert failed and failed.isdisjoint({"sandbox_policy", "code_gate"}), failed  # the sandbox's checks
    assert not batch.accepted and told == [(2, 0)]  # type: ignore[attr-defined]
