"""The static code gate and the environment checks run in the sandbox."""

from __future__ import annotations

import re
from pathlib import Path

import anyio
import pytest
from builtin_fixtures import builtin_bundle

from abstaingen.generators.builtin.domains import DOMAINS
from abstaingen.model import EnvironmentBundle
from abstaingen.sandboxes.backends import LocalBackend
from abstaingen.sandboxes.session import SandboxSession
from abstaingen.store import write_bundle
from abstaingen.validators.code_gate import check_code, inspect_source
from abstaingen.validators.environment_checks import check_environment

pytestmark = pytest.mark.component

HOSTILE = {
    "import os": "import os\ndef f(state):\n    return os.listdir('/')\n",
    "import subprocess": "import subprocess\ndef f(state):\n    return subprocess.run(['id']).returncode\n",
    "from socket": "from socket import socket\ndef f(state):\n    return socket().fileno()\n",
    "__import__": "def f(state):\n    return __import__('os').getpid()\n",
    "eval": "def f(state):\n    return eval('1 + 1')\n",
    "exec": "def f(state):\n    exec('x = 1')\n    return 1\n",
    "open": "def f(state):\n    return open('/etc/passwd').read()\n",
    "dunder escape": "def f(state):\n    return ().__class__.__base__.__subclasses__()\n",
    "getattr": "def f(state):\n    return getattr(state, 'clear')()\n",
    "global": "N = 0\ndef f(state):\n    global N\n    N += 1\n    return N\n",
    "relative import": "from . import secrets\ndef f(state):\n    return 1\n",
    "syntax error": "def f(state)\n    return 1\n",
}


@pytest.mark.parametrize("name", list(DOMAINS))
def test_builtin_code_passes_the_gate(name: str) -> None:
    assert check_code(builtin_bundle(name)).passed


@pytest.mark.parametrize("case", list(HOSTILE))
def test_hostile_code_is_rejected_with_a_reason(case: str) -> None:
    problems = inspect_source(HOSTILE[case], ["f"])
    assert problems and all(p.startswith("line ") for p in problems), problems


def test_pure_helpers_and_allowed_modules_pass() -> None:
    source = "import math\nfrom datetime import date\n\ndef _helper(x):\n    return math.floor(x)\n\n" \
             "def f(state, when):\n    return {'day': date.fromisoformat(when).day, 'n': _helper(2.5)}\n"
    assert inspect_source(source, ["f"]) == []
    assert inspect_source(source, ["f", "g"]) == ["no top-level function for tools ['g']"]


def env_checks(tmp_path: Path, bundle: EnvironmentBundle) -> dict[str, str]:
    write_bundle(bundle, tmp_path / bundle.env_id)

    async def main():
        async with SandboxSession(tmp_path / bundle.env_id, LocalBackend()) as session:
            return await check_environment(session, bundle)

    return {c.name: c.detail for c in anyio.run(main) if not c.passed}


def test_builtin_environments_pass_the_checks(tmp_path: Path) -> None:
    assert env_checks(tmp_path, builtin_bundle("travel")) == {}


def test_a_misbehaving_environment_fails_each_check(tmp_path: Path) -> None:
    travel = builtin_bundle("travel")
    sabotage = '''

SEEN = []


def get_booking(state, booking_id):
    state["bookings"][0]["notes"] = "read"  # a lookup that writes
    return dict(_record(state, booking_id))


def get_ticket(state, booking_id):
    SEEN.append(booking_id)  # remembers across episodes
    return {"seen": len(SEEN)}


def cancel_for_credit(state, booking_id):
    return {"booking_id": booking_id}  # a commit that does nothing


def check_booking(state, booking_id):
    raise ValueError("not implemented")
'''
    bundle = travel.model_copy(update={"implementation": travel.implementation + sabotage})
    failed = env_checks(tmp_path, bundle)
    assert set(failed) == {"env_callable", "env_read_only", "env_commit_changes", "env_deterministic"}
    assert "check_booking" in failed["env_callable"]
    assert "get_booking" in failed["env_read_only"]
    assert "cancel_for_credit" in failed["env_commit_changes"]
    assert "get_ticket" in failed["env_deterministic"]


def test_reversibility_is_checked_by_execution_not_taken_from_the_declaration(tmp_path: Path) -> None:
    """Tool annotations come from the real effect: an undo that does not restore the state makes the
    'reversible' declaration false, and a commit declared irreversible that another tool undoes is caught."""
    travel = builtin_bundle("travel")
    leaky_undo = """

def release_hold(state, booking_id):
    record = _record(state, booking_id)
    record["status"] = "active"
    record["notes"] = "hold released"  # leaves a trace: the hold is not really undone
    return {"booking_id": booking_id}
"""
    failed = env_checks(tmp_path / "a", travel.model_copy(update={"implementation": travel.implementation + leaky_undo}))
    assert set(failed) == {"env_reversibility"}
    assert "hold_booking is declared reversible" in failed["env_reversibility"]
    assert re.search(r'still changed: bookings/[\w-]+\.notes: ".*-> "hold released"', failed["env_reversibility"])

    secret_undo = """

def release_hold(state, booking_id):
    record = _record(state, booking_id)
    record["status"] = "active"  # also reactivates cancelled bookings and takes the refund back
    record["refunded"] = 0
    return {"booking_id": booking_id}
"""
    failed = env_checks(tmp_path / "b", travel.model_copy(update={"implementation": travel.implementation + secret_undo}))
    assert "cancel_with_refund is declared irreversible, but release_hold undoes it" in failed["env_reversibility"]
