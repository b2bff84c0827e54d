"""Shared fixtures: one tiny environment and a valid pair that runs in it."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator

import pytest

from abstaingen.model import (
    DagNode,
    EnvironmentBundle,
    ExecutionDag,
    Perturbation,
    Provenance,
    StateAssertion,
    TaskOverlay,
    TaskPair,
    TaskVariant,
    ToolSpec,
)
from abstaingen.model.perturbation import MissingCapabilityWitness


@pytest.fixture(autouse=True)
def key(monkeypatch: pytest.MonkeyPatch) -> None:
    """The key the stand-in model server takes (tests/llm_stage.py), there for every test."""
    monkeypatch.setenv("STANDIN_KEY", "sk-standin")


TINY_IMPLEMENTATION = '''\
def find_booking(state, booking_id):
    for booking in state["bookings"]:
        if booking["id"] == booking_id:
            return booking
    raise ValueError(f"no booking {booking_id}")


def cancel_booking(state, booking_id):
    booking = find_booking(state, booking_id)
    booking["status"] = "cancelled"
    return {"id": booking_id, "status": "cancelled"}
'''


@pytest.fixture
def tiny_bundle() -> EnvironmentBundle:
    booking_id = {"type": "object", "properties": {"booking_id": {"type": "string"}}, "required": ["booking_id"]}
    return EnvironmentBundle(
        env_id="travel-tiny",
        domain="travel",
        description="Look up and cancel bookings.",
        tools=[
            ToolSpec(name="find_booking", description="Find a booking by id.", kind="lookup", input_schema=booking_id),
            ToolSpec(
                name="cancel_booking",
                description="Cancel a booking.",
                kind="commit",
                input_schema=booking_id,
                effect="bookings.status",
            ),
        ],
        state_schema={"type": "object"},
        initial_state={"bookings": [{"id": "B1", "status": "confirmed", "city": "Zürich"}]},
        implementation=TINY_IMPLEMENTATION,
    )


@pytest.fixture
def make_pair(tiny_bundle: EnvironmentBundle) -> Callable[..., TaskPair]:
    """A valid S5 pair in tiny_bundle; `number` makes ids unique."""

    def build(number: int = 1, domain: str = "travel", env_id: str | None = None) -> TaskPair:
        env = env_id or tiny_bundle.env_id
        cancel = DagNode(id="cancel", tool="cancel_booking", args={"booking_id": "B1"})
        act = TaskVariant(
            task_id=f"t{number}-act",
            task_type="act",
            env_id=env,
            instruction="Cancel booking B1.",
            system_prompt="You are a travel assistant.",
            deliverable="op",
            reference_dag=ExecutionDag(nodes=[cancel]),
            critical_actions=["cancel_booking"],
            final_state=[StateAssertion(collection="bookings", record_id="B1", field="status", equals="cancelled")],
        )
        abstain = act.model_copy(
            update={
                "task_id": f"t{number}-abstain",
                "task_type": "abstain",
                "overlay": TaskOverlay(hidden_tools=["cancel_booking"]),
                "reference_dag": ExecutionDag(),
                "final_state": [],
                "abstention_trigger": "no tool can cancel a booking",
                "earliest_abstain_step": 0,
                "good_reply": "I cannot cancel bookings with the tools I have.",
            }
        )
        return TaskPair(
            pair_id=f"pair-{number}",
            domain=domain,
            scenario="S5",
            act=act,
            abstain=TaskVariant.model_validate(abstain.model_dump()),
            perturbation=Perturbation(
                scenario="S5",
                phase="pre_execution",
                dimension="tool_availability",
                description="the cancel tool is hidden",
                witness=MissingCapabilityWitness(hidden_tool="cancel_booking", effect="bookings.status"),
            ),
            provenance=Provenance(backend={"task": "builtin"}, seed=7, code_version="test"),
        )

    return build


def pytest_configure(config: pytest.Config) -> None:
    """When CI requires the Docker sandbox, build its image before tests are collected (a no-op
    when this content was built already). Under pytest-xdist the controller builds it before any worker
    starts, so workers never build it at once."""
    if os.environ.get("PYTEST_XDIST_WORKER"):
        return
    if "docker" in os.environ.get("ABSTAINGEN_REQUIRE_SANDBOXES", "").split(","):
        from abstaingen.sandboxes.image import ensure_image

        ensure_image()


@pytest.fixture(scope="session")
def standin_server():
    """One stand-in OpenAI + Anthropic model server (tests/standin) for the whole session."""
    from standin import StandIn

    server = StandIn()
    yield server
    server.close()


@pytest.fixture
def standin(standin_server):
    """The session's stand-in model server, with no scripts, defaults or recorded requests."""
    standin_server.reset()
    yield standin_server


@pytest.fixture(scope="session")
def prefect_api(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """One Prefect server for the session's flow runs, as a user running `abstaingen ui` has: each run
    reports to it instead of starting a temporary server of its own (20-30 s apiece here), and tests
    can ask it how a run ended. Its PREFECT_API_URL."""
    import socket

    from abstaingen.flows.ui import start_server

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    home = tmp_path_factory.mktemp("prefect-home")
    with start_server("127.0.0.1", port, home) as server:
        server.wait_until_healthy()
        os.environ[TEST_PREFECT_API] = server.api_url  # for tests/prefect_runs.flow_env
        yield server.api_url
        os.environ.pop(TEST_PREFECT_API, None)


TEST_PREFECT_API = "ABSTAINGEN_TEST_PREFECT_API"

