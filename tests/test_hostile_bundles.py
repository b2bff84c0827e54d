"""Hostile environment code: each case is rejected by the static gate or contained by the sandbox,
reported as a validation failure with a clear reason, and the run goes on with a healthy sandbox."""

from __future__ import annotations

import pytest
from builtin_fixtures import builtin_bundle, builtin_pair
from sandbox_backends import ALL, BWRAP, DOCKER

from abstaingen.model import EnvironmentBundle, Scenario
from abstaingen.sandboxes.backends import SandboxLimits, get_backend
from abstaingen.validators.validate import validate_pairs

pytestmark = pytest.mark.component

TRAVEL = builtin_bundle("travel")
BACKENDS = ALL

# Each replaces get_ticket, a lookup every pair's reference DAG calls.
GATED = {
    "fork bomb": "import os\ndef get_ticket(state, booking_id):\n    while True:\n        os.fork()\n",
    "write outside scratch": "def get_ticket(state, booking_id):\n    open('/etc/abstaingen-was-here', 'w').write('x')\n",
    "open a socket": "import socket\ndef get_ticket(state, booking_id):\n    return socket.create_connection(('1.1.1.1', 80)).fileno()\n",
    "import subprocess": "import subprocess\ndef get_ticket(state, booking_id):\n    return subprocess.check_output(['id']).decode()\n",
    "escape through dunders": "def get_ticket(state, booking_id):\n    return str(().__class__.__base__.__subclasses__())\n",
}
CONTAINED = {
    # name: (source, what the report must say); a hung call kills the sandbox, so its check is the
    # infrastructure one, after the retry in a fresh sandbox hung too
    "infinite loop": ("def get_ticket(state, booking_id):\n    while True:\n        pass\n",
                      "env_infrastructure: the sandbox failed on 2 attempts, the last: get_ticket did not answer within"),
    "memory hog": ("def get_ticket(state, booking_id):\n    return len('x' * (8 * 1024 ** 3))\n", "MemoryError"),
    "huge result": ("def get_ticket(state, booking_id):\n    return 'x' * (32 * 1024 ** 2)\n", "returned more than"),
    "huge state": ("def get_ticket(state, booking_id):\n    state['junk'] = 'x' * (30 * 1024 ** 2)\n",
                   "grew the state beyond"),
}


def unsandboxed(backend: str) -> bool:
    """Code that is not the builtin generator's runs on `local` only when the user allows it, as here:
    these tests are about the caps and faults every backend handles, not about trust."""
    return backend == "local"


def hostile(source: str) -> EnvironmentBundle:
    return TRAVEL.model_copy(update={"implementation": TRAVEL.implementation + "\n\n" + source})


def failures(bundle: EnvironmentBundle, backend: str) -> list[str]:
    limits = SandboxLimits(call_timeout_s=3, memory_mb=512)
    batch = validate_pairs(bundle, [builtin_pair(Scenario.S1)], get_backend(backend, limits),
                           allow_unsandboxed=unsandboxed(backend))
    return [f"{c.name}: {c.detail}" for p in batch.rejected for c in p.validation.failures()]


@pytest.mark.parametrize("case", list(GATED))
def test_the_static_gate_rejects_it_before_any_sandbox(case: str) -> None:
    found = failures(hostile(GATED[case]), "local")
    assert found and all(f.startswith("code_gate: line ") for f in found), found


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("case", list(CONTAINED))
def test_the_sandbox_contains_it(case: str, backend: str) -> None:
    source, reason = CONTAINED[case]
    found = failures(hostile(source), backend)
    assert any(reason in f for f in found), found


@pytest.mark.parametrize("backend", BACKENDS)
def test_printing_to_stdout_cannot_corrupt_the_protocol(backend: str) -> None:
    chatty = hostile("def get_ticket(state, booking_id):\n    print('{\"jsonrpc\": \"2.0\", \"id\": 1}')\n"
                     "    return {'booking_id': booking_id, 'fare': 0}\n")
    assert not any(f.startswith(("env_callable", "sandbox")) for f in failures(chatty, backend))


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_hung_sandbox_fails_one_pair_and_the_next_pairs_still_run(backend: str) -> None:
    pairs = [builtin_pair(Scenario.S1, v) for v in range(3)]
    doomed = pairs[0].act.final_state[0].record_id  # reading this booking hangs
    assert doomed != TRAVEL.initial_state["bookings"][0]["id"]  # the environment checks read that one
    source = (f"def get_booking(state, booking_id):\n    while booking_id == {doomed!r}:\n        pass\n"
              "    return dict(_record(state, booking_id))\n")
    batch = validate_pairs(hostile(source), pairs, get_backend(backend, SandboxLimits(call_timeout_s=3)),
                           allow_unsandboxed=unsandboxed(backend))
    reasons = {p.pair_id: [f"{c.name}: {c.detail}" for c in p.validation.failures()] for p in batch.rejected}
    assert list(reasons) == [pairs[0].pair_id]
    assert reasons[pairs[0].pair_id][0].startswith("infrastructure: the sandbox failed on 2 attempts")
    assert "did not answer within 3 s" in reasons[pairs[0].pair_id][0]
    assert len(batch.accepted) == 2
    [replay] = [s for s in batch.stages if s.stage == "replay"]
    assert replay.retried == 1 and replay.rejected == {"infrastructure": 1}


@pytest.mark.parametrize(("origin", "backend", "allowed", "runs"), [
    ("llm", "local", False, False), ("llm", "local", True, True), ("builtin", "local", False, True),
    pytest.param("llm", "bwrap", False, True, marks=BWRAP.marks),
    pytest.param("llm", "docker", False, True, marks=DOCKER.marks),
])
def test_llm_written_code_needs_isolation_or_an_explicit_flag(origin: str, backend: str, allowed: bool,
                                                              runs: bool) -> None:
    bundle = TRAVEL.model_copy(update={"origin": origin})
    batch = validate_pairs(bundle, [builtin_pair(Scenario.S1)], get_backend(backend), allow_unsandboxed=allowed)
    assert bool(batch.accepted) is runs
    if not runs:
        [policy] = [c for c in batch.rejected[0].validation.checks if c.name == "sandbox_policy"]
        assert not policy.passed and "allow_unsandboxed" in policy.detail


@pytest.mark.parametrize("backend", [DOCKER])
def test_no_container_is_left_behind(backend: str) -> None:
    """Counts this process's containers only: another abstaingen run on the same engine has its own."""
    import os

    import docker

    from abstaingen.sandboxes.backends import OWNER_LABEL

    source, _ = CONTAINED["infinite loop"]
    failures(hostile(source), backend)
    assert docker.from_env().containers.list(all=True, filters={"label": f"{OWNER_LABEL}={os.getpid()}"}) == []


def test_an_episode_that_outlasts_its_limit_fails_its_pair() -> None:
    # A call of seconds (10**8 additions), far under the call deadline and far over the episode's, on
    # a fast machine or a loaded one.
    slow = hostile("def get_ticket(state, booking_id):\n    n = 0\n    for i in range(10 ** 8):\n        n += i\n"
                   "    return {'booking_id': booking_id, 'fare': _record(state, booking_id)['fare']}\n")
    limits = SandboxLimits(call_timeout_s=120, episode_timeout_s=0.3)  # each call is fine, the episode is not
    batch = validate_pairs(slow, [builtin_pair(Scenario.S1)], get_backend("local", limits), allow_unsandboxed=True)
    details = [c.detail for p in batch.rejected for c in p.validation.failures()]
    assert any("did not finish within 0.3 s" in d for d in details), details
